"""What every conformance module shares: the server, sign-in, error checks and the call recorder.

Importing this module (every ``test_*`` module does, and discovery imports them all before the
first test runs) installs a profile hook in this thread and in threads started later. The hook
records each code object that Python enters; ``test_zz_coverage`` compares the recorded ones whose
file lies under ``h2o_engine_manager/clients`` with the public methods the official client offers.
The official package is never modified, patched or wrapped: the hook only watches.

The server is the one the product's own Python client tests use (``clients/python/tests/support.py``):
one all-in-one server per test process, on a free port with a temporary data directory, on
PGlite and the in-process bus unless ``DATABASE_URL``/``NATS_URL`` are set (then it uses those,
with a schema suffix and events prefix of its own).
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest
from pathlib import Path
from types import CodeType, FrameType, ModuleType
from typing import Any, Callable

REPO_ROOT = Path(__file__).resolve().parents[3]

# --- the call recorder -------------------------------------------------------------------------

entered: set[CodeType] = set()


def _record(frame: FrameType, event: str, arg: Any) -> None:
    if event == "call":
        entered.add(frame.f_code)


sys.setprofile(_record)
threading.setprofile(_record)


# --- the environment the official client reads ------------------------------------------------

def _isolate_environment() -> None:
    """Nothing of the machine's H2O CLI set-up may steer the official client.

    An empty CLI config file, no ``H2O_CLOUD_*`` overrides (a token endpoint there would skip the
    issuer), no proxy for the local server.
    """
    config_dir = tempfile.mkdtemp(prefix="aiem-official-")
    atexit.register(shutil.rmtree, config_dir, ignore_errors=True)
    config = Path(config_dir) / "h2o-cli-config.toml"
    config.write_text("")
    for key in [k for k in os.environ if k.startswith("H2O_CLOUD_")]:
        del os.environ[key]
    os.environ.update({"H2OCONFIG": str(config), "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})


_isolate_environment()


def _load_support() -> ModuleType:
    # By path, under a name of its own: this suite's package is also called `tests`. test_login
    # loads it under the same name, so both share one module and so one server.
    name = "aiem_python_test_support"
    if name in sys.modules:
        return sys.modules[name]
    path = REPO_ROOT / "clients" / "python" / "tests" / "support.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


support = _load_support()

import h2o_engine_manager  # noqa: E402
from h2o_engine_manager.clients.engine.client import EngineClient  # noqa: E402
from h2o_engine_manager.clients.exception import CustomApiException  # noqa: E402
from h2o_engine_manager.clients.login import Clients  # noqa: E402
from h2o_engine_manager.gen.exceptions import ApiException  # noqa: E402

PLATFORM_CLIENT_ID = "platform"
GLOBAL = "workspaces/global"

# Who the suite signs in as. Without a policy file every signed-in user is a member of every
# workspace; `--admin` tokens are administrators.
ADMIN = "oc-admin"
MEMBER = "oc-alice"
OTHER = "oc-bob"


def server() -> Any:
    return support.server()


def issuer_url() -> str:
    return server().url + "/oidc"


_refresh_tokens: dict[tuple[str, bool], str] = {}
_clients: dict[tuple[str, bool], Clients] = {}
_lock = threading.Lock()


def refresh_token(user: str, admin: bool = False) -> str:
    """``npm run -s token -- --user USER --refresh [--admin]`` for the test server."""
    with _lock:
        key = (user, admin)
        if key not in _refresh_tokens:
            args = ["node", str(REPO_ROOT / "services" / "kit" / "bin" / "token.mjs"), "--user", user, "--refresh"]
            if admin:
                args.append("--admin")
            result = subprocess.run(args, cwd=REPO_ROOT, env=server().env, capture_output=True, text=True, timeout=60)
            if result.returncode != 0:
                raise RuntimeError(f"minting a refresh token failed: {result.stderr}")
            _refresh_tokens[key] = result.stdout.strip()
        return _refresh_tokens[key]


def login(user: str = MEMBER, admin: bool = False) -> Clients:
    """The official ``login_custom`` as ``users/<user>``: one ``Clients`` per user for the run."""
    key = (user, admin)
    if key not in _clients:
        _clients[key] = h2o_engine_manager.login_custom(
            endpoint=server().url,
            refresh_token=refresh_token(user, admin),
            issuer_url=issuer_url(),
            client_id=PLATFORM_CLIENT_ID,
        )
    return _clients[key]


def admin() -> Clients:
    return login(ADMIN, admin=True)


def member() -> Clients:
    return login(MEMBER)


def other_member() -> Clients:
    return login(OTHER)


def engine_client(user: str = MEMBER, admin: bool = False) -> EngineClient:
    """The generic ``EngineClient``, built with its own public arguments (login does not make one)."""
    return EngineClient(
        url=server().url,
        platform_token=refresh_token(user, admin),
        platform_oidc_url=issuer_url(),
        platform_oidc_client_id=PLATFORM_CLIENT_ID,
    )


def unique(prefix: str) -> str:
    """A resource id no other test uses (lower case letters, digits and dashes)."""
    return f"{prefix}-{secrets.token_hex(3)}"


class ConformanceCase(unittest.TestCase):
    """Assertions shared by the modules."""

    maxDiff = None

    def assertApiError(self, status: int, call: Callable[..., Any], *args: Any,
                       cls: type[ApiException] = CustomApiException, **kwargs: Any) -> ApiException:
        """``call`` raises the official client's ``cls`` (``CustomApiException`` unless said) with ``status``."""
        with self.assertRaises(ApiException) as caught:
            result = call(*args, **kwargs)
            # A generator (stream_output) raises when iterated.
            if hasattr(result, "__next__"):
                list(result)
        error = caught.exception
        self.assertIs(type(error), cls, f"{type(error).__name__}: {error}")
        self.assertEqual(error.status, status, str(error))
        return error


def run_async(coroutine: Any) -> Any:
    return asyncio.run(coroutine)
