"""Sandbox engine templates: the resources and idle limit of sandbox engines."""

from ai_engine_manager.sandbox_engine_template.client import SandboxEngineTemplateClient
from ai_engine_manager.sandbox_engine_template.template import SandboxEngineTemplate
from ai_engine_manager.sandbox_engine_template.page import SandboxEngineTemplatesPage

__all__ = ["SandboxEngineTemplateClient", "SandboxEngineTemplate", "SandboxEngineTemplatesPage"]
