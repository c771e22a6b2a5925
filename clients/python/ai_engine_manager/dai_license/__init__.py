"""The Driverless AI license metadata of the deployment."""

from ai_engine_manager.dai_license.client import DAILicenseClient
from ai_engine_manager.dai_license.metadata import DAILicenseMetadata

__all__ = ["DAILicenseClient", "DAILicenseMetadata"]
