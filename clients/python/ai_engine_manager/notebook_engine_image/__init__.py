"""Notebook engine images: the container images notebook engines run."""

from ai_engine_manager.notebook_engine_image.client import NotebookEngineImageClient
from ai_engine_manager.notebook_engine_image.image import NotebookEngineImage
from ai_engine_manager.notebook_engine_image.page import NotebookEngineImagesPage

__all__ = ["NotebookEngineImageClient", "NotebookEngineImage", "NotebookEngineImagesPage"]
