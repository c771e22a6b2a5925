"""Generates an engine id from a display name when the caller does not give one.

An engine id is the last segment of the engine's name: 1-63 lowercase letters, digits and
hyphens, starting with a letter and ending with a letter or digit. The generator derives a base
from the display name (``"My Engine #2"`` becomes ``"my-engine-2"``), uses it when no engine has
it yet, and otherwise tries the base with a random four-digit suffix (``"my-engine-2-4821"``).

Example:
    >>> sanitize_display_name("  1st Churn_Model! ")
    'st-churn-model'
    >>> generate_engine_id("Churn model", "dai", exists=lambda engine_id: False)
    'churn-model'
"""

from __future__ import annotations

import random
import re
from typing import Callable

__all__ = ["generate_engine_id", "sanitize_display_name", "MAX_BASE_LENGTH", "SUFFIXED_ATTEMPTS"]

MAX_BASE_LENGTH = 58
"""The longest base taken from a display name: with ``-NNNN`` appended it is still 63 characters."""

SUFFIXED_ATTEMPTS = 49
"""How many random suffixes are tried after the bare base is taken."""

_INVALID = re.compile(r"[^a-z0-9-]")
_LEADING_NON_LETTERS = re.compile(r"^[^a-z]+")


def sanitize_display_name(display_name: str) -> str:
    """Turns a display name into the base of an engine id.

    The name is lowercased; whitespace and underscores become hyphens; everything but letters,
    digits and hyphens is removed; leading characters up to the first letter are dropped; the
    result is cut to :data:`MAX_BASE_LENGTH` characters and trailing hyphens are removed.

    Args:
        display_name: The engine's display name; may be empty.

    Returns:
        The base, or ``""`` when nothing usable is left.
    """
    text = re.sub(r"[\s_]", "-", (display_name or "").lower())
    text = _INVALID.sub("", text)
    text = _LEADING_NON_LETTERS.sub("", text)
    return text[:MAX_BASE_LENGTH].rstrip("-")


def generate_engine_id(
    display_name: str,
    engine_type: str,
    exists: Callable[[str], bool],
    rng: random.Random | None = None,
) -> str:
    """Returns an engine id derived from a display name that no engine uses yet.

    Args:
        display_name: The engine's display name. When nothing usable is left of it, the base is
            ``new-<engine_type>-engine``.
        engine_type: A short name of the engine kind for the fallback base, for example
            ``"dai"``, ``"h2o"``, ``"notebook"`` or ``"sandbox"``.
        exists: Tells whether an engine with a given id exists already; the clients answer it
            by getting the engine and treating NOT_FOUND as free.
        rng: The random number source for suffixes (tests pass a seeded one).

    Returns:
        The bare base when it is free, otherwise the base with a random suffix between
        ``-1000`` and ``-9999``.

    Raises:
        ValueError: when the base and :data:`SUFFIXED_ATTEMPTS` suffixed ids are all taken.
    """
    base = sanitize_display_name(display_name) or f"new-{engine_type}-engine"
    if not exists(base):
        return base
    rng = rng or random.Random()
    for _ in range(SUFFIXED_ATTEMPTS):
        candidate = f"{base}-{rng.randint(1000, 9999)}"
        if not exists(candidate):
            return candidate
    raise ValueError(
        f"could not generate a free engine id from {display_name!r} after {SUFFIXED_ATTEMPTS + 1} attempts; "
        "pass an engine id"
    )
