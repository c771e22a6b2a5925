"""Notebook engines: the client, the engine objects with their actions, pages, states and failure reasons."""

from ai_engine_manager.notebook_engine.client import NotebookEngineClient
from ai_engine_manager.notebook_engine.notebook_engine import NotebookEngine
from ai_engine_manager.notebook_engine.page import NotebookEnginesPage
from ai_engine_manager.notebook_engine.state import NotebookEngineState
from ai_engine_manager.notebook_engine.failure_reason import NotebookEngineFailureReason

__all__ = ["NotebookEngineClient", "NotebookEngine", "NotebookEnginesPage", "NotebookEngineState", "NotebookEngineFailureReason"]
