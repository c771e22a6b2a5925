"""Conversions between the API's JSON values and the client's Python values, used by the mappers.

The API's JSON follows the protobuf JSON mapping: int64 as decimal strings, bytes as base64,
``google.protobuf.Duration`` as ``"3600s"``, ``google.protobuf.Timestamp`` as RFC 3339 text and
enums by their full value name.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime
import enum
import re
from typing import Any, Callable, Iterable, TypeVar

from ai_engine_manager.convert.duration_convertor import duration_to_seconds, seconds_to_duration
from ai_engine_manager.convert.quantity_convertor import number_str_to_quantity, quantity_to_number_str

E = TypeVar("E", bound=enum.Enum)
T = TypeVar("T")

_TIMESTAMP = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$"
)


def string(value: Any) -> str:
    """A JSON string, or ``""`` when absent."""
    return "" if value is None else str(value)


def boolean(value: Any) -> bool:
    """A JSON boolean, or ``False`` when absent."""
    return bool(value) if value is not None else False


def integer(value: Any) -> int:
    """An int32 or int64 (decimal string) value, or 0 when absent."""
    return 0 if value is None else int(value)


def floating(value: Any) -> float:
    """A float or double value, or 0.0 when absent."""
    return 0.0 if value is None else float(value)


def optional_integer(value: Any) -> int | None:
    """An optional int32 or int64 value: ``None`` when absent."""
    return None if value is None else int(value)


def int64_to_api(value: int | None) -> str | None:
    """An int64 as the API's decimal string; ``None`` stays ``None``."""
    return None if value is None else str(int(value))


def quantity_from_api(value: Any) -> str | None:
    """A byte count as a quantity string such as ``"16Gi"``; ``None`` when absent."""
    return None if value is None else number_str_to_quantity(str(value))


def quantity_to_api(value: str | int | None) -> str | None:
    """A quantity (``"16Gi"`` or an int) as the API's decimal string; ``None`` stays ``None``."""
    return None if value is None else quantity_to_number_str(value)


def number_from_api(value: Any, quantity: bool) -> int | str | None:
    """An int64 read as a quantity string when ``quantity`` is true, as an int otherwise."""
    if value is None:
        return None
    return number_str_to_quantity(str(value)) if quantity else int(value)


def number_to_api(value: int | str | None) -> str | None:
    """An int64 given as an int or as a quantity string, as the API's decimal string."""
    return None if value is None else quantity_to_number_str(value)


def duration_from_api(value: Any) -> str | None:
    """A ``google.protobuf.Duration`` as a duration string such as ``"2h"``."""
    return None if value is None else seconds_to_duration(str(value))


def duration_to_api(value: str | int | datetime.timedelta | None) -> str | None:
    """A duration string, a number of seconds or a timedelta, as the API's ``"7200s"``."""
    return None if value is None else duration_to_seconds(value)


def time_from_api(value: Any) -> datetime.datetime | None:
    """An RFC 3339 timestamp as an aware :class:`datetime.datetime` (microsecond precision)."""
    if value is None or value == "":
        return None
    match = _TIMESTAMP.match(str(value))
    if not match:
        raise ValueError(f"invalid timestamp {value!r}")
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    micros = int((match.group(7) or "0")[:6].ljust(6, "0"))
    zone = match.group(8)
    if zone in ("Z", "z"):
        tz = datetime.timezone.utc
    else:
        sign = 1 if zone[0] == "+" else -1
        tz = datetime.timezone(sign * datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
    return datetime.datetime(year, month, day, hour, minute, second, micros, tzinfo=tz)


def time_to_api(value: datetime.datetime | None) -> str | None:
    """A datetime as RFC 3339 text in UTC; a naive datetime is taken as UTC."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return value.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def enum_from_api(cls: type[E], value: Any) -> E:
    """An enum value by its full name; absent or unknown values (from a newer server) read as
    the zero value."""
    if isinstance(value, str) and value in cls.__members__:
        return cls[value]
    return next(iter(cls))


def enum_to_api(cls: type[E], value: E | str | None) -> str | None:
    """An enum value, or its name as a string, as the API's full value name."""
    if value is None:
        return None
    if isinstance(value, cls):
        return value.name
    if isinstance(value, str) and value in cls.__members__:
        return value
    raise ValueError(f"{value!r} is not a {cls.__name__}; use one of {', '.join(cls.__members__)}")


def bytes_from_api(value: Any) -> bytes:
    """Base64 (standard or URL-safe) as bytes; ``b""`` when absent."""
    if not value:
        return b""
    text = str(value)
    padded = text + "=" * (-len(text) % 4)
    try:
        if "-" in text or "_" in text:
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ValueError(f"invalid base64 value from the server: {e}") from None


def bytes_to_api(value: bytes | bytearray | str | None) -> str | None:
    """Bytes (or text, encoded as UTF-8) as standard base64."""
    if value is None:
        return None
    if isinstance(value, str):
        value = value.encode("utf-8")
    return base64.b64encode(bytes(value)).decode("ascii")


def string_map(value: Any) -> dict[str, str]:
    """A ``map<string, string>``; an empty dict when absent."""
    return {str(k): str(v) for k, v in (value or {}).items()}


def string_list(value: Any) -> list[str]:
    """A ``repeated string``; an empty list when absent."""
    return [str(v) for v in (value or [])]


def field_mask_to_api(value: str | Iterable[str] | None) -> str | None:
    """An update mask, as a comma-separated string or a list of paths, in the API's form."""
    if value is None:
        return None
    if isinstance(value, str):
        return ",".join(p.strip() for p in value.split(",") if p.strip())
    return ",".join(str(p).strip() for p in value)


def optional(convert: Callable[[dict[str, Any]], T], value: Any) -> T | None:
    """A nested message converted with ``convert``, or ``None`` when absent."""
    return None if value is None else convert(value)


def drop_none(values: dict[str, Any]) -> dict[str, Any]:
    """The entries of a JSON object that are set."""
    return {k: v for k, v in values.items() if v is not None}


def config_to_create(config: Any, resource: str, cls: type[T]) -> tuple[T, str]:
    """The resource and id an ``apply_*_configs`` call creates for one configuration.

    A configuration is either a resource object whose ``name`` gives the id (its last segment, so
    ``workspaces/global/daiEngineProfiles/large`` and ``large`` both mean ``large``), or an object
    with a ``<resource>_id`` attribute and a ``to_<resource>()`` method, the shape of the official
    client's ``*Config`` classes.

    Args:
        config: The configuration.
        resource: The resource's snake name, for example ``dai_engine_profile``.
        cls: The resource's class.

    Returns:
        The resource to create, without a name, and its id (empty when it has none: the server
        then generates one where the API allows it, and rejects the call elsewhere).
    """
    if isinstance(config, cls):
        item, item_id = config, config.name.rsplit("/", 1)[-1]  # type: ignore[attr-defined]
    else:
        convert = getattr(config, f"to_{resource}", None)
        item_id = getattr(config, f"{resource}_id", None)
        if convert is None or item_id is None:
            raise TypeError(f"a {resource} configuration is a {cls.__name__} with a name, or has {resource}_id and to_{resource}(); got {type(config).__name__}")
        item = convert()
    return dataclasses.replace(item, name=""), item_id  # type: ignore[type-var]
