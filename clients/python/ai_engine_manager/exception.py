"""The exceptions the client raises.

Every call the server rejects raises :class:`CustomApiException`, which carries the HTTP status,
the status code of the API's error body (a ``google.rpc.Status``: ``code``, ``message``,
``details``) and its name, such as ``NOT_FOUND``. Waiting for an engine raises
:class:`FailedEngineException` when the engine fails and :class:`TimeoutException` when the time
runs out.

Example:
    >>> try:
    ...     clients.dai_engine_client.get_engine(engine_id="missing")
    ... except CustomApiException as e:
    ...     print(e.status, e.code_name, e.message)
    404 NOT_FOUND daiEngine workspaces/default/daiEngines/missing not found
"""

from __future__ import annotations

import http.client
from typing import Any

__all__ = [
    "CustomApiException",
    "FailedEngineException",
    "TimeoutException",
    "ApiConnectionException",
    "CODE_NAMES",
    "HTTP_STATUS_OF_CODE",
]

CODE_NAMES: dict[int, str] = {
    0: "OK",
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    6: "ALREADY_EXISTS",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    10: "ABORTED",
    11: "OUT_OF_RANGE",
    12: "UNIMPLEMENTED",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    15: "DATA_LOSS",
    16: "UNAUTHENTICATED",
}
"""The names of the status codes of the API's error bodies (the gRPC codes)."""

HTTP_STATUS_OF_CODE: dict[int, int] = {
    1: 499,
    2: 500,
    3: 400,
    4: 504,
    5: 404,
    6: 409,
    7: 403,
    8: 429,
    9: 400,
    10: 409,
    11: 400,
    12: 501,
    13: 500,
    14: 503,
    15: 500,
    16: 401,
}
"""The HTTP status the server answers with for each status code."""

# The status code to assume when an error body has none, by HTTP status.
_CODE_OF_HTTP_STATUS = {400: 3, 401: 16, 403: 7, 404: 5, 409: 6, 429: 8, 499: 1, 501: 12, 503: 14, 504: 4}


class CustomApiException(Exception):
    """The server rejected a call.

    The message reads ``"<status> (<reason>): <message>"``, for example
    ``"404 (Not Found): daiEngine workspaces/default/daiEngines/x not found"``.

    Attributes:
        status: The HTTP status, for example 404.
        reason: The HTTP reason phrase, for example ``"Not Found"``.
        code: The status code of the error body, for example 5.
        code_name: The name of that code, for example ``"NOT_FOUND"``.
        message: The server's explanation.
        details: The ``details`` of the error body, as decoded JSON objects.
        body: The raw response body, decoded as text.
    """

    def __init__(
        self,
        status: int,
        message: str,
        code: int | None = None,
        details: list[Any] | None = None,
        reason: str | None = None,
        body: str = "",
    ) -> None:
        """Creates the exception.

        Args:
            status: The HTTP status.
            message: The server's explanation.
            code: The status code of the error body; derived from ``status`` when unknown.
            details: The ``details`` of the error body.
            reason: The HTTP reason phrase; derived from ``status`` when unknown.
            body: The raw response body.
        """
        self.status = status
        self.reason = reason or http.client.responses.get(status, "Unknown")
        self.code = code if code is not None else _CODE_OF_HTTP_STATUS.get(status, 2)
        self.code_name = CODE_NAMES.get(self.code, str(self.code))
        self.message = message
        self.details = list(details or [])
        self.body = body
        super().__init__(f"{status} ({self.reason}): {message}")

    @classmethod
    def from_status(cls, status: dict[str, Any], http_status: int | None = None) -> "CustomApiException":
        """Builds the exception from a ``google.rpc.Status`` JSON object.

        Args:
            status: The error object, with ``code``, ``message`` and ``details``.
            http_status: The HTTP status of the response; derived from the code when ``None``,
                as for errors that arrive inside a stream.

        Returns:
            The exception.
        """
        raw_code = status.get("code")
        code = raw_code if isinstance(raw_code, int) else None
        if http_status is None:
            http_status = HTTP_STATUS_OF_CODE.get(code or 2, 500)
        return cls(
            status=http_status,
            message=str(status.get("message", "")),
            code=code,
            details=status.get("details") if isinstance(status.get("details"), list) else [],
        )


class ApiConnectionException(Exception):
    """The server could not be reached, or the connection broke before an answer arrived."""


class FailedEngineException(Exception):
    """An engine that was waited for ended in its failed state.

    Attributes:
        engine: The engine as last read, with its ``failure_message`` where the kind has one.
    """

    def __init__(self, engine: Any, message: str | None = None) -> None:
        """Creates the exception.

        Args:
            engine: The failed engine.
            message: The text of the exception; built from the engine when ``None``.
        """
        self.engine = engine
        if message is None:
            detail = getattr(engine, "failure_message", "") or "no failure message"
            message = f"engine {getattr(engine, 'name', '?')} failed: {detail}"
        super().__init__(message)


class TimeoutException(Exception):
    """Waiting for an engine or process took longer than the timeout that was given."""
