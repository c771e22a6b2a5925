"""The Driverless AI, H2O, notebook and mixed engine clients against the real server.

Engines are created in a workspace of their own per test, from the demo catalogue in
``workspaces/global`` (profiles ``default``, versions with the alias ``latest``, notebook image
``default``). These tests skip while the engine service answers UNIMPLEMENTED.
"""

from __future__ import annotations

import asyncio

import time
import unittest

from tests import support
from tests.support import requires, unique
from ai_engine_manager.connection_config import ConnectionConfig
from ai_engine_manager.dai_engine.dai_engine import DAIEngine
from ai_engine_manager.dai_engine.state import DAIEngineState
from ai_engine_manager.dai_engine_version.version import DAIEngineVersion
from ai_engine_manager.engine.type import EngineType
from ai_engine_manager.exception import CustomApiException
from ai_engine_manager.h2o_engine.size import H2OEngineSizeLimits
from ai_engine_manager.h2o_engine.state import H2OEngineState
from ai_engine_manager.notebook_engine.state import NotebookEngineState

WAIT = 60  # seconds; the all-in-one runtime settles engines far sooner


class EngineTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.admin = support.clients("py-admin", admin=True)
        cls.alice = support.clients("alice")
        cls.bob = support.clients("bob")

    def setUp(self) -> None:
        self.workspace_id = unique("py")

    def assertCode(self, code_name: str, call, *args, **kwargs) -> CustomApiException:  # noqa: N802
        with self.assertRaises(CustomApiException) as caught:
            call(*args, **kwargs)
        self.assertEqual(caught.exception.code_name, code_name, str(caught.exception))
        return caught.exception


@requires("dai_engine", "dai_engine_profile", "dai_engine_version")
class DAIEngineClientTest(EngineTestCase):
    def test_engine_lifecycle(self) -> None:
        dai = self.alice.dai_engine_client
        latest = self.alice.dai_engine_version_client.get_dai_engine_version(name="workspaces/global/daiEngineVersions/latest")

        checked = dai.create_engine(workspace_id=self.workspace_id, engine_id="checked", validate_only=True)
        self.assertEqual(checked.name, f"workspaces/{self.workspace_id}/daiEngines/checked")
        self.assertCode("NOT_FOUND", dai.get_engine, "checked", workspace_id=self.workspace_id)

        engine = dai.create_engine(
            workspace_id=self.workspace_id,
            display_name="Py DAI",
            cpu=1,
            memory_bytes="2Gi",
            storage_bytes=4 * 1024**3,
            max_idle_duration="2h",
            max_running_duration="1d",
            config={"max_cores": "1"},
            annotations={"suite": "python"},
        )
        self.assertIsInstance(engine, DAIEngine)
        self.assertEqual(engine.engine_id, "py-dai", "the id comes from the display name")
        self.assertEqual(engine.workspace_id, self.workspace_id)
        self.assertEqual((engine.memory_bytes, engine.storage_bytes), ("2Gi", "4Gi"))
        self.assertEqual((engine.max_idle_duration, engine.max_running_duration), ("2h", "1d"))
        self.assertEqual(engine.profile, "workspaces/global/daiEngineProfiles/default")
        self.assertEqual(engine.dai_engine_version, latest.name)
        self.assertEqual(engine.annotations, {"suite": "python"})
        self.assertEqual(engine.creator, "users/alice")

        second = dai.create_engine(workspace_id=self.workspace_id, display_name="Py DAI")
        self.assertRegex(second.engine_id, r"^py-dai-[1-9][0-9]{3}$", "a taken id gets a suffix")
        second.delete()

        # Named by its URLs from creation on, as on the real service.
        self.assertEqual(engine.api_url, f"{support.server().url}/{engine.name}")
        self.assertEqual(engine.login_url, f"{engine.api_url}/oidc/login")
        engine.wait(timeout_seconds=WAIT)
        self.assertEqual(engine.state, DAIEngineState.STATE_RUNNING)
        self.assertFalse(engine.reconciling)
        config = engine.get_connection_config()
        self.assertIsInstance(config, ConnectionConfig)
        self.assertEqual(config.url, engine.api_url)

        engine.refresh()
        fetched = dai.get_engine(engine_id="py-dai", workspace_id=self.workspace_id)
        self.assertEqual(fetched.name, engine.name)
        self.assertEqual(dai.get_engine(engine.name).uid, engine.uid)
        page = dai.list_engines(workspace_id=self.workspace_id, page_size=1, order_by="display_name")
        self.assertEqual(len(page.dai_engines), 1)
        self.assertIs(page.engines, page.dai_engines)
        self.assertGreaterEqual(page.total_size, 1)
        running = dai.list_all_engines(workspace_id=self.workspace_id, filter="state = STATE_RUNNING", page_size=1)
        self.assertIn(engine.name, [e.name for e in running])

        # A running engine is not updated: it must be paused or failed first.
        engine.display_name = "Py DAI renamed"
        self.assertCode("FAILED_PRECONDITION", engine.update, "display_name")
        engine.refresh()
        # allow_missing creates an engine that does not exist yet from the object.
        twin = dai.get_engine(engine.name)
        twin.name = twin.name.rsplit("/", 1)[0] + "/py-dai-twin"
        twin.display_name = "Py DAI twin"
        twin.update(update_mask="display_name", allow_missing=True)
        self.assertEqual((twin.engine_id, twin.display_name), ("py-dai-twin", "Py DAI twin"))
        self.assertNotEqual(twin.uid, engine.uid)
        asyncio.run(twin.wait_async(timeout_seconds=WAIT))
        self.assertEqual(twin.state, DAIEngineState.STATE_RUNNING)
        twin.delete()

        self.assertIsInstance(engine.download_logs(), str)

        engine.pause(validate_only=True)
        engine.pause()
        self.assertIn(engine.state, (DAIEngineState.STATE_PAUSING, DAIEngineState.STATE_PAUSED))
        engine.wait(timeout_seconds=WAIT)
        self.assertEqual(engine.state, DAIEngineState.STATE_PAUSED)
        # Pausing a paused engine is no change, as on the real service.
        engine.pause()
        self.assertEqual(engine.state, DAIEngineState.STATE_PAUSED)

        engine.display_name = "Py DAI renamed"
        engine.max_idle_duration = "3h"
        engine.update(update_mask="display_name,max_idle_duration")
        self.assertEqual((engine.display_name, engine.max_idle_duration), ("Py DAI renamed", "3h"))
        engine.cpu = 2
        engine.update(update_mask=["cpu"], validate_only=True)
        self.assertEqual(dai.get_engine(engine.name).cpu, 1, "validate_only changes nothing")

        newer = self.admin.dai_engine_version_client.create_dai_engine_version(
            parent="workspaces/global",
            dai_engine_version=DAIEngineVersion(image="h2oai/dai:1.11.1"),
            dai_engine_version_id="1.11.1-" + unique("py").replace("-", ""),
        )
        # The engine service learns of new versions through the catalogue's replication stream,
        # a moment after the catalogue answered.
        deadline = time.monotonic() + 10
        while True:
            try:
                engine.upgrade_dai_engine_version(new_dai_engine_version=newer.name)
                break
            except CustomApiException as e:
                if "not found" not in str(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.assertEqual(engine.dai_engine_version, newer.name)

        engine.resume()
        engine.wait(timeout_seconds=WAIT)
        self.assertEqual(engine.state, DAIEngineState.STATE_RUNNING)

        engine.resize_storage(new_storage="8Gi")
        self.assertTrue(engine.storage_resizing or engine.storage_bytes == "8Gi")
        # One resize at a time: a second one while the first runs is refused for the state. The
        # first may end between the two calls (the local runtime resizes at once): then the second
        # is a resize of its own. (services/engine/src/calls.suite.ts holds a resize to check the
        # refusal every time.)
        want = "8Gi"
        if engine.storage_resizing:
            try:
                engine.resize_storage(new_storage="16Gi")
                want = "16Gi"
            except CustomApiException as refused:
                self.assertEqual(refused.code_name, "FAILED_PRECONDITION", str(refused))
        deadline = time.monotonic() + WAIT
        while engine.storage_resizing and time.monotonic() < deadline:
            time.sleep(0.2)
            engine.refresh()
        self.assertFalse(engine.storage_resizing)
        self.assertEqual(engine.storage_bytes, want)
        # Storage only grows.
        self.assertCode("INVALID_ARGUMENT", engine.resize_storage, "1Gi")

        self.assertCode("PERMISSION_DENIED", engine.migrate_creator, "users/bob")
        as_admin = self.admin.dai_engine_client.get_engine(engine.name)
        as_admin.migrate_creator(new_creator="users/bob")
        self.assertEqual(as_admin.creator, "users/bob")

        as_admin.delete(validate_only=True)
        as_admin.delete()
        self.assertEqual(as_admin.state, DAIEngineState.STATE_DELETING)
        as_admin.wait(timeout_seconds=WAIT)
        self.assertCode("NOT_FOUND", self.admin.dai_engine_client.get_engine, engine.name)
        as_admin.delete(allow_missing=True)

    def test_values_outside_the_profile_are_rejected(self) -> None:
        error = self.assertCode(
            "INVALID_ARGUMENT", self.alice.dai_engine_client.create_engine, workspace_id=self.workspace_id, engine_id="tiny",
            memory_bytes="1Mi",
        )
        self.assertEqual(error.status, 400)

    def test_unbound_engine_refuses_actions(self) -> None:
        self.assertRaisesRegex(RuntimeError, "not bound", DAIEngine(name="workspaces/w/daiEngines/e").pause)


@requires("h2o_engine", "h2o_engine_profile", "h2o_engine_version")
class H2OEngineClientTest(EngineTestCase):
    def test_size_recommendations(self) -> None:
        h2o = self.alice.h2o_engine_client
        size = h2o.calculate_h2o_engine_size_raw_dataset(dataset_size_bytes="1k", memory_bytes_per_node_min=100, node_count_min=2)
        self.assertEqual((size.node_count, size.memory_bytes), (2, "2500"))
        capped = h2o.calculate_h2o_engine_size_raw_dataset(
            dataset_size_bytes=1000,
            limits=H2OEngineSizeLimits(memory_bytes_per_node_min="100", memory_bytes_per_node_max="200", node_count_min=1,
                                       node_count_max=2),
        )
        self.assertEqual((capped.node_count, capped.memory_bytes), (2, "200"))
        compressed = h2o.calculate_h2o_engine_size_compressed_dataset(
            rows_count=100, columns_count=100, memory_bytes_per_node_min=100, node_count_min=2
        )
        self.assertEqual((compressed.node_count, compressed.memory_bytes), (2, "160k"))
        self.assertCode("INVALID_ARGUMENT", h2o.calculate_h2o_engine_size_raw_dataset, 0, memory_bytes_per_node_min=1, node_count_min=1)

    def test_engine_lifecycle(self) -> None:
        h2o = self.alice.h2o_engine_client
        engine = h2o.create_engine(
            workspace_id=self.workspace_id, engine_id="py-h2o", node_count=1, cpu=1, memory_bytes="2Gi",
            max_idle_duration="30m", display_name="Py H2O", annotations={"suite": "python"},
        )
        self.assertEqual((engine.engine_id, engine.node_count, engine.memory_bytes), ("py-h2o", 1, "2Gi"))
        self.assertEqual(engine.workspace_id, self.workspace_id)
        h2o.create_engine(workspace_id=self.workspace_id, engine_id="py-h2o-check", validate_only=True)
        self.assertCode("NOT_FOUND", h2o.get_engine, "py-h2o-check", self.workspace_id)

        asyncio.run(engine.wait_async(timeout_seconds=WAIT))
        self.assertEqual(engine.state, H2OEngineState.STATE_RUNNING)
        self.assertEqual(h2o.get_engine("py-h2o", workspace_id=self.workspace_id).uid, engine.uid)
        self.assertEqual(h2o.list_engines(workspace_id=self.workspace_id).total_size, 1)
        self.assertEqual([e.name for e in h2o.list_all_engines(workspace_id=self.workspace_id, filter="node_count >= 1")],
                         [engine.name])
        self.assertIsInstance(engine.download_logs(), str)
        if engine.api_url:
            self.assertEqual(engine.get_connection_config().url, engine.api_url)

        engine.terminate()
        engine.wait(timeout_seconds=WAIT)
        self.assertEqual(engine.state, H2OEngineState.STATE_TERMINATED)
        # An H2O engine is named by its URL from creation on, as on the real service.
        self.assertEqual(engine.get_connection_config().url, engine.api_url)
        engine.delete()
        engine.wait(timeout_seconds=WAIT)
        self.assertCode("NOT_FOUND", engine.refresh)
        engine.delete(allow_missing=True)


@requires("notebook_engine", "notebook_engine_profile", "notebook_engine_image")
class NotebookEngineClientTest(EngineTestCase):
    def test_engine_lifecycle(self) -> None:
        notebooks = self.alice.notebook_engine_client
        parent = f"workspaces/{self.workspace_id}"
        engine = notebooks.create_notebook_engine(
            parent=parent,
            notebook_engine_id="py-nb",
            profile="workspaces/global/notebookEngineProfiles/default",
            notebook_image="workspaces/global/notebookEngineImages/default",
            display_name="Py notebook",
            cpu=1,
            memory_bytes="2Gi",
            storage_bytes="2Gi",
            max_idle_duration="1h",
        )
        self.assertEqual((engine.engine_id, engine.memory_bytes, engine.max_idle_duration), ("py-nb", "2Gi", "1h"))
        self.assertFalse(engine.shared)
        checked = notebooks.create_notebook_engine(
            parent=self.workspace_id, notebook_engine_id="py-nb-check", notebook_engine=engine, validate_only=True
        )
        self.assertEqual(checked.name, f"{parent}/notebookEngines/py-nb-check")
        self.assertCode("NOT_FOUND", notebooks.get_notebook_engine, checked.name)

        engine.wait(timeout_seconds=WAIT)
        self.assertEqual(engine.state, NotebookEngineState.STATE_RUNNING)
        self.assertTrue(engine.access())
        self.assertEqual(notebooks.access_notebook_engine(name=engine.name), engine.access())

        engine.pause()
        engine.wait(timeout_seconds=WAIT)
        self.assertEqual(engine.state, NotebookEngineState.STATE_PAUSED)
        self.assertCode("FAILED_PRECONDITION", engine.access)
        engine.memory_bytes = "3Gi"
        engine.update(update_mask="memory_bytes")
        self.assertEqual(engine.memory_bytes, "3Gi")
        # The same image again is no change.
        engine.update(update_mask="notebook_image")
        engine.display_name = "Py notebook (renamed)"
        renamed = notebooks.update_notebook_engine(engine, update_mask="display_name")
        self.assertEqual(renamed.display_name, "Py notebook (renamed)")
        engine.resume()
        engine.wait(timeout_seconds=WAIT)
        self.assertEqual(engine.state, NotebookEngineState.STATE_RUNNING)

        engine.resize_storage(new_storage="3Gi")
        self.assertTrue(engine.storage_resizing or engine.storage_bytes == "3Gi")

        self.assertCode("FAILED_PRECONDITION", notebooks.update_notebook_engine, engine, update_mask="display_name")
        self.assertEqual(notebooks.get_notebook_engine(engine.name).display_name, "Py notebook (renamed)")
        self.assertEqual(notebooks.list_notebook_engines(parent=parent).total_size, 1)
        self.assertEqual([e.name for e in notebooks.list_all_notebook_engines(parent=parent, filter="state = STATE_RUNNING")],
                         [engine.name])

        engine.delete()
        self.assertEqual(engine.state, NotebookEngineState.STATE_DELETING)
        engine.wait(timeout_seconds=WAIT)
        self.assertCode("NOT_FOUND", notebooks.delete_notebook_engine, engine.name)

    def test_generated_id(self) -> None:
        notebooks = self.alice.notebook_engine_client
        engine = notebooks.create_notebook_engine(
            parent=self.workspace_id,
            profile="workspaces/global/notebookEngineProfiles/default",
            notebook_image="workspaces/global/notebookEngineImages/default",
            display_name="Data Exploration",
        )
        self.assertEqual(engine.engine_id, "data-exploration")
        notebooks.delete_notebook_engine(engine.name)


@requires("engine", "dai_engine", "notebook_engine", "dai_engine_profile", "notebook_engine_profile", "notebook_engine_image")
class EngineClientTest(EngineTestCase):
    def test_mixed_list(self) -> None:
        dai = self.alice.dai_engine_client.create_engine(workspace_id=self.workspace_id, engine_id="mixed-dai")
        notebook = self.alice.notebook_engine_client.create_notebook_engine(
            parent=self.workspace_id,
            notebook_engine_id="mixed-nb",
            profile="workspaces/global/notebookEngineProfiles/default",
            notebook_image="workspaces/global/notebookEngineImages/default",
        )
        engines = self.alice.engine_client
        page = engines.list_engines(workspace_id=self.workspace_id, page_size=1)
        self.assertEqual((len(page.engines), page.total_size), (1, 2))
        self.assertTrue(page.next_page_token)
        both = {e.name: e.type for e in engines.list_all_engines(workspace_id=self.workspace_id, page_size=1)}
        self.assertEqual(both, {dai.name: EngineType.TYPE_DRIVERLESS_AI, notebook.name: EngineType.TYPE_NOTEBOOK})
        only_dai = engines.list_all_engines(workspace_id=self.workspace_id, filter_expr=f'name = "workspaces/{self.workspace_id}/daiEngines/*"')
        self.assertEqual([e.name for e in only_dai], [dai.name])
        self.assertEqual(self.bob.engine_client.list_all_engines(workspace_id=self.workspace_id), [], "others' engines are hidden")

        everywhere = {e.name for e in self.admin.engine_client.list_all_engines_all_workspaces()}
        self.assertTrue({dai.name, notebook.name} <= everywhere)
        self.assertCode("PERMISSION_DENIED", self.alice.engine_client.list_all_engines_all_workspaces)
        # page_size, page_token, order_by, filter_expr: the official order.
        first = self.admin.engine_client.list_engines_all_workspaces(1, "", "name", f'name = "workspaces/{self.workspace_id}/*"')
        self.assertEqual((len(first.engines), first.total_size), (1, 2))
        rest = self.admin.engine_client.list_engines_all_workspaces(1, first.next_page_token, "name", f'name = "workspaces/{self.workspace_id}/*"')
        self.assertEqual({first.engines[0].name, rest.engines[0].name}, {dai.name, notebook.name})
        self.assertEqual(rest.next_page_token, "")
        self.assertCode("PERMISSION_DENIED", self.alice.engine_client.list_engines_all_workspaces)

        dai.delete()
        notebook.delete()


if __name__ == "__main__":
    unittest.main()
