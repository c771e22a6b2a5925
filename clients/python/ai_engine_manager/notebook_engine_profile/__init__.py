"""Notebook engine profiles: the limits, defaults and settings of notebook engines."""

from ai_engine_manager.notebook_engine_profile.client import NotebookEngineProfileClient
from ai_engine_manager.notebook_engine_profile.profile import NotebookEngineProfile
from ai_engine_manager.notebook_engine_profile.page import NotebookEngineProfilesPage

__all__ = ["NotebookEngineProfileClient", "NotebookEngineProfile", "NotebookEngineProfilesPage"]
