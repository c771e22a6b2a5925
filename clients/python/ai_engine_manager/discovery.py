"""H2O Cloud discovery: from an environment's URL to the engine manager's URL, the identity
provider and the platform client, as the official client finds them.

An environment serves read-only records under ``<environment>/.ai.h2o.cloud.discovery/v1/``;
our server serves its own. Where the environment comes from, first match wins: the
``environment`` argument, ``H2O_CLOUD_DISCOVERY`` (the discovery URL itself),
``H2O_CLOUD_ENVIRONMENT``, then ``Endpoint`` in the H2O CLI configuration file (the
``config_path`` argument, ``H2OCONFIG``, or ``~/.h2oai/h2o-cli-config.toml`` when it exists).
The platform refresh token comes from ``H2O_CLOUD_CLIENT_PLATFORM_TOKEN``, or from the file's
``PlatformToken`` when the file's ``Endpoint`` is the environment discovered.
"""

from __future__ import annotations

import os
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from ai_engine_manager._http import USER_AGENT
from ai_engine_manager.auth.token_api_client import _fetch_json

__all__ = ["Discovery", "discover", "ENGINE_MANAGER_SERVICE", "PLATFORM_CLIENT"]

ENGINE_MANAGER_SERVICE = "engine-manager"
"""The name the engine manager is registered under (``services/engine-manager``)."""

PLATFORM_CLIENT = "platform"
"""The OAuth client that platform tokens belong to (``clients/platform``)."""

_WELL_KNOWN = ".ai.h2o.cloud.discovery"
_DEFAULT_CONFIG = "~/.h2oai/h2o-cli-config.toml"


@dataclass(frozen=True)
class Discovery:
    """What an environment's discovery records say, with the tokens found for its clients."""

    environment: str
    """The environment's base URL, as the environment names itself."""

    issuer_url: str
    """The identity provider that issues the environment's tokens."""

    services: dict[str, str] = field(default_factory=dict)
    """Service URL by name (``engine-manager`` -> ``https://...``)."""

    clients: dict[str, str] = field(default_factory=dict)
    """OAuth client id by client name (``platform`` -> ``...``)."""

    tokens: dict[str, str] = field(default_factory=dict, repr=False)
    """Refresh token by client name, from the environment variables or the CLI configuration."""


@dataclass(frozen=True)
class _CliConfig:
    endpoint: str | None = None
    tokens: dict[str, str] = field(default_factory=dict, repr=False)
    """Refresh token by OAuth client id."""


def discover(
    environment: str | None = None,
    config_path: str | None = None,
    *,
    context: Any = None,
    timeout_seconds: float | None = 10.0,
) -> Discovery:
    """Reads an environment's discovery records.

    Raises:
        LookupError: when no environment is given or configured.
        FileNotFoundError: when ``config_path`` names a file that does not exist.
        ApiConnectionException: when the discovery records cannot be reached.
        CustomApiException: when the environment answers with an error.
    """
    config = _load_config(_config_path(config_path))
    base = _discovery_url(environment, config.endpoint)

    def get(path: str) -> dict[str, Any]:
        request = urllib.request.Request(f"{base}/v1/{path}", headers={"Accept": "application/json", "User-Agent": USER_AGENT})
        return _fetch_json(request, context, timeout_seconds or 10.0)

    def every(collection: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        token = ""
        while True:
            page = get(collection + (f"?pageToken={urllib.parse.quote(token)}" if token else ""))
            items.extend(i for i in page.get(collection) or [] if isinstance(i, dict))
            token = str(page.get("nextPageToken") or "")
            if not token:
                return items

    env = get("environment").get("environment") or {}
    services = {_short(s.get("name")): str(s.get("uri") or "") for s in every("services")}
    clients = {_short(c.get("name")): str(c.get("oauth2ClientId") or "") for c in every("clients")}
    environment_url = str(env.get("h2oCloudEnvironment") or "")
    matches = bool(config.endpoint) and environment_url.rstrip("/") == str(config.endpoint).rstrip("/")
    tokens: dict[str, str] = {}
    for name, client_id in clients.items():
        token = os.environ.get(f"H2O_CLOUD_CLIENT_{name.upper()}_TOKEN") or (config.tokens.get(client_id) if matches else None)
        if token:
            tokens[name] = token
    return Discovery(
        environment=environment_url,
        issuer_url=str(env.get("issuerUrl") or ""),
        services=services,
        clients=clients,
        tokens=tokens,
    )


def _short(name: Any) -> str:
    """``services/engine-manager`` -> ``engine-manager``."""
    return str(name or "").rsplit("/", 1)[-1]


def _discovery_url(environment: str | None, config_endpoint: str | None) -> str:
    if environment:
        return urllib.parse.urljoin(environment.rstrip("/") + "/", _WELL_KNOWN)
    direct = os.environ.get("H2O_CLOUD_DISCOVERY")
    if direct:
        return direct.rstrip("/")
    for candidate in (os.environ.get("H2O_CLOUD_ENVIRONMENT"), config_endpoint):
        if candidate:
            return urllib.parse.urljoin(candidate.rstrip("/") + "/", _WELL_KNOWN)
    raise LookupError(
        "no environment to discover: pass environment='https://...', set H2O_CLOUD_ENVIRONMENT, "
        "or configure the H2O CLI (~/.h2oai/h2o-cli-config.toml)"
    )


def _config_path(given: str | None) -> str | None:
    if given is not None:
        return os.fspath(given)
    from_env = os.environ.get("H2OCONFIG")
    if from_env:
        return from_env
    default = os.path.expanduser(_DEFAULT_CONFIG)
    return default if os.path.isfile(default) else None


def _load_config(path: str | None) -> _CliConfig:
    if not path:
        return _CliConfig()
    try:
        import tomllib
    except ImportError:  # Python 3.10: the standard library reads TOML from 3.11 on.
        raise RuntimeError(f"reading {path} needs Python 3.11 or later; pass environment= and platform_token= instead") from None
    with open(path, "rb") as f:
        data = tomllib.load(f)
    tokens: dict[str, str] = {}
    for id_key, token_key in (("ClientID", "Token"), ("PlatformClientID", "PlatformToken")):
        client_id, token = data.get(id_key), data.get(token_key)
        if isinstance(client_id, str) and isinstance(token, str):
            tokens[client_id] = token
    endpoint = data.get("Endpoint")
    return _CliConfig(endpoint=endpoint if isinstance(endpoint, str) else None, tokens=tokens)
