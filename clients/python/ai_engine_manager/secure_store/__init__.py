"""Placing secrets from the secure store into files of a sandbox engine."""

from ai_engine_manager.secure_store.client import H2OSecureStoreClient

__all__ = ["H2OSecureStoreClient"]
