"""Convertors between the client's human-friendly values and the API's wire values.

- :mod:`ai_engine_manager.convert.duration_convertor`: ``"2h"`` <-> ``"7200s"``.
- :mod:`ai_engine_manager.convert.quantity_convertor`: ``"16Gi"`` <-> ``"17179869184"``.
"""

from ai_engine_manager.convert.duration_convertor import (
    duration_to_seconds,
    parse_duration,
    seconds_to_duration,
)
from ai_engine_manager.convert.quantity_convertor import (
    number_str_to_quantity,
    parse_quantity,
    quantity_to_number_str,
)

__all__ = [
    "duration_to_seconds",
    "seconds_to_duration",
    "parse_duration",
    "quantity_to_number_str",
    "number_str_to_quantity",
    "parse_quantity",
]
