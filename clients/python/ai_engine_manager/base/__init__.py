"""Values shared by several resource kinds, such as :class:`~ai_engine_manager.base.image_pull_policy.ImagePullPolicy`."""

from ai_engine_manager.base.image_pull_policy import ImagePullPolicy

__all__ = ["ImagePullPolicy"]
