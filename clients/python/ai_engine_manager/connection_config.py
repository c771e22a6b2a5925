"""How the client reaches a server: its URL, the token provider and the TLS and timeout settings.

:func:`~ai_engine_manager.login.login` builds one :class:`ConnectionConfig` for the engine
manager and shares it between all clients. Running engines hand out their own, pointing at the
engine's API (:meth:`~ai_engine_manager.dai_engine.dai_engine.DAIEngine.get_connection_config`),
so that other SDKs can connect with the same token and TLS settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["ConnectionConfig", "TokenProviderFunc"]

TokenProviderFunc = Callable[[], str]
"""Anything that returns a current access token when called, such as the providers in
:mod:`ai_engine_manager.auth.token_api_client`."""


@dataclass
class ConnectionConfig:
    """The settings for talking to one server.

    Example:
        >>> from ai_engine_manager.auth import StaticTokenProvider
        >>> config = ConnectionConfig(url="http://127.0.0.1:8080", token_provider=StaticTokenProvider("t"))
    """

    url: str
    """The server's base URL, without ``/v1``, for example ``"https://engines.example.com"``."""

    token_provider: TokenProviderFunc | None = None
    """Returns the bearer token to send with each request; ``None`` sends none."""

    verify_ssl: bool = True
    """Whether to check the server's TLS certificate. Turning it off sends the token to whoever
    answers; prefer ``ssl_ca_cert`` for servers with a private certificate authority."""

    ssl_ca_cert: str | None = None
    """A PEM file of certificate authorities to trust instead of the system's."""

    timeout_seconds: float | None = 60.0
    """How long to wait for the server to answer one request; ``None`` waits forever."""

    stream_timeout_seconds: float | None = 300.0
    """How long a stream of process output may stay silent before the client reconnects. The
    server sends keep-alive messages on quiet streams, so this only trips on broken connections."""
