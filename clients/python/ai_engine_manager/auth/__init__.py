"""Token providers: how the client gets the bearer token it sends; see :mod:`ai_engine_manager.auth.token_api_client`."""

from ai_engine_manager.auth.token_api_client import StaticTokenProvider, RefreshTokenProvider, TokenApiClient, TokenResponse

__all__ = ["StaticTokenProvider", "RefreshTokenProvider", "TokenApiClient", "TokenResponse"]
