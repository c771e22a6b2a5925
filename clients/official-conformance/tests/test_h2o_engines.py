"""H2O engines through ``H2OEngineClient`` and the ``H2OEngine`` objects it returns.

The engines are the local runtime's stand-in H2O servers. One engine goes through its life cycle
(create, wait, logs, connection config, terminate, delete); the size calculations and the
client-chosen id, profile and version are checked beside it.
"""

from __future__ import annotations

import unittest
import urllib.request
from urllib.parse import urlparse

from . import _conformance as oc
from ._log_stream import open_log_stream

from h2o_engine_manager.clients.constraint.profile_constraint_duration import ProfileConstraintDuration  # noqa: E402
from h2o_engine_manager.clients.constraint.profile_constraint_numeric import ProfileConstraintNumeric  # noqa: E402
from h2o_engine_manager.clients.h2o_engine.h2o_engine import H2OEngine  # noqa: E402
from h2o_engine_manager.clients.h2o_engine.size import H2OEngineSize, H2OEngineSizeLimits  # noqa: E402
from h2o_engine_manager.clients.h2o_engine.state import H2OEngineState  # noqa: E402
from h2o_engine_manager.clients.h2o_engine_profile.h2o_engine_profile import H2OEngineProfile  # noqa: E402

WORKSPACE = "default"
PROFILE = f"{oc.GLOBAL}/h2oEngineProfiles/default"
VERSION = f"{oc.GLOBAL}/h2oEngineVersions/3.46.0"
WAIT = 60


class H2OEngineTest(oc.ConformanceCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.clients = oc.member()
        cls.client = cls.clients.h2o_engine_client
        # A profile in the global workspace that only holders of a role may use.
        cls.restricted = oc.admin().h2o_engine_profile_client.create_h2o_engine_profile(
            parent=oc.GLOBAL,
            h2o_engine_profile=H2OEngineProfile(
                node_count_constraint=ProfileConstraintNumeric("1", "1"),
                cpu_constraint=ProfileConstraintNumeric("1", "1"),
                gpu_constraint=ProfileConstraintNumeric("0", "0"),
                memory_bytes_constraint=ProfileConstraintNumeric("1Gi", "4Gi"),
                max_idle_duration_constraint=ProfileConstraintDuration("0s", "1h"),
                max_running_duration_constraint=ProfileConstraintDuration("0s", "8h"),
                assigned_oidc_roles_enabled=True,
                assigned_oidc_roles=["oc-h2o-role"],
                priority=99,
            ),
            h2o_engine_profile_id=oc.unique("oc-restricted"),
        )

    @classmethod
    def tearDownClass(cls) -> None:
        oc.admin().h2o_engine_profile_client.delete_h2o_engine_profile(name=cls.restricted.name)

    def create(self, engine_id: str, **overrides: object) -> H2OEngine:
        args = dict(
            workspace_id=WORKSPACE,
            engine_id=engine_id,
            node_count=2,
            cpu=2,
            gpu=0,
            memory_bytes="8Gi",
            max_idle_duration="30m",
            max_running_duration="12h",
            display_name="Conformance H2O",
            annotations={"team": "conformance"},
            profile=PROFILE,
            h2o_engine_version=VERSION,
        )
        args.update(overrides)
        return self.client.create_engine(**args)

    def test_life_cycle(self) -> None:
        engine_id = oc.unique("oc-h2o")
        fields = dict(name=f"workspaces/{WORKSPACE}/h2oEngines/{engine_id}", node_count=2, cpu=2, gpu=0, memory_bytes="8Gi",
                      max_idle_duration="30m", max_running_duration="12h", display_name="Conformance H2O",
                      annotations={"team": "conformance"}, profile=PROFILE, h2o_engine_version=VERSION,
                      creator=f"users/{oc.MEMBER}")

        checked = self.create(engine_id, validate_only=True)
        self.assertEqual(checked.node_count, 2)
        self.assertApiError(404, self.client.get_engine, engine_id=engine_id, workspace_id=WORKSPACE)

        engine = self.create(engine_id)
        for field, value in fields.items():
            self.assertEqual(getattr(engine, field), value, field)
        self.assertEqual(engine.profile_info.name, PROFILE)
        self.assertEqual(engine.h2o_engine_version_info.name, VERSION)
        self.assertEqual(engine.state, H2OEngineState.STATE_STARTING)
        # From creation on: the name is H2O's context path, Flow's page the login URL.
        self.assertEqual(engine.api_url, f"{oc.server().url}/workspaces/{WORKSPACE}/h2oEngines/{engine_id}")
        self.assertEqual(engine.login_url, f"{engine.api_url}/flow/index.html")
        with self.assertRaises(RuntimeError):
            engine.get_connection_config()  # only a running engine has one

        engine.wait(timeout_seconds=WAIT)
        self.assertEqual(engine.state, H2OEngineState.STATE_RUNNING)
        got = self.client.get_engine(engine_id=engine_id, workspace_id=WORKSPACE)
        self.assertEqual(got.state, H2OEngineState.STATE_RUNNING)
        for field, value in fields.items():
            self.assertEqual(getattr(got, field), value, field)
        self.assertTrue(got.login_url.startswith(oc.server().url), got.login_url)

        config = got.get_connection_config()
        self.assertEqual(config, {"https": True, "verify_ssl_certificates": True, "cacert": "", "context_path": got.name,
                                  "ip": urlparse(got.login_url).hostname, "port": 443})
        plain = got.get_connection_config(https=False, verify_ssl_certificates=False, cacert=None, port=oc.server().port)
        self.assertEqual(plain, dict(config, https=False, verify_ssl_certificates=False, cacert=None, port=oc.server().port))

        logs = got.download_logs()
        self.assertIn("H2O 3.46.0", logs)
        token = self.client.client_info.token_provider()
        # The login URL serves H2O Flow's page, to the creator.
        page = urllib.request.urlopen(urllib.request.Request(got.login_url, headers={"Authorization": f"Bearer {token}"}))
        self.assertEqual(page.status, 200)
        self.assertIn("H2O Flow", page.read().decode())
        # The log stream: a line per message, the same lines as the download.
        stream = open_log_stream(oc.server().url, got.name, token)
        self.assertEqual(stream.status, 101)
        self.assertEqual([stream.recv(), stream.recv()], logs.splitlines(keepends=True)[:2])
        stream.close()
        self.assertEqual(open_log_stream(oc.server().url, got.name, None).status, 401)
        other = oc.other_member().h2o_engine_client.client_info.token_provider()
        self.assertEqual(open_log_stream(oc.server().url, got.name, other).status, 404)

        got.terminate()
        self.assertIn(got.state, (H2OEngineState.STATE_TERMINATING, H2OEngineState.STATE_TERMINATED))
        oc.run_async(got.wait_async(timeout_seconds=WAIT))
        self.assertEqual(got.state, H2OEngineState.STATE_TERMINATED)
        with self.assertRaises(RuntimeError):
            got.get_connection_config()
        # Terminating twice is refused.
        self.assertApiError(400, got.terminate)
        # Not running: the stream says so, in the real service's words.
        stream = open_log_stream(oc.server().url, got.name, token, follow=False)
        self.assertEqual((stream.recv(), stream.recv()), ("H2O logs are not available yet", None))
        stream.close()

        got.delete(validate_only=True)
        self.assertEqual(self.client.get_engine(engine_id=engine_id, workspace_id=WORKSPACE).state, H2OEngineState.STATE_TERMINATED)
        got.delete()
        self.assertEqual(got.state, H2OEngineState.STATE_DELETING)
        got.wait(timeout_seconds=WAIT)
        self.assertApiError(404, self.client.get_engine, engine_id=engine_id, workspace_id=WORKSPACE)
        got.delete(allow_missing=True)
        self.assertApiError(404, got.delete)

    def test_client_choices_and_lists(self) -> None:
        first_profile = self.clients.h2o_engine_profile_client.get_first_h2o_engine_profile(workspace=oc.GLOBAL)
        first_version = self.clients.h2o_engine_version_client.get_first_h2o_engine_version(workspace=oc.GLOBAL)
        self.assertEqual(self.client.generate_engine_id(display_name="OC Generated H2O", workspace_id=WORKSPACE), "oc-generated-h2o")
        engine = self.client.create_engine(workspace_id=WORKSPACE, display_name="OC Generated H2O")
        self.addCleanup(engine.delete, allow_missing=True)
        self.assertEqual(engine.name, f"workspaces/{WORKSPACE}/h2oEngines/oc-generated-h2o")
        self.assertEqual(engine.profile, first_profile.name)
        self.assertEqual(engine.h2o_engine_version, first_version.name)
        self.assertEqual((engine.node_count, engine.cpu, engine.gpu, engine.memory_bytes), (1, 1, 0, "4Gi"))
        self.assertRegex(self.client.generate_engine_id(display_name="OC Generated H2O", workspace_id=WORKSPACE),
                         r"^oc-generated-h2o-[0-9]{4}$")

        other = self.create(oc.unique("oc-h2o-list"), display_name="Listed H2O")
        self.addCleanup(other.delete, allow_missing=True)
        page = self.client.list_engines(workspace_id=WORKSPACE, page_size=1, order_by="create_time desc")
        self.assertEqual([e.name for e in page.engines], [other.name])
        self.assertNotEqual(page.next_page_token, "")
        second = self.client.list_engines(workspace_id=WORKSPACE, page_size=1, page_token=page.next_page_token,
                                          order_by="create_time desc")
        self.assertEqual([e.name for e in second.engines], [engine.name])
        self.assertEqual([e.name for e in self.client.list_all_engines(workspace_id=WORKSPACE, filter='display_name = "Listed H2O"')],
                         [other.name])
        names = [e.name for e in self.client.list_all_engines(order_by="name desc")]
        self.assertIn(engine.name, names)
        self.assertEqual(names, sorted(names, reverse=True))

    def test_size_calculations(self) -> None:
        # A raw dataset needs five times its size: 3 GiB -> 15 GiB, at most 5 GiB a node -> 3 nodes.
        raw = self.client.calculate_h2o_engine_size_raw_dataset(
            dataset_size_bytes="3Gi",
            limits=H2OEngineSizeLimits(memory_bytes_per_node_min="1Gi", node_count_min=1, memory_bytes_per_node_max="5Gi", node_count_max=4),
        )
        self.assertEqual(raw, H2OEngineSize(memory_bytes="5Gi", node_count=3))
        # Compressed: rows x columns x 32 bytes = 1024 MB, over at least 2 nodes of at least 512 MiB.
        compressed = self.client.calculate_h2o_engine_size_compressed_dataset(
            rows_count=1_000_000, columns_count=32,
            limits=H2OEngineSizeLimits(memory_bytes_per_node_min="512Mi", node_count_min=2),
        )
        self.assertEqual(compressed, H2OEngineSize(memory_bytes="512Mi", node_count=2))
        error = self.assertApiError(400, self.client.calculate_h2o_engine_size_raw_dataset, dataset_size_bytes="0",
                                    limits=H2OEngineSizeLimits(memory_bytes_per_node_min="1Gi", node_count_min=1))
        self.assertIn("dataset_size_bytes", str(error))
        self.assertApiError(400, self.client.calculate_h2o_engine_size_compressed_dataset, rows_count=10, columns_count=10,
                            limits=H2OEngineSizeLimits(memory_bytes_per_node_min="1Gi", node_count_min=3, node_count_max=2))

    def test_errors(self) -> None:
        engine_id = oc.unique("oc-h2o-err")
        self.assertApiError(404, self.client.get_engine, engine_id="oc-no-such-engine", workspace_id=WORKSPACE)
        self.assertIn("node_count", str(self.assertApiError(400, self.create, engine_id, node_count=0)))
        engine = self.create(engine_id)
        self.addCleanup(engine.delete, allow_missing=True)
        self.assertApiError(409, self.create, engine_id)
        # A profile the member holds no role for is hidden from them: named as missing (400).
        hidden = self.assertApiError(400, self.create, oc.unique("oc-h2o-denied"), profile=self.restricted.name)
        self.assertIn(f"h2oEngineProfile {self.restricted.name} not found", str(hidden))
        # Another member does not see the engine at all.
        self.assertApiError(404, oc.other_member().h2o_engine_client.get_engine, engine_id=engine_id, workspace_id=WORKSPACE)


if __name__ == "__main__":
    unittest.main()
