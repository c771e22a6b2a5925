"""Sandbox engines: the client, the sandbox engine objects, pages, states and the image and template copies they keep."""

from ai_engine_manager.sandbox_engine.client import SandboxEngineClient
from ai_engine_manager.sandbox_engine.sandbox_engine import SandboxEngine
from ai_engine_manager.sandbox_engine.page import SandboxEnginesPage
from ai_engine_manager.sandbox_engine.state import SandboxEngineState
from ai_engine_manager.sandbox_engine.image_info import SandboxEngineImageInfo
from ai_engine_manager.sandbox_engine.template_info import SandboxEngineTemplateInfo

__all__ = ["SandboxEngineClient", "SandboxEngine", "SandboxEnginesPage", "SandboxEngineState", "SandboxEngineImageInfo", "SandboxEngineTemplateInfo"]
