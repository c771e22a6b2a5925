"""Driverless AI engines: the client, the engine objects with their actions, pages and states."""

from ai_engine_manager.dai_engine.client import DAIEngineClient
from ai_engine_manager.dai_engine.dai_engine import DAIEngine
from ai_engine_manager.dai_engine.page import DAIEnginesPage
from ai_engine_manager.dai_engine.state import DAIEngineState

__all__ = ["DAIEngineClient", "DAIEngine", "DAIEnginesPage", "DAIEngineState"]
