"""The client's one HTTP layer: JSON over the REST ``/v1`` routes with ``urllib.request``.

A :class:`Connection` knows the server's base URL, gets a bearer token from the token provider
for every request, applies the timeout and TLS settings, turns error bodies into
:class:`~ai_engine_manager.exception.CustomApiException` and reads newline-delimited JSON
streams. :meth:`Connection.call` transcodes a request message into the method's HTTP rule (from
the generated :mod:`ai_engine_manager._routes`): path variables, then the body, then the query.
"""

from __future__ import annotations

import http.client
import io
import json
import os
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, BinaryIO, Iterator

from ai_engine_manager._routes import ROUTES, Route
from ai_engine_manager.connection_config import ConnectionConfig
from ai_engine_manager.exception import ApiConnectionException, CustomApiException

USER_AGENT = "ai-engine-manager-python"

# Errors that mean the connection broke (as opposed to the server answering with an error).
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (
    http.client.HTTPException,
    ConnectionError,
    socket.timeout,
    TimeoutError,
    urllib.error.URLError,
    OSError,
)


def ssl_context(verify_ssl: bool, ssl_ca_cert: str | None) -> ssl.SSLContext:
    """The TLS settings of a connection: the system's trust store, a given CA file, or none."""
    context = ssl.create_default_context(cafile=ssl_ca_cert) if ssl_ca_cert else ssl.create_default_context()
    if not verify_ssl:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context


def encode_query(query: dict[str, Any]) -> str:
    """Query parameters from a JSON object: nested objects as dotted names, lists repeated, maps
    as ``name[key]``. Unset and default values (``None``, ``""``, ``0``, ``False``) are left out,
    which the API reads the same as absent."""
    pairs: list[tuple[str, str]] = []

    def add(name: str, value: Any) -> None:
        if value is None or value == "" or value is False or (isinstance(value, int) and not isinstance(value, bool) and value == 0):
            return
        if isinstance(value, bool):
            pairs.append((name, "true"))
        elif isinstance(value, dict):
            for key, item in value.items():
                add(f"{name}.{key}", item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                pairs.append((name, _scalar(item)))
        else:
            pairs.append((name, _scalar(value)))

    for key, value in query.items():
        add(key, value)
    return urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _lookup(request: dict[str, Any], path: str) -> Any:
    value: Any = request
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def expand_path(route: Route, request: dict[str, Any]) -> tuple[str, set[str]]:
    """The URL path of a request and the top-level request fields the path took.

    Raises:
        ValueError: when a path variable is missing or does not have the shape the route needs,
            for example ``"default"`` where ``workspaces/default`` is expected.
    """
    out: list[str] = []
    used: set[str] = set()
    rest = route.path
    while rest:
        start = rest.find("{")
        if start < 0:
            out.append(rest)
            break
        out.append(rest[:start])
        end = rest.index("}", start)
        variable, _, pattern = rest[start + 1:end].partition("=")
        pattern = pattern or "*"
        value = _lookup(request, variable)
        if not isinstance(value, str) or not value:
            raise ValueError(f"{variable} is required, in the form {pattern}")
        segments = value.split("/")
        wanted = pattern.split("/")
        if "**" not in wanted and len(segments) != len(wanted):
            raise ValueError(f"{variable} must have the form {pattern}, got {value!r}")
        for want, got in zip(wanted, segments):
            if want == "**":
                break
            if not got or (want != "*" and want != got):
                raise ValueError(f"{variable} must have the form {pattern}, got {value!r}")
        out.append("/".join(urllib.parse.quote(s, safe="-._~") for s in segments))
        if "." not in variable:
            used.add(variable)
        rest = rest[end + 1:]
    return "".join(out), used


class Connection:
    """One server: base URL, token provider, timeout and TLS settings, shared by all clients."""

    def __init__(self, config: ConnectionConfig) -> None:
        """Creates the connection; nothing is sent until the first call.

        Args:
            config: Where the server is and how to authenticate.
        """
        self.config = config
        self.base_url = config.url.rstrip("/")
        self._ssl = ssl_context(config.verify_ssl, config.ssl_ca_cert) if self.base_url.startswith("https:") else None
        self._opener = urllib.request.build_opener(
            urllib.request.HTTPSHandler(context=self._ssl) if self._ssl else urllib.request.HTTPHandler()
        )

    # The token provider may cache; `fresh` asks it to get a new token after a 401.
    def _authorization(self, fresh: bool = False) -> str | None:
        provider = self.config.token_provider
        if provider is None:
            return None
        if fresh and hasattr(provider, "invalidate"):
            provider.invalidate()
        return f"Bearer {provider()}"

    def _open(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None,
        body: Any,
        timeout: float | None,
        accept: str,
        raw: BinaryIO | None = None,
    ) -> http.client.HTTPResponse:
        url = self.base_url + path
        encoded = encode_query(query or {})
        if encoded:
            url += "?" + encoded
        data: Any = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Accept": accept, "User-Agent": USER_AGENT}
        if data is not None:
            headers["Content-Type"] = "application/json"
        # A raw body is sent as it is read; it can be sent again after a 401 only if it can be
        # rewound.
        start: int | None = None
        if raw is not None:
            data = raw
            headers["Content-Type"] = "application/octet-stream"
            length = _remaining_length(raw)
            if length is not None:
                headers["Content-Length"] = str(length)
            start = raw.tell() if raw.seekable() else None
        refreshable = hasattr(self.config.token_provider, "invalidate") and (raw is None or start is not None)
        for attempt in (0, 1):
            authorization = self._authorization(fresh=attempt == 1)
            if authorization:
                headers["Authorization"] = authorization
            if attempt == 1 and raw is not None and start is not None:
                raw.seek(start)
            request = urllib.request.Request(url, data=data, method=method, headers=headers)
            try:
                return self._opener.open(request, timeout=timeout)  # type: ignore[no-any-return]
            except urllib.error.HTTPError as e:
                # A token that expired between the provider's check and the server's gets one retry.
                if e.code == 401 and attempt == 0 and refreshable:
                    e.close()
                    continue
                raise self._api_error(e) from None
            except TRANSPORT_ERRORS as e:
                raise ApiConnectionException(f"{method} {url}: {e}") from e
        raise AssertionError("unreachable")

    @staticmethod
    def _api_error(error: urllib.error.HTTPError) -> CustomApiException:
        try:
            text = error.read().decode("utf-8", "replace")
        except TRANSPORT_ERRORS:
            text = ""
        finally:
            error.close()
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and ("code" in parsed or "message" in parsed):
            exc = CustomApiException.from_status(parsed, http_status=error.code)
            exc.body = text
            exc.reason = error.reason if isinstance(error.reason, str) and error.reason else exc.reason
            return exc
        return CustomApiException(status=error.code, message=text.strip() or str(error.reason), body=text)

    def request(
        self,
        method: str,
        path: str,
        query: dict[str, Any] | None = None,
        body: Any = None,
        timeout: float | None = ...,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """Sends one request and returns the decoded JSON response body.

        Args:
            method: The HTTP method.
            path: The path below the base URL, starting with ``/``.
            query: Query parameters; see :func:`encode_query`.
            body: A JSON-serialisable body, or ``None`` for none.
            timeout: Seconds to wait for the server; ``None`` waits as long as it takes; the
                connection's timeout when not given.
        """
        if timeout is ...:
            timeout = self.config.timeout_seconds
        with self._open(method, path, query, body, timeout, "application/json") as response:
            try:
                text = response.read().decode("utf-8")
            except TRANSPORT_ERRORS as e:
                raise ApiConnectionException(f"{method} {path}: {e}") from e
        if not text.strip():
            return {}
        value = json.loads(text)
        return value if isinstance(value, dict) else {"value": value}

    def plan(self, rpc: str, request: dict[str, Any]) -> tuple[Route, str, dict[str, Any], Any]:
        """Transcodes a request message (as a JSON object) into method, path, query and body."""
        route = ROUTES[rpc]
        path, used = expand_path(route, request)
        remaining = {k: v for k, v in request.items() if k not in used and v is not None}
        if route.body == "*":
            return route, path, {}, remaining
        if route.body:
            body = remaining.pop(route.body, None)
            return route, path, remaining, body if body is not None else {}
        return route, path, remaining, None

    def call(self, rpc: str, request: dict[str, Any], timeout: float | None = ...) -> dict[str, Any]:  # type: ignore[assignment]
        """Calls one API method over REST and returns its response message as a JSON object.

        Args:
            rpc: The method's full name, for example
                ``"enginemanager.v1.DAIEngineService.GetDAIEngine"``.
            request: The request message in its JSON form (lowerCamelCase field names).
            timeout: As for :meth:`request`.
        """
        route, path, query, body = self.plan(rpc, request)
        return self.request(route.verb, path, query, body, timeout)

    def upload(
        self,
        path: str,
        query: dict[str, Any],
        source: BinaryIO,
        timeout: float | None = ...,  # type: ignore[assignment]
    ) -> dict[str, Any]:
        """Sends ``source`` as the raw request body of a PUT, as it is read, and returns the
        decoded JSON response. Nothing is held in memory beyond the socket's buffers.

        Args:
            path: The path below the base URL, starting with ``/``.
            query: Query parameters; see :func:`encode_query`.
            source: A binary file object, read from its current position to its end.
            timeout: As for :meth:`request`; it applies to each read and write, not the whole.
        """
        if timeout is ...:
            timeout = self.config.stream_timeout_seconds
        with self._open("PUT", path, query, None, timeout, "application/json", raw=source) as response:
            try:
                text = response.read().decode("utf-8")
            except TRANSPORT_ERRORS as e:
                raise ApiConnectionException(f"PUT {path}: {e}") from e
        value = json.loads(text) if text.strip() else {}
        return value if isinstance(value, dict) else {"value": value}

    def download(
        self,
        path: str,
        query: dict[str, Any],
        sink: BinaryIO,
        timeout: float | None = ...,  # type: ignore[assignment]
        chunk_bytes: int = 1 << 20,
    ) -> int:
        """GETs a raw response body into ``sink`` a chunk at a time; returns the bytes written.

        Raises:
            ApiConnectionException: when the body ends before its ``Content-Length`` (the server
                cuts it short when it cannot send the whole file).
        """
        if timeout is ...:
            timeout = self.config.stream_timeout_seconds
        written = 0
        with self._open("GET", path, query, None, timeout, "application/octet-stream") as response:
            expected = response.getheader("Content-Length")
            try:
                while True:
                    data = response.read1(chunk_bytes)
                    if not data:
                        break
                    sink.write(data)
                    written += len(data)
            except TRANSPORT_ERRORS as e:
                raise ApiConnectionException(f"GET {path}: the download broke after {written} bytes: {e}") from e
        if expected is not None and written != int(expected):
            raise ApiConnectionException(f"GET {path}: the download ended after {written} of {expected} bytes")
        return written

    def stream(
        self,
        rpc: str,
        request: dict[str, Any],
        timeout: float | None = ...,  # type: ignore[assignment]
    ) -> Iterator[dict[str, Any]]:
        """Calls a server-streaming method and yields each ``result`` of its NDJSON response.

        Raises:
            CustomApiException: for an error status, before the stream or as its ``error`` line.
            ApiConnectionException: when the connection breaks; the messages received before
                were yielded.
        """
        if timeout is ...:
            timeout = self.config.stream_timeout_seconds
        route, path, query, body = self.plan(rpc, request)
        with self._open(route.verb, path, query, body, timeout, "application/x-ndjson") as response:
            try:
                for raw in _lines(response):
                    line = raw.strip()
                    if not line:
                        continue
                    message = json.loads(line)
                    if isinstance(message, dict) and "error" in message:
                        raise CustomApiException.from_status(message["error"] or {})
                    if isinstance(message, dict) and "result" in message:
                        yield message["result"] or {}
            except TRANSPORT_ERRORS as e:
                raise ApiConnectionException(f"{route.verb} {path}: stream broke: {e}") from e


def _lines(response: http.client.HTTPResponse) -> Iterator[bytes]:
    """Splits a response body into lines as the bytes arrive.

    ``read1`` rather than ``readline``: on a chunked body, ``HTTPResponse.readline`` reports a
    connection that dropped between two chunks as a normal end, while ``read1`` raises
    ``IncompleteRead``, which is what lets the caller resume the stream.
    """
    # The parts of an unfinished line are kept apart and joined once its end arrives: a long
    # line (a MiB of base64 output) would otherwise be copied again with every read.
    parts: list[bytes] = []
    while True:
        data = response.read1(1 << 20)
        if not data:
            if parts:
                raise http.client.IncompleteRead(b"".join(parts))
            return
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            parts.append(data[start:end + 1])
            yield b"".join(parts)
            parts = []
            start = end + 1
        if start < len(data):
            parts.append(data[start:])


def _remaining_length(source: BinaryIO) -> int | None:
    """The bytes from a file's position to its end, when it is a regular file; else None."""
    try:
        size = os.fstat(source.fileno()).st_size
        return max(0, size - source.tell())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        pass
    if isinstance(source, io.BytesIO):
        return len(source.getbuffer()) - source.tell()
    return None
