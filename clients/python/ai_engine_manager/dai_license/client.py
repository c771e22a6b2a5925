"""The client for the deployment's Driverless AI license metadata (``GET /v1/daiLicenseMetadata``).

Example:
    >>> clients.dai_license_client.get_dai_license_metadata() is None  # no license configured
    True
"""

from __future__ import annotations

from ai_engine_manager._client_base import ClientBase
from ai_engine_manager.dai_license.metadata import DAILicenseMetadata, dai_license_metadata_from_api

__all__ = ["DAILicenseClient"]


class DAILicenseClient(ClientBase):
    """Reads the metadata of the Driverless AI license the deployment is configured with."""

    def get_dai_license_metadata(self) -> DAILicenseMetadata | None:
        """Returns the configured Driverless AI license's metadata.

        Returns:
            The metadata, or ``None`` when the deployment has no Driverless AI license.

        Raises:
            CustomApiException: when the server rejects the call.
        """
        response = self._connection.call("enginemanager.v1.DAILicenseService.GetDAILicenseMetadata", {})
        metadata = response.get("daiLicenseMetadata")
        if not metadata:
            return None
        return dai_license_metadata_from_api(metadata)
