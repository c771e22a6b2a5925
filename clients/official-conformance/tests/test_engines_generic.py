"""The mixed engine list through the generic ``EngineClient``.

``login()`` does not build this client: it is constructed with its own public arguments (the API
URL, a platform refresh token, the OIDC issuer and client id), exchanges the token itself, and,
unlike the other clients, raises the generated ``ApiException`` subclasses unwrapped. The engines
live in a workspace of this module's own, so the lists hold exactly what it created.
"""

from __future__ import annotations

import unittest

from . import _conformance as oc

from h2o_authn import error as authn_error  # noqa: E402
from h2o_engine_manager.clients.dai_engine_version.version import DAIEngineVersion  # noqa: E402
from h2o_engine_manager.clients.engine.client import EngineClient  # noqa: E402
from h2o_engine_manager.clients.engine.state import EngineState  # noqa: E402
from h2o_engine_manager.clients.engine.type import EngineType  # noqa: E402
from h2o_engine_manager.gen.exceptions import ApiException, ForbiddenException  # noqa: E402


class EngineClientTest(oc.ConformanceCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.workspace_id = oc.unique("oc-generic")
        clients = oc.member()
        cls.dai = clients.dai_engine_client.create_engine(
            workspace_id=cls.workspace_id, engine_id="dai", cpu=2, memory_bytes="8Gi", storage_bytes="32Gi",
            display_name="Generic DAI", annotations={"kind": "dai"},
            profile=f"{oc.GLOBAL}/daiEngineProfiles/default", dai_engine_version=f"{oc.GLOBAL}/daiEngineVersions/1.11.0")
        cls.h2o = clients.h2o_engine_client.create_engine(
            workspace_id=cls.workspace_id, engine_id="h2o", node_count=2, cpu=1, memory_bytes="2Gi", display_name="Generic H2O",
            profile=f"{oc.GLOBAL}/h2oEngineProfiles/default", h2o_engine_version=f"{oc.GLOBAL}/h2oEngineVersions/3.46.0")
        # Another member's engine in the same workspace, which the member does not see.
        cls.hidden = oc.other_member().h2o_engine_client.create_engine(
            workspace_id=cls.workspace_id, engine_id="hidden", display_name="Hidden",
            profile=f"{oc.GLOBAL}/h2oEngineProfiles/default", h2o_engine_version=f"{oc.GLOBAL}/h2oEngineVersions/3.46.0")
        cls.client = oc.engine_client(oc.MEMBER)
        cls.admin_client = oc.engine_client(oc.ADMIN, admin=True)

    @classmethod
    def tearDownClass(cls) -> None:
        for engine in (cls.dai, cls.h2o, cls.hidden):
            engine.delete(allow_missing=True)

    def test_lists_a_workspace(self) -> None:
        page = self.client.list_engines(workspace_id=self.workspace_id, order_by="name")
        self.assertEqual([e.name for e in page.engines], [self.dai.name, self.h2o.name])
        self.assertEqual(page.next_page_token, "")
        dai, h2o = page.engines
        self.assertEqual((dai.engine_type, dai.display_name, dai.cpu, dai.memory_bytes, dai.storage_bytes, dai.annotations),
                         (EngineType.TYPE_DRIVERLESS_AI, "Generic DAI", 2, "8Gi", "32Gi", {"kind": "dai"}))
        self.assertEqual((dai.version, dai.profile, dai.creator, dai.uid),
                         ("1.11.0", f"{oc.GLOBAL}/daiEngineProfiles/default", f"users/{oc.MEMBER}", self.dai.uid))
        self.assertEqual((h2o.engine_type, h2o.display_name, h2o.cpu, h2o.memory_bytes, h2o.version),
                         (EngineType.TYPE_H2O, "Generic H2O", 1, "2Gi", "3.46.0"))
        # Listed while it comes up: a DAI engine goes STARTING, CONNECTING, RUNNING at its own pace.
        self.assertIn(dai.state, (EngineState.STATE_STARTING, EngineState.STATE_CONNECTING, EngineState.STATE_RUNNING))
        self.assertFalse(dai.deprecated_version)

        first = self.client.list_engines(workspace_id=self.workspace_id, page_size=1, order_by="name desc")
        self.assertEqual([e.name for e in first.engines], [self.h2o.name])
        self.assertNotEqual(first.next_page_token, "")
        second = self.client.list_engines(workspace_id=self.workspace_id, page_size=1, page_token=first.next_page_token,
                                          order_by="name desc")
        self.assertEqual([e.name for e in second.engines], [self.dai.name])

        every = self.client.list_all_engines(workspace_id=self.workspace_id, order_by="create_time")
        self.assertEqual([e.name for e in every], [self.dai.name, self.h2o.name])
        only_h2o = self.client.list_all_engines(workspace_id=self.workspace_id, filter_expr='engine_id = "h2o"')
        self.assertEqual([e.name for e in only_h2o], [self.h2o.name])
        # An administrator sees every engine of the workspace.
        self.assertEqual({e.name for e in self.admin_client.list_all_engines(workspace_id=self.workspace_id)},
                         {self.dai.name, self.h2o.name, self.hidden.name})

    def test_as_the_real_service_lists(self) -> None:
        # Newest first unless told otherwise; `type` and `deleted_version` filter.
        self.assertEqual([e.name for e in self.client.list_all_engines(workspace_id=self.workspace_id)],
                         [self.h2o.name, self.dai.name])
        self.assertEqual([e.name for e in self.client.list_all_engines(workspace_id=self.workspace_id,
                                                                        filter_expr="type = TYPE_DRIVERLESS_AI")],
                         [self.dai.name])
        none = self.client.list_engines(workspace_id=self.workspace_id,
                                        filter_expr="type != TYPE_DRIVERLESS_AI AND type != TYPE_H2O AND type != TYPE_NOTEBOOK")
        self.assertEqual((none.engines, none.total_size, none.next_page_token), ([], 0, ""))
        self.assertEqual(self.client.list_engines(workspace_id=self.workspace_id, filter_expr="deleted_version = true").total_size, 0)
        # Visitable: one's own engines, and every H2O engine; not another's DAI engine.
        own = {e.name: e.visitable for e in self.client.list_all_engines(workspace_id=self.workspace_id)}
        self.assertEqual(own, {self.dai.name: True, self.h2o.name: True})
        seen = {e.name: e.visitable for e in self.admin_client.list_all_engines(workspace_id=self.workspace_id)}
        self.assertEqual(seen, {self.dai.name: False, self.h2o.name: True, self.hidden.name: True})

    def test_orders_versions_by_their_numbers(self) -> None:
        # 1.9.9 comes before 1.11.0, where text would put it after; in workspaces of its own.
        versions = f"workspaces/{oc.unique('oc-genv')}"
        workspace_id = oc.unique("oc-genv-engines")
        old = oc.admin().dai_engine_version_client.create_dai_engine_version(
            parent=versions, dai_engine_version=DAIEngineVersion(image="registry.example.com/dai:1.9.9"),
            dai_engine_version_id="1.9.9")
        engines = []
        try:
            for engine_id, version in (("old", old.name), ("new", f"{oc.GLOBAL}/daiEngineVersions/1.11.0")):
                engines.append(oc.member().dai_engine_client.create_engine(
                    workspace_id=workspace_id, engine_id=engine_id,
                    profile=f"{oc.GLOBAL}/daiEngineProfiles/default", dai_engine_version=version))
            ordered = self.client.list_all_engines(workspace_id=workspace_id, order_by="version")
            self.assertEqual([e.version for e in ordered], ["1.9.9", "1.11.0"])
            first = self.client.list_engines(workspace_id=workspace_id, order_by="version desc", page_size=1)
            second = self.client.list_engines(workspace_id=workspace_id, order_by="version desc", page_size=1,
                                              page_token=first.next_page_token)
            self.assertEqual([e.version for e in first.engines + second.engines], ["1.11.0", "1.9.9"])
            self.assertEqual(second.next_page_token, "")
        finally:
            for engine in engines:
                engine.delete(allow_missing=True)
            oc.admin().dai_engine_version_client.delete_all_dai_engine_versions(parent=versions)

    def test_lists_every_workspace(self) -> None:
        page = self.admin_client.list_engines_all_workspaces(page_size=2, filter_expr='display_name = "Generic DAI"')
        self.assertIn(self.dai.name, [e.name for e in page.engines])
        every = self.admin_client.list_all_engines_all_workspaces(order_by="name", filter_expr=f'creator = "users/{oc.OTHER}"')
        self.assertIn(self.hidden.name, [e.name for e in every])
        self.assertNotIn(self.dai.name, [e.name for e in every])

    def test_the_documented_filters_and_orders(self) -> None:
        # Every example of the official docstring of list_engines' filter, and each sort field.
        examples = [
            "cpu > 5", "gpu < 3", "cpu >= 5 AND gpu <= 3", "cpu != 5 OR gpu == 3", "NOT (cpu > 5 OR gpu < 3)",
            "-(cpu > 5 OR gpu < 3)", "NOT (cpu > 5 OR (gpu < 3))", "(cpu > 5 OR gpu < 3) AND memory_bytes != 1000",
            "(cpu > 5 OR gpu < 3) AND (NOT ((((memory_bytes = 1000)))))",
            'state = STATE_RUNNING AND create_time > "2012-04-21T11:30:00-04:00"', 'version >= "1.10.3"',
            "deprecated_version = false", "reconciling = true OR reconciling = false", 'engine_id = "*e*" OR display_name = "*e*"',
        ]
        for example in examples:
            with self.subTest(filter=example):
                self.client.list_engines(workspace_id=self.workspace_id, filter_expr=example)
        self.assertEqual([e.name for e in self.client.list_all_engines(workspace_id=self.workspace_id, filter_expr="cpu != 5 OR gpu == 3")],
                         [self.h2o.name, self.dai.name])
        self.assertEqual([e.name for e in self.client.list_all_engines(workspace_id=self.workspace_id, filter_expr='engine_id = "*a*"')],
                         [self.dai.name])
        for field in ("name", "version", "cpu", "gpu", "memory_bytes", "storage_bytes", "creator", "create_time", "update_time",
                      "delete_time", "resume_time", "display_name", "uid"):
            with self.subTest(order_by=field):
                self.client.list_engines(workspace_id=self.workspace_id, order_by=f"{field} desc")

    def test_errors(self) -> None:
        # Members may not list across workspaces: the generated exception, unwrapped.
        self.assertApiError(403, self.client.list_engines_all_workspaces, cls=ForbiddenException)
        self.assertApiError(403, self.client.list_all_engines_all_workspaces, cls=ForbiddenException)
        # A malformed workspace, a filter on an unknown field.
        self.assertApiError(400, self.client.list_engines, workspace_id="Not_A_Workspace", cls=ApiException)
        self.assertApiError(400, self.client.list_all_engines, workspace_id=self.workspace_id, filter_expr="colour = red", cls=ApiException)
        # A refresh token is checked when the client is built.
        with self.assertRaises(authn_error.TokenEndpointError):
            EngineClient(url=oc.server().url, platform_token="not-a-token", platform_oidc_url=oc.issuer_url(),
                         platform_oidc_client_id=oc.PLATFORM_CLIENT_ID)


if __name__ == "__main__":
    unittest.main()
