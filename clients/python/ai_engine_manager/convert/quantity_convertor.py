"""Converts between quantities with a unit (``"16Gi"``) and the API's byte counts (``"17179869184"``).

Sizes in bytes (memory, storage) are ``int64`` in the API, a decimal string in JSON. The client
reads and writes them as a whole number with an optional unit, binary (``Ki``, ``Mi``, ``Gi``,
``Ti``, ``Pi``: powers of 1024) or decimal (``k``, ``M``, ``G``, ``T``, ``P``: powers of 1000).
Going back, the client picks the first unit, in the order ``Pi, P, Ti, T, Gi, G, Mi, M, Ki, k``,
that divides the value evenly, and writes the bare number when none does.

Example:
    >>> quantity_to_number_str("16Gi")
    '17179869184'
    >>> number_str_to_quantity("17179869184")
    '16Gi'
    >>> number_str_to_quantity(1536)
    '1536'
"""

from __future__ import annotations

import re

__all__ = ["quantity_to_number_str", "number_str_to_quantity", "parse_quantity", "SUFFIXES"]

SUFFIXES: dict[str, int] = {
    "Pi": 1024**5,
    "P": 1000**5,
    "Ti": 1024**4,
    "T": 1000**4,
    "Gi": 1024**3,
    "G": 1000**3,
    "Mi": 1024**2,
    "M": 1000**2,
    "Ki": 1024,
    "k": 1000,
}
"""The units and how many bytes each stands for, in the order used to write quantities."""

_QUANTITY = re.compile(r"^([0-9]+)(Pi|P|Ti|T|Gi|Mi|Ki|G|M|k)?$")
_NUMBER = re.compile(r"^-?[0-9]+$")


def parse_quantity(quantity: str | int) -> int:
    """Returns the number of bytes a quantity stands for.

    Args:
        quantity: A whole number with an optional unit, such as ``"512Mi"``, ``"100G"`` or
            ``"1024"``, or an ``int`` number of bytes.

    Returns:
        The number of bytes.

    Raises:
        ValueError: when the quantity is negative, fractional (``"1.5Gi"``), or uses an unknown
            unit (``"1K"``, ``"1Ei"``, ``"1GB"``).
    """
    if isinstance(quantity, bool):
        raise ValueError(f"invalid quantity {quantity!r}")
    if isinstance(quantity, int):
        if quantity < 0:
            raise ValueError(f"quantity {quantity!r} must not be negative")
        return quantity
    if not isinstance(quantity, str):
        raise ValueError(f"invalid quantity {quantity!r}")
    match = _QUANTITY.match(quantity)
    if not match:
        raise ValueError(
            f"invalid quantity {quantity!r}: use a whole number with an optional unit "
            "(Ki, Mi, Gi, Ti, Pi, k, M, G, T, P), for example '16Gi'"
        )
    return int(match.group(1)) * SUFFIXES.get(match.group(2) or "", 1)


def quantity_to_number_str(quantity: str | int) -> str:
    """Converts a quantity to the API's form, a decimal number of bytes.

    Args:
        quantity: A quantity such as ``"16Gi"``, or an ``int`` number of bytes; see
            :func:`parse_quantity`.

    Returns:
        The number of bytes as a decimal string, for example ``"17179869184"``.

    Raises:
        ValueError: when the quantity is not in an accepted form.
    """
    return str(parse_quantity(quantity))


def number_str_to_quantity(number: str | int) -> str:
    """Converts a number of bytes from the API into a quantity with the first unit that fits.

    Args:
        number: The number of bytes, as the API's decimal string or an ``int``.

    Returns:
        The quantity, for example ``"16Gi"`` for 17179869184, ``"2000Ki"`` for 2048000 (binary
        units are tried before the decimal unit of the same size), ``"1536"`` when no unit divides
        the value evenly, and ``"0"`` for zero.

    Raises:
        ValueError: when ``number`` is not a non-negative whole number.
    """
    if isinstance(number, bool):
        raise ValueError(f"invalid number of bytes {number!r}")
    if isinstance(number, str):
        if not _NUMBER.match(number.strip()):
            raise ValueError(f"invalid number of bytes {number!r}")
        number = int(number.strip())
    if not isinstance(number, int) or number < 0:
        raise ValueError(f"invalid number of bytes {number!r}")
    if number == 0:
        return "0"
    for suffix, size in SUFFIXES.items():
        if number % size == 0:
            return f"{number // size}{suffix}"
    return str(number)
