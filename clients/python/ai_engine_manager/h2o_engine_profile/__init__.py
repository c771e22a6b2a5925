"""H2O engine profiles: the limits, defaults and settings of H2O engines."""

from ai_engine_manager.h2o_engine_profile.client import H2OEngineProfileClient
from ai_engine_manager.h2o_engine_profile.profile import H2OEngineProfile
from ai_engine_manager.h2o_engine_profile.page import H2OEngineProfilesPage

__all__ = ["H2OEngineProfileClient", "H2OEngineProfile", "H2OEngineProfilesPage"]
