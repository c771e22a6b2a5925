"""Copying files between a sandbox engine and a workspace's drive."""

from ai_engine_manager.drive.client import H2ODriveClient

__all__ = ["H2ODriveClient"]
