"""The read-only list that mixes Driverless AI, H2O and notebook engines."""

from ai_engine_manager.engine.client import EngineClient
from ai_engine_manager.engine.engine import Engine
from ai_engine_manager.engine.page import EnginesPage
from ai_engine_manager.engine.state import EngineState
from ai_engine_manager.engine.type import EngineType

__all__ = ["EngineClient", "Engine", "EnginesPage", "EngineState", "EngineType"]
