"""Test support: one real all-in-one server per test run, tokens, and per-family skips.

The server is the repository's own (``node --import tsx edge/src/main.ts``) on a free port with a
temporary data directory; ``DATABASE_URL`` and ``NATS_URL`` are passed through when set, with a
schema suffix and events prefix of its own. It starts on first use and stops when the test
process exits.

A family whose service has not landed yet answers UNIMPLEMENTED; tests marked with
:func:`requires` skip then, and the families skipped are printed at the end of the run.

Environment knobs:
    AIEM_PY_TEST_SERVER_ENTRY: another entry point to run instead of ``edge/src/main.ts``.
    AIEM_PY_TEST_KEEP_DATA: keep the data directory and server log after the run.
"""

from __future__ import annotations

import atexit
import functools
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable

TESTS_DIR = Path(__file__).resolve().parent
CLIENT_ROOT = TESTS_DIR.parent
REPO_ROOT = CLIENT_ROOT.parent.parent

if str(CLIENT_ROOT) not in sys.path:
    sys.path.insert(0, str(CLIENT_ROOT))

from ai_engine_manager import login  # noqa: E402
from ai_engine_manager._http import Connection  # noqa: E402
from ai_engine_manager.connection_config import ConnectionConfig  # noqa: E402
from ai_engine_manager.exception import CustomApiException  # noqa: E402
from ai_engine_manager.login import Clients  # noqa: E402

V1 = "enginemanager.v1."
SB = "enginemanager.sandbox.v1."
PROBE_SANDBOX = "workspaces/default/sandboxEngines/py-probe"

# One cheap call per family; any answer but UNIMPLEMENTED means the family's service is there.
PROBES: dict[str, tuple[str, dict[str, Any]]] = {
    "dai_engine_profile": (V1 + "DAIEngineProfileService.ListDAIEngineProfiles", {"parent": "workspaces/global"}),
    "dai_engine_version": (V1 + "DAIEngineVersionService.ListDAIEngineVersions", {"parent": "workspaces/global"}),
    "h2o_engine_profile": (V1 + "H2OEngineProfileService.ListH2OEngineProfiles", {"parent": "workspaces/global"}),
    "h2o_engine_version": (V1 + "H2OEngineVersionService.ListH2OEngineVersions", {"parent": "workspaces/global"}),
    "notebook_engine_profile": (V1 + "NotebookEngineProfileService.ListNotebookEngineProfiles", {"parent": "workspaces/global"}),
    "notebook_engine_image": (V1 + "NotebookEngineImageService.ListNotebookEngineImages", {"parent": "workspaces/global"}),
    "sandbox_engine_image": (V1 + "SandboxEngineImageService.ListSandboxEngineImages", {"parent": "workspaces/global"}),
    "sandbox_engine_template": (V1 + "SandboxEngineTemplateService.ListSandboxEngineTemplates", {"parent": "workspaces/global"}),
    "secret": (V1 + "SecretService.ListSecrets", {"parent": "workspaces/default"}),
    "dai_engine": (V1 + "DAIEngineService.ListDAIEngines", {"parent": "workspaces/default"}),
    "h2o_engine": (V1 + "H2OEngineService.ListH2OEngines", {"parent": "workspaces/default"}),
    "notebook_engine": (V1 + "NotebookEngineService.ListNotebookEngines", {"parent": "workspaces/default"}),
    "engine": (V1 + "EngineService.ListEngines", {"parent": "workspaces/default"}),
    "sandbox_engine": (SB + "SandboxEngineService.ListSandboxEngines", {"parent": "workspaces/default"}),
    "process": (SB + "ProcessService.ListProcesses", {"parent": PROBE_SANDBOX}),
    "port": (SB + "PortService.ListPorts", {"parent": PROBE_SANDBOX}),
    "filesystem": (SB + "FilesystemService.StatFile", {"name": PROBE_SANDBOX, "path": "/"}),
    "drive": (SB + "DriveService.DownloadFile", {"name": PROBE_SANDBOX, "workspace": "workspaces/default",
                                                 "remotePath": "probe", "localPath": "/probe"}),
    "secure_store": (SB + "SecureStoreService.RevealSecretToFile", {"name": PROBE_SANDBOX,
                                                                    "secretVersion": "workspaces/default/secrets/p/versions/1",
                                                                    "path": "/probe"}),
    "metrics": (SB + "MetricsService.ReadMetrics", {"name": PROBE_SANDBOX}),
}


def _die_with_parent() -> None:
    """Asks Linux to stop the server when the test process dies without cleaning up."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TestServer:
    """The all-in-one server of this test run."""

    def __init__(self) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="aiem-py-")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(self.data_dir) / "server.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.last_log = ""
        self._tokens: dict[tuple[str, bool, bool], str] = {}
        self._lock = threading.Lock()
        suffix = secrets.token_hex(4)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("AIEM_")}
        self.env.update({
            "AIEM_HOST": "127.0.0.1",
            "AIEM_PORT": str(self.port),
            "AIEM_DATA_DIR": self.data_dir,
            "AIEM_SEED_DEMO": os.environ.get("AIEM_SEED_DEMO", "true"),
            # These suites test the API and its clients, not H2O-3: H2O engines run the stand-in.
            "AIEM_H2O_SERVER": "stand-in",
            # Sandboxes outlive a stopped server by default; the data directory goes with it here.
            "AIEM_SANDBOX_STOP_WITH_SERVICE": "true",
            # The suites open the URLs they are handed (ports, notebooks) with urllib, whose
            # resolver here does not map `*.localhost` to loopback: the path URLs (docs/adr/0078).
            "AIEM_PATH_URLS": "true",
        })
        if os.environ.get("DATABASE_URL") or os.environ.get("NATS_URL"):
            self.env["AIEM_DB_SCHEMA_SUFFIX"] = f"_py{suffix}"
            self.env["AIEM_EVENTS_PREFIX"] = f"py{suffix}"

    def start(self, timeout: float = 90.0) -> None:
        """Starts the server and waits until ``/readyz`` answers 200."""
        entry = os.environ.get("AIEM_PY_TEST_SERVER_ENTRY") or str(REPO_ROOT / "edge" / "src" / "main.ts")
        log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            ["node", "--import", "tsx", entry],
            cwd=REPO_ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.last_log = self.log_tail()
                raise RuntimeError(f"the server exited with {self.process.returncode}:\n{self.last_log}")
            # A server that could not listen logs it but may keep running.
            if b'"failed to start"' in self.log_path.read_bytes():
                self.last_log = self.log_tail()
                raise RuntimeError(f"the server failed to start:\n{self.last_log}")
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        self.last_log = self.log_tail()
        raise RuntimeError(f"the server was not ready within {timeout} s:\n{self.last_log}")

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Stops the server (SIGTERM, then SIGKILL) and removes the data directory."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)
        # Engines run detached so that a restarted server adopts them (docs/adr/0055): stopping
        # the server, even with SIGKILL, leaves them running by design. No
        # server will adopt these once their data directory is gone, so they are ended here.
        self.kill_engines()
        if "AIEM_DB_SCHEMA_SUFFIX" in self.env:
            # The run's schemas and streams on the shared PostgreSQL and NATS.
            cleanup = subprocess.run(
                ["node", "--import", "tsx", str(TESTS_DIR / "cleanup_shared.mts")],
                cwd=REPO_ROOT, env=self.env, capture_output=True, text=True, timeout=60,
            )
            if cleanup.returncode != 0:
                print(f"cleaning up PostgreSQL/NATS failed: {cleanup.stderr.strip()}", file=sys.stderr)
        if os.environ.get("AIEM_PY_TEST_KEEP_DATA"):
            print(f"kept the test server's data in {self.data_dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def engine_processes(self) -> list[int]:
        """The pids of running processes started for this server's engines (Linux only)."""
        marker = os.path.join(self.data_dir, "engines", "").encode()
        pids = []
        for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
            if not entry.isdigit():
                continue
            try:
                cmdline = Path("/proc", entry, "cmdline").read_bytes()
                stat = Path("/proc", entry, "stat").read_text()
            except OSError:
                continue  # it ended while being read
            # A zombie has finished; its parent will reap it.
            if marker in cmdline and stat[stat.rindex(")") + 2] not in "ZX":
                pids.append(int(entry))
        return pids

    def kill_engines(self, timeout: float = 10.0) -> None:
        """Kills the engine processes of this server, each with its process group, and waits
        until they are gone."""
        deadline = time.monotonic() + timeout
        while pids := self.engine_processes():
            for pid in pids:
                try:
                    # Each engine leads a process group of its own, with whatever it started.
                    if os.getpgid(pid) == pid:
                        os.killpg(pid, signal.SIGKILL)
                    else:
                        os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"engine processes {pids} of the test server did not end")
            time.sleep(0.05)

    def token(self, user: str = "alice", admin: bool = False, *, refresh: bool = False) -> str:
        """A token for ``users/<user>`` signed with this server's key: an access token, or with
        ``refresh`` a platform refresh token (``npm run -s token -- --refresh``)."""
        with self._lock:
            key = (user, admin, refresh)
            if key not in self._tokens:
                args = ["node", str(REPO_ROOT / "services" / "kit" / "bin" / "token.mjs"), "--user", user]
                if admin:
                    args.append("--admin")
                if refresh:
                    args.append("--refresh")
                result = subprocess.run(args, cwd=REPO_ROOT, env=self.env, capture_output=True, text=True, timeout=60)
                if result.returncode != 0:
                    raise RuntimeError(f"minting a token failed: {result.stderr}")
                self._tokens[key] = result.stdout.strip()
            return self._tokens[key]


_server: TestServer | None = None
_server_lock = threading.Lock()
_available: dict[str, bool] = {}


def server() -> TestServer:
    """The server of this test run, started on first use.

    A start that fails is tried again, up to three times, with a new port and data directory: a
    port that was free when picked can be taken by another test suite before the server binds it,
    and a concurrent ``npm run gen`` briefly leaves the generated code incomplete.
    """
    global _server
    with _server_lock:
        if _server is None:
            for attempt in range(3):
                candidate = TestServer()
                try:
                    candidate.start()
                except RuntimeError:
                    candidate.stop()
                    if attempt == 2:
                        raise
                    time.sleep(1)
                    continue
                _server = candidate
                atexit.register(_shutdown)
                break
        assert _server is not None
        return _server


def _shutdown() -> None:
    skipped = sorted(name for name, ok in _available.items() if not ok)
    if skipped:
        print(
            "\nPython client tests skipped for families that answer UNIMPLEMENTED: " + ", ".join(skipped),
            file=sys.stderr,
        )
    if _server is not None:
        _server.stop()


def clients(user: str = "alice", admin: bool = False, **options: Any) -> Clients:
    """Clients signed in to the test server as ``users/<user>``; waits poll quickly."""
    options.setdefault("poll_interval_seconds", 0.1)
    return login(url=server().url, token=server().token(user, admin), **options)


def available(family: str) -> bool:
    """Whether the server implements a family (see :data:`PROBES`); probed once per run."""
    if family not in _available:
        rpc, request = PROBES[family]
        connection = Connection(ConnectionConfig(url=server().url, token_provider=lambda: server().token("py-admin", True)))
        try:
            connection.call(rpc, request)
            _available[family] = True
        except CustomApiException as e:
            _available[family] = e.code_name != "UNIMPLEMENTED"
    return _available[family]


def requires(*families: str) -> Callable[[Any], Any]:
    """Skips a test (or a whole test class) while any of the families answers UNIMPLEMENTED."""

    def missing() -> list[str]:
        return [f for f in families if not available(f)]

    def decorate(target: Any) -> Any:
        if isinstance(target, type):
            original = target.__dict__.get("setUpClass")

            def set_up_class(cls: type) -> None:
                absent = missing()
                if absent:
                    raise unittest.SkipTest("not implemented by the server yet: " + ", ".join(absent))
                if original is not None:
                    original.__func__(cls)
                else:
                    super(target, cls).setUpClass()  # type: ignore[misc]

            target.setUpClass = classmethod(set_up_class)
            return target

        @functools.wraps(target)
        def wrapper(self: unittest.TestCase, *args: Any, **kwargs: Any) -> Any:
            absent = missing()
            if absent:
                self.skipTest("not implemented by the server yet: " + ", ".join(absent))
            return target(self, *args, **kwargs)

        return wrapper

    return decorate


def unique(prefix: str) -> str:
    """A resource id that no other test uses."""
    return f"{prefix}-{secrets.token_hex(3)}"


def wait_until(check: Callable[[], bool], timeout: float = 30.0, interval: float = 0.1) -> None:
    """Polls ``check`` until it returns true; fails the test on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")
