"""H2O versions: the releases H2O engines can run, and their aliases."""

from ai_engine_manager.h2o_engine_version.client import H2OEngineVersionClient
from ai_engine_manager.h2o_engine_version.version import H2OEngineVersion
from ai_engine_manager.h2o_engine_version.page import H2OEngineVersionsPage

__all__ = ["H2OEngineVersionClient", "H2OEngineVersion", "H2OEngineVersionsPage"]
