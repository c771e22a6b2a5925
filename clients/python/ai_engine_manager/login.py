"""Signing in: :func:`login` and :func:`login_custom` return a :class:`Clients` object.

:func:`login` takes an environment's URL and a platform token, as the official client does, and
finds the server and the identity provider through discovery; or, given ``url`` and ``token``,
takes the server's URL and a bearer token directly. :func:`login_custom` takes an OpenID Connect
refresh token and the identity provider to exchange it at.

Example:
    >>> import os
    >>> from ai_engine_manager import login
    >>> clients = login(environment="http://127.0.0.1:8080", platform_token=os.environ["AIEM_PLATFORM_TOKEN"])
    >>> page = clients.dai_engine_client.list_engines()
    >>> direct = login(url="http://127.0.0.1:8080", token=os.environ["AIEM_TOKEN"])
"""

from __future__ import annotations

from dataclasses import dataclass

from ai_engine_manager._http import Connection, ssl_context
from ai_engine_manager.auth.token_api_client import RefreshTokenProvider, StaticTokenProvider
from ai_engine_manager.connection_config import ConnectionConfig, TokenProviderFunc
from ai_engine_manager.dai_engine.client import DAIEngineClient
from ai_engine_manager.dai_engine_profile.client import DAIEngineProfileClient
from ai_engine_manager.dai_engine_version.client import DAIEngineVersionClient
from ai_engine_manager.dai_license.client import DAILicenseClient
from ai_engine_manager.discovery import ENGINE_MANAGER_SERVICE, PLATFORM_CLIENT, discover
from ai_engine_manager.drive.client import H2ODriveClient
from ai_engine_manager.engine.client import EngineClient
from ai_engine_manager.filesystem.client import FilesystemClient
from ai_engine_manager.h2o_engine.client import H2OEngineClient
from ai_engine_manager.h2o_engine_profile.client import H2OEngineProfileClient
from ai_engine_manager.h2o_engine_version.client import H2OEngineVersionClient
from ai_engine_manager.metrics.client import MetricsClient
from ai_engine_manager.notebook_engine.client import NotebookEngineClient
from ai_engine_manager.notebook_engine_image.client import NotebookEngineImageClient
from ai_engine_manager.notebook_engine_profile.client import NotebookEngineProfileClient
from ai_engine_manager.port.client import PortClient
from ai_engine_manager.process.client import ProcessClient
from ai_engine_manager.sandbox_engine.client import SandboxEngineClient
from ai_engine_manager.sandbox_engine_image.client import SandboxEngineImageClient
from ai_engine_manager.sandbox_engine_template.client import SandboxEngineTemplateClient
from ai_engine_manager.secret.client import SecretClient
from ai_engine_manager.secure_store.client import H2OSecureStoreClient

__all__ = ["login", "login_custom", "Clients", "SandboxClients", "DEFAULT_WORKSPACE"]

DEFAULT_WORKSPACE = "default"
"""The workspace used when a call names none, unless ``login(default_workspace_id=...)`` says
otherwise."""


@dataclass
class SandboxClients:
    """The clients of what runs inside sandbox engines, as the official client groups them
    (``clients.sandbox_clients.process_client``). The same objects are also attributes of
    :class:`Clients` itself."""

    filesystem_client: FilesystemClient
    """Files inside sandbox engines."""

    h2o_drive_client: H2ODriveClient
    """Copies between sandbox engines and workspace drives."""

    h2o_secure_store_client: H2OSecureStoreClient
    """Secrets revealed into sandbox engine files."""

    metrics_client: MetricsClient
    """Memory, disk and CPU use of sandbox engines."""

    port_client: PortClient
    """Ports of sandbox engines."""

    process_client: ProcessClient
    """Processes inside sandbox engines."""


@dataclass
class Clients:
    """One client per resource kind, all sharing one connection to the server."""

    dai_engine_client: DAIEngineClient
    """Driverless AI engines."""

    dai_engine_profile_client: DAIEngineProfileClient
    """Driverless AI engine profiles."""

    dai_engine_version_client: DAIEngineVersionClient
    """Driverless AI versions and their aliases."""

    h2o_engine_client: H2OEngineClient
    """H2O engines and size recommendations."""

    h2o_engine_profile_client: H2OEngineProfileClient
    """H2O engine profiles."""

    h2o_engine_version_client: H2OEngineVersionClient
    """H2O versions and their aliases."""

    notebook_engine_client: NotebookEngineClient
    """Notebook engines."""

    notebook_engine_image_client: NotebookEngineImageClient
    """Notebook engine images."""

    notebook_engine_profile_client: NotebookEngineProfileClient
    """Notebook engine profiles."""

    sandbox_engine_client: SandboxEngineClient
    """Sandbox engines."""

    sandbox_engine_image_client: SandboxEngineImageClient
    """Sandbox engine images."""

    sandbox_engine_template_client: SandboxEngineTemplateClient
    """Sandbox engine templates."""

    engine_client: EngineClient
    """The read-only list that mixes Driverless AI, H2O and notebook engines."""

    filesystem_client: FilesystemClient
    """Files inside sandbox engines."""

    process_client: ProcessClient
    """Processes inside sandbox engines."""

    port_client: PortClient
    """Ports of sandbox engines."""

    h2o_drive_client: H2ODriveClient
    """Copies between sandbox engines and workspace drives."""

    h2o_secure_store_client: H2OSecureStoreClient
    """Secrets revealed into sandbox engine files."""

    metrics_client: MetricsClient
    """Memory, disk and CPU use of sandbox engines."""

    secret_client: SecretClient
    """Secrets and their versions."""

    dai_license_client: DAILicenseClient
    """The deployment's Driverless AI license metadata."""

    sandbox_clients: SandboxClients
    """The sandbox clients grouped as the official client groups them (the same objects as the
    attributes above)."""

    connection_config: ConnectionConfig
    """The server's URL and the token and TLS settings all clients use."""


def login(
    environment: str | None = None,
    token_provider: TokenProviderFunc | None = None,
    platform_token: str | None = None,
    default_workspace_id: str = DEFAULT_WORKSPACE,
    config_path: str | None = None,
    verify_ssl: bool = True,
    ssl_ca_cert: str | None = None,
    *,
    url: str | None = None,
    token: str | None = None,
    timeout_seconds: float | None = 60.0,
    poll_interval_seconds: float | None = None,
) -> Clients:
    """Signs in to an engine manager server and returns its clients.

    Two ways, told apart by ``url``/``token``:

    - As the official client does: ``environment`` (or the H2O CLI configuration and environment
      variables, see :mod:`ai_engine_manager.discovery`) is read through H2O Cloud discovery,
      which names the engine manager's URL, the identity provider and the platform client; the
      ``platform_token`` (a refresh token, found in the CLI configuration when not given) is
      exchanged there for access tokens, or ``token_provider`` gives them. The token is tried
      once before this returns.
    - Directly: ``url`` is the server and ``token`` a bearer token (or ``token_provider`` gives
      them); nothing is sent until a client's first call.

    Args:
        environment: The environment's URL, for example ``"http://127.0.0.1:8080"`` for our
            server, which serves its own discovery records.
        token_provider: A callable that returns a current access token on every call, such as
            a :class:`~ai_engine_manager.auth.token_api_client.RefreshTokenProvider`.
        platform_token: A platform refresh token, such as one printed by
            ``npm run -s token -- --user alice --refresh``.
        default_workspace_id: The workspace of calls that name none.
        config_path: The H2O CLI configuration file, instead of ``H2OCONFIG`` or
            ``~/.h2oai/h2o-cli-config.toml``.
        verify_ssl: Whether to check TLS certificates. Turning it off sends the token to
            whoever answers; prefer ``ssl_ca_cert``.
        ssl_ca_cert: A PEM file of certificate authorities to trust, for servers with a
            private certificate authority.
        url: The server's base URL, without ``/v1``; skips discovery.
        token: A bearer token, such as one printed by ``npm run -s token -- --user alice``.
        timeout_seconds: How long to wait for the server to answer one request.
        poll_interval_seconds: How often ``wait()`` asks the server for news; by default a
            fiftieth of a second at first, doubling up to five seconds.

    Returns:
        The clients.

    Raises:
        ValueError: when the arguments do not name one way to get a token.
        LookupError: when there is no environment to discover, or it lacks the engine manager.
        CustomApiException, ApiConnectionException: when discovery or the token exchange fails.
    """
    if url is not None or token is not None:
        return _login_direct(url or environment, token, token_provider, platform_token, default_workspace_id,
                             verify_ssl, ssl_ca_cert, timeout_seconds, poll_interval_seconds)
    context = ssl_context(verify_ssl, ssl_ca_cert)
    found = discover(environment, config_path, context=context, timeout_seconds=timeout_seconds)
    address = found.services.get(ENGINE_MANAGER_SERVICE)
    if not address:
        raise LookupError(f"the environment {found.environment or environment} has no {ENGINE_MANAGER_SERVICE} service")
    if token_provider is None:
        refresh_token = platform_token or found.tokens.get(PLATFORM_CLIENT)
        if not refresh_token:
            raise ValueError("give platform_token (or token_provider), or configure the H2O CLI with a platform token")
        client_id = found.clients.get(PLATFORM_CLIENT)
        if not client_id:
            raise LookupError(f"the environment {found.environment or environment} names no {PLATFORM_CLIENT} client to exchange the platform token with")
        token_provider = RefreshTokenProvider(
            refresh_token=refresh_token,
            client_id=client_id,
            issuer_url=found.issuer_url,
            verify_ssl=verify_ssl,
            ssl_ca_cert=ssl_ca_cert,
        )
    # As the official client does: a bad token fails here, not at the first call.
    token_provider()
    config = ConnectionConfig(
        url=address,
        token_provider=token_provider,
        verify_ssl=verify_ssl,
        ssl_ca_cert=ssl_ca_cert,
        timeout_seconds=timeout_seconds,
    )
    return _clients(config, default_workspace_id, poll_interval_seconds)


def _login_direct(
    address: str | None,
    token: str | None,
    token_provider: TokenProviderFunc | None,
    platform_token: str | None,
    default_workspace_id: str,
    verify_ssl: bool,
    ssl_ca_cert: str | None,
    timeout_seconds: float | None,
    poll_interval_seconds: float | None,
) -> Clients:
    if not address:
        raise ValueError("give the server's URL, for example login(url='http://127.0.0.1:8080', token=...)")
    if platform_token is not None:
        raise ValueError("platform_token is a refresh token exchanged through discovery: use login(environment=..., platform_token=...), without url or token")
    if (token is None) == (token_provider is None):
        raise ValueError("give exactly one of token and token_provider")
    config = ConnectionConfig(
        url=address,
        token_provider=token_provider or StaticTokenProvider(token or ""),
        verify_ssl=verify_ssl,
        ssl_ca_cert=ssl_ca_cert,
        timeout_seconds=timeout_seconds,
    )
    return _clients(config, default_workspace_id, poll_interval_seconds)


def login_custom(
    endpoint: str,
    refresh_token: str,
    issuer_url: str | None = None,
    client_id: str = "",
    client_secret: str | None = None,
    default_workspace_id: str = DEFAULT_WORKSPACE,
    verify_ssl: bool = True,
    ssl_ca_cert: str | None = None,
    *,
    token_endpoint: str | None = None,
    timeout_seconds: float | None = 60.0,
    poll_interval_seconds: float | None = None,
) -> Clients:
    """Signs in with an OpenID Connect refresh token, for servers that trust an identity provider.

    The refresh token is exchanged at the identity provider for access tokens, which are renewed
    shortly before they expire.

    Args:
        endpoint: The server's base URL, without ``/v1``.
        refresh_token: The refresh token.
        issuer_url: The identity provider's issuer URL; its discovery document names the token
            endpoint.
        client_id: The OAuth client id the refresh token was issued to.
        client_secret: The client's secret, for confidential clients.
        default_workspace_id: The workspace of calls that name none.
        verify_ssl: Whether to check TLS certificates, of the server and of the identity
            provider.
        ssl_ca_cert: A PEM file of certificate authorities to trust.
        token_endpoint: The token endpoint, instead of discovering it from ``issuer_url``.
        timeout_seconds: How long to wait for one answer.
        poll_interval_seconds: How often ``wait()`` asks the server for news.

    Returns:
        The clients.

    Raises:
        ValueError: when neither ``issuer_url`` nor ``token_endpoint`` is given.
    """
    provider = RefreshTokenProvider(
        refresh_token=refresh_token,
        client_id=client_id,
        issuer_url=issuer_url,
        token_endpoint=token_endpoint,
        client_secret=client_secret,
        verify_ssl=verify_ssl,
        ssl_ca_cert=ssl_ca_cert,
    )
    return login(
        url=endpoint,
        token_provider=provider,
        default_workspace_id=default_workspace_id,
        verify_ssl=verify_ssl,
        ssl_ca_cert=ssl_ca_cert,
        timeout_seconds=timeout_seconds,
        poll_interval_seconds=poll_interval_seconds,
    )


def _clients(config: ConnectionConfig, workspace: str, poll: float | None) -> Clients:
    connection = Connection(config)

    def make(cls):  # type: ignore[no-untyped-def]
        return cls(connection, workspace, poll)

    filesystem_client = make(FilesystemClient)
    process_client = make(ProcessClient)
    port_client = make(PortClient)
    h2o_drive_client = make(H2ODriveClient)
    h2o_secure_store_client = make(H2OSecureStoreClient)
    metrics_client = make(MetricsClient)
    return Clients(
        dai_engine_client=make(DAIEngineClient),
        dai_engine_profile_client=make(DAIEngineProfileClient),
        dai_engine_version_client=make(DAIEngineVersionClient),
        h2o_engine_client=make(H2OEngineClient),
        h2o_engine_profile_client=make(H2OEngineProfileClient),
        h2o_engine_version_client=make(H2OEngineVersionClient),
        notebook_engine_client=make(NotebookEngineClient),
        notebook_engine_image_client=make(NotebookEngineImageClient),
        notebook_engine_profile_client=make(NotebookEngineProfileClient),
        sandbox_engine_client=make(SandboxEngineClient),
        sandbox_engine_image_client=make(SandboxEngineImageClient),
        sandbox_engine_template_client=make(SandboxEngineTemplateClient),
        engine_client=make(EngineClient),
        filesystem_client=filesystem_client,
        process_client=process_client,
        port_client=port_client,
        h2o_drive_client=h2o_drive_client,
        h2o_secure_store_client=h2o_secure_store_client,
        metrics_client=metrics_client,
        secret_client=make(SecretClient),
        dai_license_client=make(DAILicenseClient),
        sandbox_clients=SandboxClients(
            filesystem_client=filesystem_client,
            h2o_drive_client=h2o_drive_client,
            h2o_secure_store_client=h2o_secure_store_client,
            metrics_client=metrics_client,
            port_client=port_client,
            process_client=process_client,
        ),
        connection_config=config,
    )
