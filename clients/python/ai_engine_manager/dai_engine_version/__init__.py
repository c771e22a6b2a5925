"""Driverless AI versions: the releases Driverless AI engines can run, and their aliases."""

from ai_engine_manager.dai_engine_version.client import DAIEngineVersionClient
from ai_engine_manager.dai_engine_version.version import DAIEngineVersion
from ai_engine_manager.dai_engine_version.page import DAIEngineVersionsPage

__all__ = ["DAIEngineVersionClient", "DAIEngineVersion", "DAIEngineVersionsPage"]
