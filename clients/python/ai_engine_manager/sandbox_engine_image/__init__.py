"""Sandbox engine images: the container images sandbox engines run."""

from ai_engine_manager.sandbox_engine_image.client import SandboxEngineImageClient
from ai_engine_manager.sandbox_engine_image.image import SandboxEngineImage
from ai_engine_manager.sandbox_engine_image.page import SandboxEngineImagesPage

__all__ = ["SandboxEngineImageClient", "SandboxEngineImage", "SandboxEngineImagesPage"]
