"""Token providers: where the client gets the bearer token it sends with every request.

- :class:`StaticTokenProvider` hands out one fixed token, such as a platform token or one printed
  by ``npm run -s token -- --user alice``.
- :class:`RefreshTokenProvider` exchanges an OpenID Connect refresh token for access tokens at the
  identity provider's token endpoint (through :class:`TokenApiClient`) and gets a new one shortly
  before the current one expires, or when the server has rejected it.

A token provider is any callable that returns the current access token, so a function works too.

Example:
    >>> provider = RefreshTokenProvider(
    ...     refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    ...     issuer_url="https://login.example.com/realms/analytics",
    ...     client_id="ai-engine-manager",
    ... )
    >>> clients = login(url="https://engines.example.com", token_provider=provider)
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable

from ai_engine_manager._http import TRANSPORT_ERRORS, USER_AGENT, ssl_context
from ai_engine_manager.exception import ApiConnectionException, CustomApiException

__all__ = ["StaticTokenProvider", "RefreshTokenProvider", "TokenApiClient", "TokenResponse"]


class StaticTokenProvider:
    """Hands out one fixed token.

    Tokens minted by the server's own signing key last 24 hours unless minted with another
    ``--ttl``; when one expires, calls fail with ``401 (Unauthorized)``.
    """

    def __init__(self, token: str) -> None:
        """Creates the provider.

        Args:
            token: The bearer token, without the ``Bearer`` prefix.

        Raises:
            ValueError: when the token is empty.
        """
        token = (token or "").strip()
        if token.lower().startswith("bearer "):
            token = token[7:].strip()
        if not token:
            raise ValueError("the token is empty")
        self._token = token

    def __call__(self) -> str:
        """Returns the token."""
        return self._token

    def __repr__(self) -> str:
        return "StaticTokenProvider(token=***)"


@dataclass
class TokenResponse:
    """The answer of a token endpoint to a refresh-token grant."""

    access_token: str
    """The new access token."""

    expires_in: float | None
    """Seconds until the access token expires, when the endpoint said."""

    refresh_token: str | None
    """A new refresh token, when the endpoint rotates them; it replaces the old one."""


class TokenApiClient:
    """Talks to an OpenID Connect identity provider's token endpoint."""

    def __init__(
        self,
        token_endpoint: str,
        client_id: str,
        client_secret: str | None = None,
        verify_ssl: bool = True,
        ssl_ca_cert: str | None = None,
        timeout_seconds: float = 30.0,
    ) -> None:
        """Creates the client.

        Args:
            token_endpoint: The token endpoint URL, for example
                ``https://login.example.com/realms/analytics/protocol/openid-connect/token``.
            client_id: The OAuth client id the refresh token was issued to.
            client_secret: The client's secret, for confidential clients.
            verify_ssl: Whether to check the endpoint's TLS certificate.
            ssl_ca_cert: A PEM file of certificate authorities to trust.
            timeout_seconds: How long to wait for the endpoint.
        """
        self.token_endpoint = token_endpoint
        self.client_id = client_id
        self.client_secret = client_secret
        self._context = ssl_context(verify_ssl, ssl_ca_cert) if token_endpoint.startswith("https:") else None
        self._timeout = timeout_seconds

    @staticmethod
    def discover_token_endpoint(
        issuer_url: str,
        verify_ssl: bool = True,
        ssl_ca_cert: str | None = None,
        timeout_seconds: float = 30.0,
    ) -> str:
        """Reads an issuer's token endpoint from its OpenID Connect discovery document.

        Args:
            issuer_url: The issuer, for example ``https://login.example.com/realms/analytics``.
            verify_ssl: Whether to check the issuer's TLS certificate.
            ssl_ca_cert: A PEM file of certificate authorities to trust.
            timeout_seconds: How long to wait for the issuer.

        Returns:
            The ``token_endpoint`` of ``<issuer>/.well-known/openid-configuration``.

        Raises:
            CustomApiException: when the issuer answers with an error or without a token endpoint.
            ApiConnectionException: when the issuer cannot be reached.
        """
        url = issuer_url.rstrip("/") + "/.well-known/openid-configuration"
        context = ssl_context(verify_ssl, ssl_ca_cert) if url.startswith("https:") else None
        document = _fetch_json(urllib.request.Request(url, headers={"User-Agent": USER_AGENT}), context, timeout_seconds)
        endpoint = document.get("token_endpoint")
        if not isinstance(endpoint, str) or not endpoint:
            raise CustomApiException(status=502, message=f"{url} names no token_endpoint")
        return endpoint

    def refresh(self, refresh_token: str, scope: str | None = None) -> TokenResponse:
        """Exchanges a refresh token for a new access token.

        Args:
            refresh_token: The refresh token.
            scope: The scopes to ask for, space-separated; the endpoint's default when ``None``.

        Returns:
            The new access token, when it expires and the rotated refresh token, if any.

        Raises:
            CustomApiException: when the endpoint refuses the grant, for example with
                ``invalid_grant`` for an expired or revoked refresh token.
            ApiConnectionException: when the endpoint cannot be reached.
        """
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": self.client_id}
        if self.client_secret:
            form["client_secret"] = self.client_secret
        if scope:
            form["scope"] = scope
        request = urllib.request.Request(
            self.token_endpoint,
            data=urllib.parse.urlencode(form).encode("ascii"),
            method="POST",
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
                "User-Agent": USER_AGENT,
            },
        )
        answer = _fetch_json(request, self._context, self._timeout)
        access_token = answer.get("access_token")
        if not isinstance(access_token, str) or not access_token:
            raise CustomApiException(status=502, message="the token endpoint returned no access_token")
        expires_in = answer.get("expires_in")
        rotated = answer.get("refresh_token")
        return TokenResponse(
            access_token=access_token,
            expires_in=float(expires_in) if isinstance(expires_in, (int, float, str)) and str(expires_in) else None,
            refresh_token=rotated if isinstance(rotated, str) and rotated else None,
        )


def _fetch_json(request: urllib.request.Request, context: Any, timeout: float) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            body = response.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        text = e.read().decode("utf-8", "replace")
        e.close()
        try:
            error = json.loads(text)
        except ValueError:
            error = {}
        if isinstance(error, dict) and "error" in error:
            message = f"{error.get('error')}: {error.get('error_description', '')}".rstrip(": ")
        else:
            message = text.strip() or str(e.reason)
        raise CustomApiException(status=e.code, message=f"{request.full_url}: {message}", body=text) from None
    except TRANSPORT_ERRORS as e:
        raise ApiConnectionException(f"{request.full_url}: {e}") from e
    try:
        value = json.loads(body)
    except ValueError:
        raise CustomApiException(status=502, message=f"{request.full_url} did not answer with JSON") from None
    if not isinstance(value, dict):
        raise CustomApiException(status=502, message=f"{request.full_url} did not answer with a JSON object")
    return value


def _jwt_expiry(token: str) -> float | None:
    """The ``exp`` claim of a JWT, in seconds since the epoch, without checking its signature."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        payload = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    exp = payload.get("exp") if isinstance(payload, dict) else None
    return float(exp) if isinstance(exp, (int, float)) else None


class RefreshTokenProvider:
    """Gets access tokens with an OpenID Connect refresh token and renews them before they expire.

    The first call exchanges the refresh token; later calls return the same access token until
    it is within ``expiry_margin_seconds`` of expiring. The expiry comes from the endpoint's
    ``expires_in``, or else from the token's own ``exp`` claim. Refresh tokens that the endpoint
    rotates are kept. It is safe to share one provider between threads.
    """

    def __init__(
        self,
        refresh_token: str,
        client_id: str,
        issuer_url: str | None = None,
        token_endpoint: str | None = None,
        client_secret: str | None = None,
        scope: str | None = None,
        expiry_margin_seconds: float = 30.0,
        verify_ssl: bool = True,
        ssl_ca_cert: str | None = None,
        timeout_seconds: float = 30.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Creates the provider; nothing is sent until the first token is needed.

        Args:
            refresh_token: The refresh token.
            client_id: The OAuth client id the refresh token was issued to.
            issuer_url: The OpenID Connect issuer, whose discovery document names the token
                endpoint. Give this or ``token_endpoint``.
            token_endpoint: The token endpoint URL, when known.
            client_secret: The client's secret, for confidential clients.
            scope: The scopes to ask for, space-separated.
            expiry_margin_seconds: How long before expiry a token is renewed.
            verify_ssl: Whether to check the identity provider's TLS certificate.
            ssl_ca_cert: A PEM file of certificate authorities to trust.
            timeout_seconds: How long to wait for the identity provider.
            clock: The time source, seconds since the epoch (tests replace it).

        Raises:
            ValueError: when neither ``issuer_url`` nor ``token_endpoint`` is given, or the
                refresh token is empty.
        """
        if not refresh_token:
            raise ValueError("the refresh token is empty")
        if not issuer_url and not token_endpoint:
            raise ValueError("give issuer_url or token_endpoint")
        self._refresh_token = refresh_token
        self._client_id = client_id
        self._client_secret = client_secret
        self._issuer_url = issuer_url
        self._token_endpoint = token_endpoint
        self._scope = scope
        self._margin = expiry_margin_seconds
        self._verify_ssl = verify_ssl
        self._ssl_ca_cert = ssl_ca_cert
        self._timeout = timeout_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._api: TokenApiClient | None = None
        self._access_token: str | None = None
        self._expires_at: float | None = None

    def __call__(self) -> str:
        """Returns a current access token, refreshing it first when needed.

        Raises:
            CustomApiException: when the token endpoint refuses the refresh token.
            ApiConnectionException: when the identity provider cannot be reached.
        """
        with self._lock:
            if self._access_token is not None and not self._expiring():
                return self._access_token
            return self._refresh()

    def invalidate(self) -> None:
        """Forgets the current access token, so the next call gets a new one. The client does
        this when the server rejects a token with 401."""
        with self._lock:
            self._access_token = None
            self._expires_at = None

    def _expiring(self) -> bool:
        return self._expires_at is not None and self._clock() >= self._expires_at - self._margin

    def _refresh(self) -> str:
        if self._api is None:
            endpoint = self._token_endpoint or TokenApiClient.discover_token_endpoint(
                self._issuer_url or "", self._verify_ssl, self._ssl_ca_cert, self._timeout
            )
            self._api = TokenApiClient(
                endpoint, self._client_id, self._client_secret, self._verify_ssl, self._ssl_ca_cert, self._timeout
            )
        now = self._clock()
        answer = self._api.refresh(self._refresh_token, self._scope)
        if answer.refresh_token:
            self._refresh_token = answer.refresh_token
        self._access_token = answer.access_token
        self._expires_at = now + answer.expires_in if answer.expires_in is not None else _jwt_expiry(answer.access_token)
        return answer.access_token

    def __repr__(self) -> str:
        return f"RefreshTokenProvider(client_id={self._client_id!r}, token_endpoint={self._token_endpoint or self._issuer_url!r})"
