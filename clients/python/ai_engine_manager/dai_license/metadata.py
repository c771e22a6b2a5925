"""What a Driverless AI license says about itself, as the official client's ``DAILicenseMetadata``."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

__all__ = ["DAILicenseMetadata", "dai_license_metadata_from_api"]


@dataclass
class DAILicenseMetadata:
    """The metadata of the deployment's Driverless AI license (all read-only)."""

    license_version: str = ""
    """Version of the license format."""
    serial_number: int = 0
    """Serial number of the license."""
    licensee_organization: str = ""
    """Organization the license was issued to."""
    licensee_email: str = ""
    """Email address of the licensee."""
    licensee_user_id: str = ""
    """User id of the licensee."""
    is_h2o_internal_use: bool = False
    """True for a license meant for H2O.ai's internal use."""
    created_by_email: str = ""
    """Email address of whoever created the license."""
    creation_date: datetime.date | None = None
    """When the license was created."""
    product: str = ""
    """Product the license is for, for example ``"DriverlessAI"``."""
    license_type: str = ""
    """Kind of license, for example ``"developer"``."""
    expiration_date: datetime.date | None = None
    """Last day the license is valid."""


def _date(value: Any) -> datetime.date | None:
    if not value:
        return None
    return datetime.date(int(value.get("year", 0)), int(value.get("month", 0)), int(value.get("day", 0)))


def dai_license_metadata_from_api(data: dict[str, Any]) -> DAILicenseMetadata:
    """Builds the metadata from its JSON form (``google.type.Date`` fields become ``date``)."""
    return DAILicenseMetadata(
        license_version=data.get("licenseVersion", ""),
        serial_number=int(data.get("serialNumber", 0)),
        licensee_organization=data.get("licenseeOrganization", ""),
        licensee_email=data.get("licenseeEmail", ""),
        licensee_user_id=data.get("licenseeUserId", ""),
        is_h2o_internal_use=bool(data.get("isH2oInternalUse", False)),
        created_by_email=data.get("createdByEmail", ""),
        creation_date=_date(data.get("creationDate")),
        product=data.get("product", ""),
        license_type=data.get("licenseType", ""),
        expiration_date=_date(data.get("expirationDate")),
    )
