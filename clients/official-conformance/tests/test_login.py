"""The official client's login functions, unmodified, against our embedded identity.

``h2o_engine_manager.login_custom()`` exchanges a refresh token at the issuer it is given;
``h2o_engine_manager.login()`` first finds the API, the issuer and the platform client through
the H2O Cloud discovery records. Both must return their ``Clients`` with a token provider whose
access tokens the real API accepts. The server is the one the product's own Python client tests
use (``clients/python/tests/support.py``): the all-in-one server on a free port.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Callable
from unittest import mock

REPO_ROOT = Path(__file__).resolve().parents[3]


def _load_support() -> ModuleType:
    # By path, under a name of its own: this suite's package is also called `tests`. Loaded once
    # per process (the other modules load it through `_conformance`), so all share one server.
    if "aiem_python_test_support" in sys.modules:
        return sys.modules["aiem_python_test_support"]
    path = REPO_ROOT / "clients" / "python" / "tests" / "support.py"
    spec = importlib.util.spec_from_file_location("aiem_python_test_support", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


support = _load_support()

import h2o_engine_manager  # noqa: E402
from h2o_authn import error as authn_error  # noqa: E402
from h2o_engine_manager.clients.login import Clients  # noqa: E402

PLATFORM_CLIENT_ID = "platform"
VERSIONS_PATH = "/v1/workspaces/global/daiEngineVersions"


class OfficialLoginTest(unittest.TestCase):
    def setUp(self) -> None:
        self.server = support.server()
        # Nothing of the machine's H2O CLI set-up may steer the official client: an empty config
        # file, no H2O_CLOUD_* overrides (a token endpoint there would skip the issuer), no proxy
        # for the local server.
        config_dir = tempfile.TemporaryDirectory()
        self.addCleanup(config_dir.cleanup)
        config = Path(config_dir.name) / "h2o-cli-config.toml"
        config.write_text("")
        env = {k: v for k, v in os.environ.items() if not k.startswith("H2O_CLOUD_") and k != "H2OCONFIG"}
        env.update({"H2OCONFIG": str(config), "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
        patcher = mock.patch.dict(os.environ, env, clear=True)
        patcher.start()
        self.addCleanup(patcher.stop)

    def refresh_token(self, user: str, *flags: str) -> str:
        """``npm run -s token -- --user USER --refresh ...`` against the test server's settings."""
        args = ["node", str(REPO_ROOT / "services" / "kit" / "bin" / "token.mjs"), "--user", user, "--refresh", *flags]
        result = subprocess.run(args, cwd=REPO_ROOT, env=self.server.env, capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout.strip()

    def token_provider(self, clients: Clients) -> Callable[[], str]:
        # The provider every client of the returned Clients signs its requests with.
        return clients.dai_engine_version_client.service_api.api_client._token_provider

    def call_api(self, token: str, path: str = VERSIONS_PATH) -> tuple[int, dict]:
        request = urllib.request.Request(
            self.server.url + path, headers={"Authorization": f"Bearer {token}", "Accept": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as e:
            return e.code, json.load(e)

    def assert_signed_in(self, clients: Clients) -> None:
        self.assertIsInstance(clients, Clients)
        self.assertEqual(clients.dai_engine_version_client.service_api.api_client.configuration.host, self.server.url)
        status, body = self.call_api(self.token_provider(clients)())
        self.assertEqual(status, 200, body)
        self.assertIn("daiEngineVersions", body)

    def test_login_custom_with_a_refresh_token(self) -> None:
        clients = h2o_engine_manager.login_custom(
            endpoint=self.server.url,
            refresh_token=self.refresh_token("official-custom", "--client", PLATFORM_CLIENT_ID),
            issuer_url=self.server.url + "/oidc",
            client_id=PLATFORM_CLIENT_ID,
        )
        self.assert_signed_in(clients)

    def test_login_through_discovery_with_a_platform_token(self) -> None:
        clients = h2o_engine_manager.login(
            environment=self.server.url,
            platform_token=self.refresh_token("official-discovery"),
        )
        self.assert_signed_in(clients)

    def test_the_access_token_is_the_users(self) -> None:
        # Only administrators may list engines across workspaces: --admin carries through the
        # refresh token into the access token, and its absence too.
        for flags, expected in ((("--admin",), 200), ((), 403)):
            clients = h2o_engine_manager.login(environment=self.server.url, platform_token=self.refresh_token("official-who", *flags))
            status, body = self.call_api(self.token_provider(clients)(), "/v1/workspaces/-/engines?pageSize=1")
            self.assertEqual(status, expected, body)

    def test_a_refresh_token_for_another_client_is_refused(self) -> None:
        with self.assertRaises(authn_error.TokenEndpointError) as caught:
            h2o_engine_manager.login_custom(
                endpoint=self.server.url,
                refresh_token=self.refresh_token("official-bound", "--client", "someone-else"),
                issuer_url=self.server.url + "/oidc",
                client_id=PLATFORM_CLIENT_ID,
            )
        self.assertEqual(caught.exception.error, "invalid_grant")

    def test_an_access_token_is_no_platform_token(self) -> None:
        with self.assertRaises(authn_error.TokenEndpointError) as caught:
            h2o_engine_manager.login(environment=self.server.url, platform_token=self.server.token("official-access"))
        self.assertEqual(caught.exception.error, "invalid_grant")


if __name__ == "__main__":
    unittest.main()
