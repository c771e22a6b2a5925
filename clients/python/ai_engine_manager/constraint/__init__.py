"""Profile constraints: the bounds and defaults a profile sets on engine sizes and durations."""

from ai_engine_manager.constraint.profile_constraint_numeric import ProfileConstraintNumeric
from ai_engine_manager.constraint.profile_constraint_duration import ProfileConstraintDuration

__all__ = ["ProfileConstraintNumeric", "ProfileConstraintDuration"]
