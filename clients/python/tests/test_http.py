"""The HTTP layer, token providers and waiting, against small fake servers.

The real server cannot be made to drop a stream half-way or to expire a token on cue; these fakes
can. Everything else is tested against the real server in the other test modules.
"""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
import unittest
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from tests import support  # noqa: F401
from ai_engine_manager import _wait, login, login_custom
from ai_engine_manager._http import Connection, encode_query, expand_path, ssl_context
from ai_engine_manager._routes import ROUTES
from ai_engine_manager.auth.token_api_client import RefreshTokenProvider, StaticTokenProvider, TokenApiClient
from ai_engine_manager.connection_config import ConnectionConfig
from ai_engine_manager.dai_engine.state import DAIEngineState
from ai_engine_manager.exception import (
    ApiConnectionException,
    CustomApiException,
    FailedEngineException,
    TimeoutException,
)
from ai_engine_manager.process.output_stream import OutputStream

PROCESS = "workspaces/w/sandboxEngines/s/processes/p"


class FakeServer:
    """An HTTP server in a thread whose answers a test scripts with ``handle``."""

    def __init__(self, handle: Callable[[BaseHTTPRequestHandler], None]) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                outer.requests.append({
                    "method": self.command,
                    "path": self.path,
                    "headers": dict(self.headers),
                    "body": body,
                })
                handle(self)

            do_GET = do_POST = do_PATCH = do_DELETE = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def send_json(handler: BaseHTTPRequestHandler, status: int, value: Any) -> None:
    body = json.dumps(value).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def start_chunked(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Type", "application/x-ndjson")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()


def send_chunk(handler: BaseHTTPRequestHandler, data: bytes) -> None:
    handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    handler.wfile.flush()


def end_chunked(handler: BaseHTTPRequestHandler) -> None:
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


def drop(handler: BaseHTTPRequestHandler) -> None:
    handler.wfile.flush()
    handler.connection.shutdown(socket.SHUT_RDWR)
    handler.close_connection = True


def result_line(data: bytes, offset: int, stream: str = "OUTPUT_STREAM_STDOUT", **extra: Any) -> bytes:
    message = {"stream": stream, "data": base64.b64encode(data).decode(), "offset": str(offset), "droppedBytes": "0",
               "keepAlive": False, **extra}
    return json.dumps({"result": message}).encode() + b"\n"


def query_of(request: dict[str, Any]) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(urllib.parse.urlsplit(request["path"]).query)


class TranscodingTest(unittest.TestCase):
    def test_path_variables_are_checked_and_escaped(self) -> None:
        route = ROUTES["enginemanager.v1.DAIEngineService.GetDAIEngine"]
        self.assertEqual(expand_path(route, {"name": "workspaces/a b/daiEngines/e"})[0], "/v1/workspaces/a%20b/daiEngines/e")
        for bad in ["default", "workspaces/a/daiEngines", "workspaces/a/h2oEngines/e", "workspaces//daiEngines/e", ""]:
            with self.subTest(bad=bad), self.assertRaisesRegex(ValueError, "name"):
                expand_path(route, {"name": bad})

    def test_nested_path_variable_stays_in_the_body(self) -> None:
        connection = Connection(ConnectionConfig(url="http://unused"))
        route, path, query, body = connection.plan(
            "enginemanager.v1.DAIEngineService.UpdateDAIEngine",
            {"daiEngine": {"name": "workspaces/w/daiEngines/e", "cpu": 2}, "updateMask": "cpu", "validateOnly": True},
        )
        self.assertEqual((route.verb, path), ("PATCH", "/v1/workspaces/w/daiEngines/e"))
        self.assertEqual(body, {"name": "workspaces/w/daiEngines/e", "cpu": 2})
        self.assertEqual(query, {"updateMask": "cpu", "validateOnly": True})

    def test_star_body_takes_everything_but_the_path(self) -> None:
        connection = Connection(ConnectionConfig(url="http://unused"))
        _, path, query, body = connection.plan(
            "enginemanager.v1.DAIEngineService.PauseDAIEngine", {"name": "workspaces/w/daiEngines/e", "validateOnly": False}
        )
        self.assertEqual((path, query, body), ("/v1/workspaces/w/daiEngines/e:pause", {}, {"validateOnly": False}))

    def test_query_leaves_out_defaults_and_repeats_lists(self) -> None:
        encoded = encode_query({"a": "", "b": 0, "c": False, "d": None, "e": True, "f": ["x", "y z"], "g": {"h": 3}, "i": "1,2"})
        self.assertEqual(encoded, "e=true&f=x&f=y%20z&g.h=3&i=1%2C2")

    def test_every_route_has_a_verb_and_a_v1_path(self) -> None:
        self.assertGreater(len(ROUTES), 90)
        for name, route in ROUTES.items():
            with self.subTest(name=name):
                self.assertIn(route.verb, {"GET", "POST", "PATCH", "DELETE"})
                self.assertTrue(route.path.startswith("/v1/"))
        self.assertTrue(ROUTES["enginemanager.sandbox.v1.ProcessService.StreamProcessOutput"].streaming)


class ErrorsAndTokensTest(unittest.TestCase):
    def setUp(self) -> None:
        self.answers: list[Callable[[BaseHTTPRequestHandler], None]] = []
        self.fake = FakeServer(lambda h: self.answers.pop(0)(h))
        self.addCleanup(self.fake.close)

    def connection(self, provider: Any = None) -> Connection:
        return Connection(ConnectionConfig(url=self.fake.url, token_provider=provider or StaticTokenProvider("tok")))

    def test_error_body_becomes_an_exception(self) -> None:
        self.answers.append(lambda h: send_json(h, 404, {"code": 5, "message": "daiEngine x not found", "details": [{"@type": "t"}]}))
        with self.assertRaises(CustomApiException) as caught:
            self.connection().call("enginemanager.v1.DAIEngineService.GetDAIEngine", {"name": "workspaces/w/daiEngines/x"})
        error = caught.exception
        self.assertEqual((error.status, error.reason, error.code, error.code_name), (404, "Not Found", 5, "NOT_FOUND"))
        self.assertEqual(str(error), "404 (Not Found): daiEngine x not found")
        self.assertEqual(error.details, [{"@type": "t"}])
        request = self.fake.requests[0]
        self.assertEqual(request["headers"]["Authorization"], "Bearer tok")
        self.assertEqual(request["path"], "/v1/workspaces/w/daiEngines/x")

    def test_error_without_a_status_body(self) -> None:
        def answer(h: BaseHTTPRequestHandler) -> None:
            h.send_response(502)
            h.send_header("Content-Length", "11")
            h.end_headers()
            h.wfile.write(b"bad gateway")

        self.answers.append(answer)
        with self.assertRaises(CustomApiException) as caught:
            self.connection().request("GET", "/v1/x")
        self.assertEqual((caught.exception.status, caught.exception.code_name, caught.exception.message), (502, "UNKNOWN", "bad gateway"))

    def test_unreachable_server(self) -> None:
        port = support.free_port()
        connection = Connection(ConnectionConfig(url=f"http://127.0.0.1:{port}", token_provider=StaticTokenProvider("t")))
        with self.assertRaises(ApiConnectionException):
            connection.request("GET", "/v1/x")

    def test_static_token_is_not_retried(self) -> None:
        self.answers.append(lambda h: send_json(h, 401, {"code": 16, "message": "token expired"}))
        with self.assertRaises(CustomApiException) as caught:
            self.connection().request("GET", "/v1/x")
        self.assertEqual(caught.exception.code_name, "UNAUTHENTICATED")
        self.assertEqual(len(self.fake.requests), 1)

    def test_refresh_token_provider_renews_and_retries_after_401(self) -> None:
        issued = iter(["first", "second"])

        def token_endpoint(h: BaseHTTPRequestHandler) -> None:
            send_json(h, 200, {"access_token": next(issued), "expires_in": 300, "refresh_token": "rotated"})

        self.answers += [
            lambda h: send_json(h, 200, {"token_endpoint": self.fake.url + "/token", "issuer": "x"}),
            token_endpoint,
            lambda h: send_json(h, 401, {"code": 16, "message": "revoked"}),
            token_endpoint,
            lambda h: send_json(h, 200, {"ok": True}),
        ]
        provider = RefreshTokenProvider(refresh_token="r0", client_id="cli", issuer_url=self.fake.url + "/realm")
        self.assertEqual(self.connection(provider).request("GET", "/v1/x"), {"ok": True})
        paths = [r["path"] for r in self.fake.requests]
        self.assertEqual(paths, ["/realm/.well-known/openid-configuration", "/token", "/v1/x", "/token", "/v1/x"])
        first_grant = urllib.parse.parse_qs(self.fake.requests[1]["body"].decode())
        self.assertEqual(first_grant, {"grant_type": ["refresh_token"], "refresh_token": ["r0"], "client_id": ["cli"]})
        second_grant = urllib.parse.parse_qs(self.fake.requests[3]["body"].decode())
        self.assertEqual(second_grant["refresh_token"], ["rotated"])
        self.assertEqual(self.fake.requests[4]["headers"]["Authorization"], "Bearer second")

    def test_refused_refresh_token(self) -> None:
        self.answers.append(lambda h: send_json(h, 400, {"error": "invalid_grant", "error_description": "expired"}))
        api = TokenApiClient(self.fake.url + "/token", "cli", client_secret="s")
        with self.assertRaises(CustomApiException) as caught:
            api.refresh("r", scope="openid")
        self.assertEqual(caught.exception.status, 400)
        self.assertIn("invalid_grant: expired", caught.exception.message)
        grant = urllib.parse.parse_qs(self.fake.requests[0]["body"].decode())
        self.assertEqual((grant["client_secret"], grant["scope"]), (["s"], ["openid"]))

    def test_login_custom_uses_the_refresh_token(self) -> None:
        self.answers += [
            lambda h: send_json(h, 200, {"access_token": "a1", "expires_in": 60}),
            lambda h: send_json(h, 200, {"engines": [], "nextPageToken": "", "totalSize": 0}),
        ]
        clients = login_custom(endpoint=self.fake.url, refresh_token="r", token_endpoint=self.fake.url + "/token", client_id="c")
        page = clients.engine_client.list_engines()
        self.assertEqual((page.engines, page.total_size), ([], 0))
        self.assertEqual(self.fake.requests[1]["path"], "/v1/workspaces/default/engines")
        self.assertEqual(self.fake.requests[1]["headers"]["Authorization"], "Bearer a1")


class RefreshTokenProviderTest(unittest.TestCase):
    def provider(self, answers: list[dict[str, Any]], clock: Callable[[], float]) -> tuple[RefreshTokenProvider, list[str]]:
        provider = RefreshTokenProvider(refresh_token="r", client_id="c", token_endpoint="http://unused/token", clock=clock)
        sent: list[str] = []

        class Api:
            def refresh(self, refresh_token: str, scope: str | None = None) -> Any:
                sent.append(refresh_token)
                answer = answers.pop(0)
                return type("Answer", (), answer)()

        provider._api = Api()  # type: ignore[assignment]
        return provider, sent

    def test_reuses_the_token_until_shortly_before_expiry(self) -> None:
        now = [1000.0]
        provider, sent = self.provider(
            [{"access_token": "a", "expires_in": 100.0, "refresh_token": None},
             {"access_token": "b", "expires_in": 100.0, "refresh_token": "r2"},
             {"access_token": "c", "expires_in": 100.0, "refresh_token": None}],
            lambda: now[0],
        )
        self.assertEqual(provider(), "a")
        now[0] += 60
        self.assertEqual(provider(), "a")
        now[0] += 15  # within the 30-second margin
        self.assertEqual(provider(), "b")
        provider.invalidate()
        self.assertEqual(provider(), "c")
        self.assertEqual(sent, ["r", "r", "r2"])

    def test_expiry_from_the_jwt_when_the_endpoint_gives_none(self) -> None:
        payload = base64.urlsafe_b64encode(json.dumps({"exp": 2000}).encode()).decode().rstrip("=")
        jwt = f"h.{payload}.s"
        now = [1000.0]
        provider, _ = self.provider(
            [{"access_token": jwt, "expires_in": None, "refresh_token": None},
             {"access_token": "later", "expires_in": None, "refresh_token": None}],
            lambda: now[0],
        )
        self.assertEqual(provider(), jwt)
        now[0] = 1969
        self.assertEqual(provider(), jwt)
        now[0] = 1971
        self.assertEqual(provider(), "later")
        now[0] = 10**9  # an opaque token without expiry is kept until the server rejects it
        self.assertEqual(provider(), "later")

    def test_arguments_are_checked(self) -> None:
        with self.assertRaises(ValueError):
            RefreshTokenProvider(refresh_token="r", client_id="c")
        with self.assertRaises(ValueError):
            RefreshTokenProvider(refresh_token="", client_id="c", token_endpoint="http://x")
        with self.assertRaises(ValueError):
            StaticTokenProvider(" ")
        self.assertEqual(StaticTokenProvider("Bearer abc")(), "abc")
        self.assertNotIn("abc", repr(StaticTokenProvider("abc")))


class LoginArgumentsTest(unittest.TestCase):
    def test_direct_login_needs_a_url_and_exactly_one_token(self) -> None:
        with self.assertRaisesRegex(ValueError, "URL"):
            login(token="t")
        with self.assertRaisesRegex(ValueError, "exactly one"):
            login(url="http://x")
        with self.assertRaisesRegex(ValueError, "exactly one"):
            login(url="http://x", token="a", token_provider=lambda: "b")
        with self.assertRaisesRegex(ValueError, "platform_token is a refresh token"):
            login(url="http://x", token="a", platform_token="b")

    def test_direct_login_settings(self) -> None:
        clients = login(url="https://engines.example.com/", token="p", default_workspace_id="team",
                        verify_ssl=False, timeout_seconds=5)
        config = clients.connection_config
        self.assertEqual((config.url, config.verify_ssl, config.timeout_seconds), ("https://engines.example.com/", False, 5))
        self.assertEqual(config.token_provider(), "p")
        self.assertEqual(clients.dai_engine_client._workspace(None), "workspaces/team")
        self.assertEqual(clients.dai_engine_client._workspace("workspaces/x"), "workspaces/x")
        provider = lambda: "dynamic"  # noqa: E731
        self.assertIs(login(url="http://x", token_provider=provider).connection_config.token_provider, provider)
        # environment names the server too when a token is given directly.
        self.assertEqual(login(environment="http://y", token="t").connection_config.url, "http://y")

    def test_tls_settings(self) -> None:
        import ssl

        self.assertEqual(ssl_context(False, None).verify_mode, ssl.CERT_NONE)
        self.assertFalse(ssl_context(False, None).check_hostname)
        self.assertEqual(ssl_context(True, None).verify_mode, ssl.CERT_REQUIRED)
        with self.assertRaises((FileNotFoundError, ssl.SSLError, OSError)):
            ssl_context(True, "/nonexistent/ca.pem")


class StreamOutputTest(unittest.TestCase):
    def setUp(self) -> None:
        self.answers: list[Callable[[BaseHTTPRequestHandler], None]] = []
        self.fake = FakeServer(lambda h: self.answers.pop(0)(h))
        self.addCleanup(self.fake.close)
        self.processes = login(url=self.fake.url, token="t").process_client

    def test_resumes_after_the_last_chunk_when_the_connection_drops(self) -> None:
        def first(h: BaseHTTPRequestHandler) -> None:
            start_chunked(h)
            send_chunk(h, result_line(b"hello ", 0))
            send_chunk(h, result_line(b"err", 6, "OUTPUT_STREAM_STDERR") + result_line(b"wor", 9)[:20])
            drop(h)

        def second(h: BaseHTTPRequestHandler) -> None:
            start_chunked(h)
            send_chunk(h, result_line(b"world\n", 9))
            drop(h)  # at a line boundary, before the end of the chunked body

        def third(h: BaseHTTPRequestHandler) -> None:
            start_chunked(h)
            send_chunk(h, json.dumps({"result": {"keepAlive": True, "offset": "15"}}).encode() + b"\n")
            send_chunk(h, result_line(b"done\n", 15))
            end_chunked(h)

        self.answers += [first, second, third]
        chunks = list(self.processes.stream_output(name=PROCESS))
        self.assertEqual(b"".join(c.data for c in chunks), b"hello errworld\ndone\n")
        self.assertEqual([c.stream for c in chunks], [OutputStream.OUTPUT_STREAM_STDOUT, OutputStream.OUTPUT_STREAM_STDERR,
                                                      OutputStream.OUTPUT_STREAM_STDOUT, OutputStream.OUTPUT_STREAM_STDOUT])
        self.assertEqual([c.offset for c in chunks], [0, 6, 9, 15])
        queries = [query_of(r) for r in self.fake.requests]
        self.assertEqual(queries, [{}, {"startOffset": ["9"]}, {"startOffset": ["15"]}])
        self.assertTrue(self.fake.requests[0]["path"].startswith(f"/v1/{PROCESS}:streamOutput"))

    def test_skip_replay_and_keep_alives(self) -> None:
        def answer(h: BaseHTTPRequestHandler) -> None:
            start_chunked(h)
            send_chunk(h, json.dumps({"result": {"keepAlive": True}}).encode() + b"\n")
            send_chunk(h, result_line(b"x", 4))
            end_chunked(h)

        self.answers += [answer, answer]
        self.assertEqual([c.data for c in self.processes.stream_output(name=PROCESS, skip_replay=True)], [b"x"])
        with_keep_alive = list(self.processes.stream_output(name=PROCESS, skip_replay=True, include_keep_alive=True))
        self.assertEqual([c.keep_alive for c in with_keep_alive], [True, False])
        self.assertEqual(query_of(self.fake.requests[0]), {"skipReplay": ["true"]})

    def test_error_line_raises(self) -> None:
        def answer(h: BaseHTTPRequestHandler) -> None:
            start_chunked(h)
            send_chunk(h, result_line(b"partial", 0))
            send_chunk(h, json.dumps({"error": {"code": 14, "message": "agent gone", "details": []}}).encode() + b"\n")
            end_chunked(h)

        self.answers.append(answer)
        received: list[bytes] = []
        with self.assertRaises(CustomApiException) as caught:
            for chunk in self.processes.stream_output(name=PROCESS):
                received.append(chunk.data)
        self.assertEqual(received, [b"partial"])
        self.assertEqual((caught.exception.code_name, caught.exception.status), ("UNAVAILABLE", 503))

    def test_error_before_the_stream_raises(self) -> None:
        self.answers.append(lambda h: send_json(h, 404, {"code": 5, "message": "process p not found"}))
        with self.assertRaises(CustomApiException) as caught:
            list(self.processes.stream_output(name=PROCESS, start_offset=3))
        self.assertEqual(caught.exception.code_name, "NOT_FOUND")
        self.assertEqual(query_of(self.fake.requests[0]), {"startOffset": ["3"]})

    def test_gives_up_after_repeated_drops(self) -> None:
        def dropping(h: BaseHTTPRequestHandler) -> None:
            start_chunked(h)
            drop(h)

        self.answers += [dropping] * 3
        started = time.monotonic()
        with self.assertRaises(ApiConnectionException):
            list(self.processes.stream_output(name=PROCESS, max_reconnects=2))
        self.assertEqual(len(self.fake.requests), 3)
        self.assertLess(time.monotonic() - started, 5)


class FakeEngine:
    def __init__(self, states: list[Any]) -> None:
        self.name = "workspaces/w/daiEngines/e"
        self.states = states
        self.state = DAIEngineState.STATE_STARTING
        self.reconciling = True

    def refresh(self) -> None:
        step = self.states.pop(0)
        if isinstance(step, Exception):
            raise step
        self.state, self.reconciling = step


class WaitTest(unittest.TestCase):
    def wait(self, engine: FakeEngine, timeout: float | None = None) -> bool:
        clock = [0.0]
        return _wait.wait_for_engine(
            engine,
            engine.refresh,
            settled={DAIEngineState.STATE_RUNNING, DAIEngineState.STATE_PAUSED},
            failed=DAIEngineState.STATE_FAILED,
            deleting=DAIEngineState.STATE_DELETING,
            timeout_seconds=timeout,
            poll_interval_seconds=None,
            sleep=lambda s: clock.__setitem__(0, clock[0] + s),
            clock=lambda: clock[0],
        )

    def test_waits_until_settled_and_not_reconciling(self) -> None:
        engine = FakeEngine([(DAIEngineState.STATE_STARTING, True), (DAIEngineState.STATE_RUNNING, True),
                             (DAIEngineState.STATE_RUNNING, False)])
        self.assertTrue(self.wait(engine))
        self.assertEqual(engine.states, [])

    def test_failed_engine_raises(self) -> None:
        engine = FakeEngine([(DAIEngineState.STATE_CONNECTING, True), (DAIEngineState.STATE_FAILED, False)])
        engine.failure_message = "image not found"  # type: ignore[attr-defined]
        with self.assertRaisesRegex(FailedEngineException, "image not found") as caught:
            self.wait(engine)
        self.assertIs(caught.exception.engine, engine)

    def test_times_out(self) -> None:
        engine = FakeEngine([(DAIEngineState.STATE_STARTING, True)] * 100)
        with self.assertRaisesRegex(TimeoutException, "STATE_STARTING"):
            self.wait(engine, timeout=3)

    def test_deleted_engine_ends_the_wait(self) -> None:
        engine = FakeEngine([(DAIEngineState.STATE_DELETING, True), CustomApiException(404, "gone", code=5)])
        self.assertFalse(self.wait(engine))

    def test_not_found_while_not_deleting_raises(self) -> None:
        engine = FakeEngine([CustomApiException(404, "gone", code=5)])
        with self.assertRaises(CustomApiException):
            self.wait(engine)

    def test_backoff(self) -> None:
        pauses = _wait.intervals(None)
        first = [next(pauses) for _ in range(12)]
        self.assertEqual(first[:4], [0.02, 0.04, 0.08, 0.16])
        self.assertEqual(first[-1], 5.0)
        self.assertTrue(all(a <= b for a, b in zip(first, first[1:])))
        fixed = _wait.intervals(2.0)
        self.assertEqual([next(fixed) for _ in range(3)], [2.0, 2.0, 2.0])


if __name__ == "__main__":
    unittest.main()
