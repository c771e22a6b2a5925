"""Generates engine ids from display names; see :mod:`ai_engine_manager.engine_id.generator`."""

from ai_engine_manager.engine_id.generator import generate_engine_id, sanitize_display_name

__all__ = ["generate_engine_id", "sanitize_display_name"]
