"""Converts between the client's duration strings (``"2h"``) and the API's seconds (``"7200s"``).

The client reads and writes durations as a whole number followed by one unit: ``s`` (seconds),
``m`` (minutes), ``h`` (hours) or ``d`` (days). The API carries them as
``google.protobuf.Duration`` JSON, a number of seconds followed by ``s``. Going back, the client
picks the largest unit that divides the value evenly, so ``"3600s"`` reads as ``"1h"`` and
``"5400s"`` as ``"90m"``.

Example:
    >>> duration_to_seconds("2h")
    '7200s'
    >>> seconds_to_duration("5400s")
    '90m'
"""

from __future__ import annotations

import datetime
import re

__all__ = ["duration_to_seconds", "seconds_to_duration", "parse_duration", "UNIT_SECONDS"]

UNIT_SECONDS: dict[str, int] = {"d": 86400, "h": 3600, "m": 60, "s": 1}
"""How many seconds each duration unit stands for, largest unit first."""

_DURATION = re.compile(r"^([0-9]+)([smhd])$")
_API_SECONDS = re.compile(r"^(-?)([0-9]+)(?:\.([0-9]{1,9}))?s$")


def parse_duration(duration: str | int | datetime.timedelta) -> int:
    """Returns the number of whole seconds of a duration.

    Args:
        duration: A duration string such as ``"90m"`` (a whole number and one unit of ``s``,
            ``m``, ``h`` or ``d``), a number of seconds as an ``int``, or a
            :class:`datetime.timedelta` of whole seconds.

    Returns:
        The duration in seconds.

    Raises:
        ValueError: when the duration is negative, not whole seconds, or not in one of the
            accepted forms (``"1.5h"``, ``"1h30m"`` and ``"2H"`` are rejected).
    """
    if isinstance(duration, bool):
        raise ValueError(f"invalid duration {duration!r}")
    if isinstance(duration, datetime.timedelta):
        if duration.microseconds or duration < datetime.timedelta(0):
            raise ValueError(f"duration {duration!r} must be a non-negative whole number of seconds")
        return duration.days * 86400 + duration.seconds
    if isinstance(duration, int):
        if duration < 0:
            raise ValueError(f"duration {duration!r} must not be negative")
        return duration
    if not isinstance(duration, str):
        raise ValueError(f"invalid duration {duration!r}")
    match = _DURATION.match(duration)
    if not match:
        raise ValueError(
            f"invalid duration {duration!r}: use a whole number followed by s, m, h or d, for example '90m'"
        )
    return int(match.group(1)) * UNIT_SECONDS[match.group(2)]


def duration_to_seconds(duration: str | int | datetime.timedelta) -> str:
    """Converts a duration to the API's form, seconds followed by ``s``.

    Args:
        duration: A duration string such as ``"2h"``, a number of seconds, or a
            :class:`datetime.timedelta`; see :func:`parse_duration`.

    Returns:
        The duration as the API writes it, for example ``"7200s"``.

    Raises:
        ValueError: when the duration is not in an accepted form.
    """
    return f"{parse_duration(duration)}s"


def seconds_to_duration(seconds: str | int | float) -> str:
    """Converts a duration from the API's form to the client's, in the largest even unit.

    Args:
        seconds: The API's duration, such as ``"5400s"`` or ``"12.5s"``, or a number of seconds.
            A fraction of a second is dropped.

    Returns:
        The duration in the largest unit of ``d``, ``h``, ``m`` and ``s`` that divides it
        evenly, for example ``"90m"`` for 5400 seconds, ``"1d"`` for 86400 and ``"0s"`` for 0.

    Raises:
        ValueError: when ``seconds`` is negative or not a duration.
    """
    if isinstance(seconds, bool):
        raise ValueError(f"invalid duration {seconds!r}")
    if isinstance(seconds, (int, float)):
        if seconds < 0:
            raise ValueError(f"duration {seconds!r} must not be negative")
        whole = int(seconds)
    else:
        match = _API_SECONDS.match(seconds.strip()) if isinstance(seconds, str) else None
        if not match or match.group(1):
            raise ValueError(f"invalid API duration {seconds!r}: expected seconds such as '3600s'")
        whole = int(match.group(2))
    if whole == 0:
        return "0s"
    for unit, size in UNIT_SECONDS.items():
        if whole % size == 0:
            return f"{whole // size}{unit}"
    return f"{whole}s"  # unreachable: every whole number is divisible by 1
