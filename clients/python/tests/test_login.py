"""Signing in against the real server: tokens, errors and the clients that login() returns."""

from __future__ import annotations

import dataclasses
import unittest

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

    def test_platform_token_and_environment_names(self) -> None:
        clients = login(environment=support.server().url, platform_token=support.server().token("alice"))
        self.assertEqual(clients.connection_config.token_provider(), support.server().token("alice"))
        self.assertEqual(clients.engine_client._workspace(None), "workspaces/default")

    def test_unreachable_server(self) -> None:
        clients = login(url=f"http://127.0.0.1:{support.free_port()}", token="t", timeout_seconds=5)
        with self.assertRaises(ApiConnectionException):
            clients.engine_client.list_engines()


if __name__ == "__main__":
    unittest.main()
