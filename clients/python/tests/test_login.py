"""Signing in against the real server: tokens, errors and the clients that login() returns."""

from __future__ import annotations

import dataclasses
import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from tests import support
from ai_engine_manager import Clients, CustomApiException, login
from ai_engine_manager._client_base import ClientBase
from ai_engine_manager.exception import ApiConnectionException


class LoginTest(unittest.TestCase):
    def test_clients_share_one_connection(self) -> None:
        clients = support.clients("alice", default_workspace_id="team-a")
        self.assertIsInstance(clients, Clients)
        attributes = [f.name for f in dataclasses.fields(Clients) if f.name not in ("connection_config", "sandbox_clients")]
        self.assertEqual(len(attributes), 21)
        connections = {id(getattr(clients, a)._connection) for a in attributes}
        self.assertEqual(len(connections), 1)
        for attribute in attributes:
            client = getattr(clients, attribute)
            self.assertIsInstance(client, ClientBase)
            self.assertEqual(client.default_workspace_id, "team-a")
        self.assertEqual(clients.connection_config.url, support.server().url)

    def test_a_bad_token_is_unauthenticated(self) -> None:
        clients = login(url=support.server().url, token="not-a-token")
        with self.assertRaises(CustomApiException) as caught:
            clients.dai_engine_client.list_engines()
        error = caught.exception
        self.assertEqual((error.status, error.reason, error.code, error.code_name), (401, "Unauthorized", 16, "UNAUTHENTICATED"))
        self.assertTrue(str(error).startswith("401 (Unauthorized): "))
        self.assertTrue(error.message)

    def test_a_good_token_is_accepted(self) -> None:
        engines = support.clients("alice").engine_client
        try:
            page = engines.list_engines()
        except CustomApiException as e:
            # Only a service that has not landed yet may refuse the call, never authentication.
            self.assertEqual(e.code_name, "UNIMPLEMENTED", str(e))
        else:
            self.assertEqual(page.engines, [])

    def test_unknown_route_is_not_found(self) -> None:
        connection = support.clients("alice").dai_engine_client._connection
        with self.assertRaises(CustomApiException) as caught:
            connection.request("GET", "/v1/workspaces/default/noSuchCollection")
        self.assertEqual((caught.exception.status, caught.exception.code_name), (404, "NOT_FOUND"))

    def test_environment_and_platform_token_through_discovery(self) -> None:
        server = support.server()
        clients = login(server.url, platform_token=server.token("alice", refresh=True), default_workspace_id="team-a")
        # The refresh token was exchanged at the embedded issuer for an access token of alice's.
        self.assertEqual(clients.connection_config.url.rstrip("/"), server.url.rstrip("/"))
        self.assertNotEqual(clients.connection_config.token_provider(), server.token("alice", refresh=True))
        self.assertEqual(clients.engine_client._workspace(None), "workspaces/team-a")
        self.assertEqual(clients.engine_client.list_engines().engines, [])
        # A refresh token the issuer does not accept fails at login, as with the official client.
        with self.assertRaises(CustomApiException) as caught:
            login(environment=server.url, platform_token=server.token("alice"))
        self.assertEqual(caught.exception.status, 400)

    def test_environment_and_token_from_the_cli_configuration_and_variables(self) -> None:
        server = support.server()
        refresh = server.token("bob", refresh=True)
        with tempfile.TemporaryDirectory() as directory:
            config = Path(directory, "h2o-cli-config.toml")
            config.write_text(f'Endpoint = "{server.url}"\nPlatformClientID = "platform"\nPlatformToken = "{refresh}"\n')
            clients = login(config_path=str(config))
            self.assertEqual(clients.engine_client.list_engines().engines, [])
            with mock.patch.dict(os.environ, {"H2OCONFIG": str(config)}):
                self.assertEqual(login().connection_config.url.rstrip("/"), server.url.rstrip("/"))
            # The file's token is not sent to an environment other than the file's Endpoint.
            config.write_text(f'Endpoint = "http://elsewhere.invalid"\nPlatformClientID = "platform"\nPlatformToken = "{refresh}"\n')
            with self.assertRaisesRegex(ValueError, "platform_token"):
                login(environment=server.url, config_path=str(config))
        with mock.patch.dict(os.environ, {"H2O_CLOUD_ENVIRONMENT": server.url, "H2O_CLOUD_CLIENT_PLATFORM_TOKEN": refresh, "H2OCONFIG": ""}):
            self.assertEqual(login().engine_client.list_engines().engines, [])
        with mock.patch.dict(os.environ, {"H2O_CLOUD_ENVIRONMENT": "", "H2O_CLOUD_DISCOVERY": "", "H2OCONFIG": "", "HOME": "/nonexistent"}):
            with self.assertRaisesRegex(LookupError, "no environment"):
                login()

    def test_unreachable_server(self) -> None:
        clients = login(url=f"http://127.0.0.1:{support.free_port()}", token="t", timeout_seconds=5)
        with self.assertRaises(ApiConnectionException):
            clients.engine_client.list_engines()


if __name__ == "__main__":
    unittest.main()
