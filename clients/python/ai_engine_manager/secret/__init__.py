"""Secrets of a workspace and their versions."""

from ai_engine_manager.secret.client import SecretClient
from ai_engine_manager.secret.secret import Secret
from ai_engine_manager.secret.version import SecretVersion
from ai_engine_manager.secret.page import SecretsPage, SecretVersionsPage

__all__ = ["SecretClient", "Secret", "SecretVersion", "SecretsPage", "SecretVersionsPage"]
