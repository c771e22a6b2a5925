"""H2O engines: the client, the engine objects with their actions, pages, states and size recommendations."""

from ai_engine_manager.h2o_engine.client import H2OEngineClient
from ai_engine_manager.h2o_engine.h2o_engine import H2OEngine
from ai_engine_manager.h2o_engine.page import H2OEnginesPage
from ai_engine_manager.h2o_engine.state import H2OEngineState
from ai_engine_manager.h2o_engine.size import H2OEngineSize, H2OEngineSizeLimits

__all__ = ["H2OEngineClient", "H2OEngine", "H2OEnginesPage", "H2OEngineState", "H2OEngineSize", "H2OEngineSizeLimits"]
