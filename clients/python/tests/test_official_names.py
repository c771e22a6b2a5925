"""What was added or reordered to match the official client's names, against the real server.

``Clients.sandbox_clients`` and ``dai_license_client``; ``DAIEngineClient.generate_engine_id`` and
``set_default_workspace_id``; ``H2OEngineClient.generate_engine_id``; the engine clients'
``create_engine`` with positional arguments in the official order; the H2O size calculations
with ``limits`` positional; ``NotebookEngineClient``'s ``pause_notebook_engine``,
``resume_notebook_engine``, ``resize_notebook_engine_storage``, ``wait`` and
``create_notebook_engine(parent, notebook_engine, notebook_engine_id)``. (The signatures themselves are compared by
``tests/official_surface.py``.)
"""

from __future__ import annotations

import unittest

from tests import support
from tests.support import requires, unique
from ai_engine_manager import SandboxClients
from ai_engine_manager.dai_license import DAILicenseClient
from ai_engine_manager.dai_license.metadata import dai_license_metadata_from_api
from ai_engine_manager.drive import H2ODriveClient
from ai_engine_manager.exception import CustomApiException
from ai_engine_manager.h2o_engine.size import H2OEngineSizeLimits
from ai_engine_manager.notebook_engine.notebook_engine import NotebookEngine
from ai_engine_manager.notebook_engine.state import NotebookEngineState
from ai_engine_manager.secure_store import H2OSecureStoreClient


class SandboxClientsTest(unittest.TestCase):
    def test_sandbox_clients_are_the_flat_ones(self) -> None:
        clients = support.clients("alice")
        grouped = clients.sandbox_clients
        self.assertIsInstance(grouped, SandboxClients)
        for attribute in ("filesystem_client", "h2o_drive_client", "h2o_secure_store_client", "metrics_client",
                          "port_client", "process_client"):
            self.assertIs(getattr(grouped, attribute), getattr(clients, attribute))
        self.assertIsInstance(grouped.h2o_drive_client, H2ODriveClient)
        self.assertIsInstance(grouped.h2o_secure_store_client, H2OSecureStoreClient)


class DAILicenseClientTest(unittest.TestCase):
    def test_no_license_reads_none(self) -> None:
        client = support.clients("alice").dai_license_client
        self.assertIsInstance(client, DAILicenseClient)
        self.assertIsNone(client.get_dai_license_metadata())

    def test_unauthenticated_is_refused(self) -> None:
        from ai_engine_manager import login

        client = login(url=support.server().url, token="not-a-token").dai_license_client
        with self.assertRaises(CustomApiException) as caught:
            client.get_dai_license_metadata()
        self.assertEqual(caught.exception.code_name, "UNAUTHENTICATED")

    def test_metadata_from_json(self) -> None:
        metadata = dai_license_metadata_from_api({
            "licenseVersion": "1", "serialNumber": 42, "licenseeOrganization": "Acme", "isH2oInternalUse": True,
            "creationDate": {"year": 2026, "month": 1, "day": 2}, "product": "DriverlessAI", "licenseType": "developer",
        })
        self.assertEqual((metadata.serial_number, metadata.licensee_organization, metadata.is_h2o_internal_use), (42, "Acme", True))
        self.assertEqual(metadata.creation_date.isoformat(), "2026-01-02")  # type: ignore[union-attr]
        self.assertIsNone(metadata.expiration_date)


@requires("dai_engine", "dai_engine_profile", "dai_engine_version")
class DAIEngineOfficialNamesTest(unittest.TestCase):
    def test_generate_engine_id_and_default_workspace(self) -> None:
        dai = support.clients("alice").dai_engine_client
        workspace_id = unique("py")
        self.assertEqual(dai.generate_engine_id("Official Names", workspace_id), "official-names")
        engine = dai.create_engine(workspace_id, "official-names", display_name="Official Names", cpu=1, memory_bytes="2Gi")
        try:
            taken = dai.generate_engine_id(display_name="Official Names", workspace_id=workspace_id)
            self.assertRegex(taken, r"^official-names-[1-9][0-9]{3}$")
            dai.set_default_workspace_id(workspace_id)
            self.assertEqual(dai.get_engine("official-names").uid, engine.uid)
            self.assertEqual([e.name for e in dai.list_all_engines()], [engine.name])
        finally:
            engine.delete()

    def test_create_engine_positional_in_the_official_order(self) -> None:
        dai = support.clients("alice").dai_engine_client
        workspace_id = unique("py")
        # workspace_id, engine_id, cpu, gpu, memory_bytes, storage_bytes, max_idle_duration,
        # max_running_duration, display_name, config, annotations, validate_only
        checked = dai.create_engine(workspace_id, "positional", 1, 0, "2Gi", None, "1h", None, "Positional", {}, {"k": "v"}, True)
        self.assertEqual(checked.name, f"workspaces/{workspace_id}/daiEngines/positional")
        self.assertEqual((checked.cpu, checked.memory_bytes, checked.display_name, checked.annotations), (1, "2Gi", "Positional", {"k": "v"}))
        with self.assertRaises(CustomApiException) as caught:
            dai.get_engine("positional", workspace_id)
        self.assertEqual(caught.exception.code_name, "NOT_FOUND")


@requires("h2o_engine", "h2o_engine_profile", "h2o_engine_version")
class H2OEngineOfficialNamesTest(unittest.TestCase):
    def test_generate_engine_id(self) -> None:
        h2o = support.clients("alice").h2o_engine_client
        workspace_id = unique("py")
        self.assertEqual(h2o.generate_engine_id("H2O Names", workspace_id), "h2o-names")
        self.assertEqual(h2o.generate_engine_id("", workspace_id), "new-h2o-engine")

    def test_create_engine_positional_in_the_official_order(self) -> None:
        h2o = support.clients("alice").h2o_engine_client
        workspace_id = unique("py")
        # engine_id, node_count, cpu, gpu, memory_bytes, max_idle_duration, max_running_duration,
        # workspace_id, display_name, annotations, validate_only
        checked = h2o.create_engine("positional", 1, 1, 0, "2Gi", "30m", None, workspace_id, "Positional", {}, True)
        self.assertEqual(checked.name, f"workspaces/{workspace_id}/h2oEngines/positional")
        self.assertEqual((checked.node_count, checked.memory_bytes, checked.display_name), (1, "2Gi", "Positional"))

    def test_size_limits_positional(self) -> None:
        h2o = support.clients("alice").h2o_engine_client
        limits = H2OEngineSizeLimits(memory_bytes_per_node_min="100", memory_bytes_per_node_max="200", node_count_min=1, node_count_max=2)
        raw = h2o.calculate_h2o_engine_size_raw_dataset("1000", limits)
        self.assertEqual((raw.node_count, raw.memory_bytes), (2, "200"))
        compressed = h2o.calculate_h2o_engine_size_compressed_dataset(100, 100, H2OEngineSizeLimits(memory_bytes_per_node_min="100", node_count_min=2))
        self.assertEqual((compressed.node_count, compressed.memory_bytes), (2, "160k"))


@requires("notebook_engine", "notebook_engine_profile", "notebook_engine_image")
class NotebookEngineOfficialNamesTest(unittest.TestCase):
    def test_client_actions_and_wait(self) -> None:
        notebooks = support.clients("alice").notebook_engine_client
        parent = "workspaces/" + unique("py")
        # parent, notebook_engine, notebook_engine_id: the official order.
        engine = notebooks.create_notebook_engine(parent, NotebookEngine(
            profile="workspaces/global/notebookEngineProfiles/default",
            notebook_image="workspaces/global/notebookEngineImages/default",
            cpu=1, memory_bytes="2Gi", storage_bytes="2Gi",
        ), "official")
        self.assertEqual(engine.name, f"{parent}/notebookEngines/official")
        running = notebooks.wait(engine.name, 60)
        self.assertEqual(running.state, NotebookEngineState.STATE_RUNNING)  # type: ignore[union-attr]
        self.assertEqual(notebooks.list_notebook_engines(parent, 1).total_size, 1)
        self.assertEqual([e.name for e in notebooks.list_all_notebook_engines(parent)], [engine.name])

        self.assertEqual(notebooks.pause_notebook_engine(engine.name).name, engine.name)
        self.assertEqual(notebooks.wait(engine.name, 60).state, NotebookEngineState.STATE_PAUSED)  # type: ignore[union-attr]
        with self.assertRaises(CustomApiException) as caught:
            notebooks.pause_notebook_engine(engine.name)
        self.assertEqual(caught.exception.code_name, "FAILED_PRECONDITION")
        notebooks.resume_notebook_engine(engine.name)
        self.assertEqual(notebooks.wait(engine.name, 60).state, NotebookEngineState.STATE_RUNNING)  # type: ignore[union-attr]

        resized = notebooks.resize_notebook_engine_storage(engine.name, "3Gi")
        self.assertTrue(resized.storage_resizing or resized.storage_bytes == "3Gi")
        with self.assertRaises(CustomApiException) as caught:
            notebooks.resize_notebook_engine_storage(engine.name, "1Gi")
        # Smaller than the size in place, or a second resize while the first runs.
        self.assertIn(caught.exception.code_name, {"INVALID_ARGUMENT", "FAILED_PRECONDITION"})

        notebooks.delete_notebook_engine(engine.name)
        self.assertIsNone(notebooks.wait(engine.name, 60))
        self.assertIsNone(notebooks.wait(f"{parent}/notebookEngines/never-was"))


if __name__ == "__main__":
    unittest.main()
