"""Driverless AI engine profiles: the limits, defaults and settings of Driverless AI engines."""

from ai_engine_manager.dai_engine_profile.client import DAIEngineProfileClient
from ai_engine_manager.dai_engine_profile.profile import DAIEngineProfile
from ai_engine_manager.dai_engine_profile.page import DAIEngineProfilesPage
from ai_engine_manager.dai_engine_profile.config_editability import ConfigEditability

__all__ = ["DAIEngineProfileClient", "DAIEngineProfile", "DAIEngineProfilesPage", "ConfigEditability"]
