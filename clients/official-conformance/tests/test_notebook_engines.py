"""Notebook engines through ``NotebookEngineClient``: real Jupyter servers.

One notebook goes through its life cycle (create, wait, access, update, resize, pause, resume,
delete); a shared one covers what other members may and may not do.
"""

from __future__ import annotations

import json
import unittest
import urllib.request

from . import _conformance as oc

from h2o_engine_manager.clients.notebook_engine.engine import NotebookEngine  # noqa: E402
from h2o_engine_manager.clients.notebook_engine_image.image import NotebookEngineImage  # noqa: E402
from h2o_engine_manager.clients.notebook_engine.state import NotebookEngineState  # noqa: E402

PARENT = "workspaces/default"
PROFILE = f"{oc.GLOBAL}/notebookEngineProfiles/default"
IMAGE = f"{oc.GLOBAL}/notebookEngineImages/default"
WAIT = 90


def notebook(**overrides: object) -> NotebookEngine:
    fields = dict(profile=PROFILE, notebook_image=IMAGE, display_name="Conformance notebook", cpu=2, gpu=0,
                  memory_bytes="2Gi", storage_bytes="4Gi", max_idle_duration="2h", max_running_duration="1d")
    fields.update(overrides)
    return NotebookEngine(**fields)


class NotebookEngineTest(oc.ConformanceCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.client = oc.member().notebook_engine_client

    def assertNotebook(self, engine: NotebookEngine, **expected: object) -> None:
        for field, value in expected.items():
            self.assertEqual(getattr(engine, field), value, field)

    def test_life_cycle(self) -> None:
        engine_id = oc.unique("oc-nb")
        name = f"{PARENT}/notebookEngines/{engine_id}"
        fields = dict(name=name, profile=PROFILE, notebook_image=IMAGE, display_name="Conformance notebook", cpu=2, gpu=0,
                      memory_bytes="2Gi", storage_bytes="4Gi", max_idle_duration="2h", max_running_duration="1d",
                      shared=False, creator=f"users/{oc.MEMBER}")
        created = self.client.create_notebook_engine(parent=PARENT, notebook_engine=notebook(), notebook_engine_id=engine_id)
        self.assertNotebook(created, **fields)
        self.assertEqual(created.state, NotebookEngineState.STATE_STARTING)
        self.assertTrue(created.reconciling)
        self.assertEqual(created.profile_info.name, PROFILE)
        self.assertEqual(created.notebook_image_info.name, IMAGE)

        running = self.client.wait(name=name, timeout_seconds=WAIT)
        self.assertNotebook(running, state=NotebookEngineState.STATE_RUNNING, reconciling=False, **fields)
        self.assertNotebook(self.client.get_notebook_engine(name=name), state=NotebookEngineState.STATE_RUNNING, **fields)

        # :access gives the URL of the notebook, which opens for its creator (engine URLs take
        # the caller's token; docs/adr/0054).
        uri = self.client.access_notebook_engine(name=name)
        self.assertTrue(uri.startswith(oc.server().url), uri)
        request = urllib.request.Request(uri, headers={"Authorization": f"Bearer {oc.server().token(oc.MEMBER)}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            self.assertEqual(response.status, 200)
            self.assertIn(b"Jupyter", response.read())

        # A running notebook is not updated: it must be paused (or failed) first.
        running.display_name = "Renamed notebook"
        refused = self.assertApiError(400, self.client.update_notebook_engine, notebook_engine=running)
        self.assertIn("engine must be paused or failed", json.loads(refused.body)["message"])

        resized = self.client.resize_notebook_engine_storage(name=name, new_storage="8Gi")
        self.assertEqual(resized.storage_bytes, "8Gi")
        self.assertApiError(400, self.client.resize_notebook_engine_storage, name=name, new_storage="1Gi")

        paused = self.client.pause_notebook_engine(name=name)
        self.assertIn(paused.state, (NotebookEngineState.STATE_PAUSING, NotebookEngineState.STATE_PAUSED))
        paused = self.client.wait(name=name, timeout_seconds=WAIT)
        self.assertEqual(paused.state, NotebookEngineState.STATE_PAUSED)
        self.assertApiError(400, self.client.access_notebook_engine, name=name)  # only while running

        running = self.client.get_notebook_engine(name=name)
        running.display_name = "Renamed notebook"
        running.cpu = 1
        running.memory_bytes = "3Gi"
        running.max_idle_duration = "1h"
        updated = self.client.update_notebook_engine(notebook_engine=running)
        changed = dict(fields, display_name="Renamed notebook", cpu=1, memory_bytes="3Gi", max_idle_duration="1h",
                       storage_bytes="8Gi")
        self.assertNotebook(updated, **changed)
        self.assertIsNotNone(updated.update_time)
        updated.display_name = "Only the name"
        updated.gpu = 1
        self.assertNotebook(self.client.update_notebook_engine(notebook_engine=updated, update_mask="display_name"),
                            **dict(changed, display_name="Only the name"))
        # Below the profile's minimum: the real service's words.
        updated.memory_bytes = "1Mi"
        too_small = self.assertApiError(400, self.client.update_notebook_engine, notebook_engine=updated,
                                        update_mask="memory_bytes")
        self.assertIn("validation error: min constraint violated: memory_bytes (1048576) must be >= 1073741824",
                      json.loads(too_small.body)["message"])
        updated.memory_bytes = "3Gi"
        # The profile cannot be emptied.
        updated.profile = ""
        unset = self.assertApiError(400, self.client.update_notebook_engine, notebook_engine=updated, update_mask="profile")
        self.assertIn("profile cannot be unset", json.loads(unset.body)["message"])
        updated.profile = PROFILE
        # A missing image is refused in the real service's words; another image is taken.
        updated.notebook_image = f"{oc.GLOBAL}/notebookEngineImages/no-such-image"
        missing = self.assertApiError(400, self.client.update_notebook_engine, notebook_engine=updated, update_mask="notebook_image")
        self.assertIn("validation error: invalid notebook_image: rpc error: code = InvalidArgument desc = "
                      f"notebookImage {oc.GLOBAL}/notebookEngineImages/no-such-image not found",
                      json.loads(missing.body)["message"])
        images = oc.admin().notebook_engine_image_client
        other_id = oc.unique("oc-other-image")
        other = images.create_notebook_engine_image(
            parent=oc.GLOBAL, notebook_engine_image=NotebookEngineImage(image=images.get_notebook_engine_image(name=IMAGE).image,
                                                                        display_name="Other"),
            notebook_engine_image_id=other_id)
        self.addCleanup(images.delete_notebook_engine_image, name=other.name)
        updated.notebook_image = other.name
        moved = self.client.update_notebook_engine(notebook_engine=updated, update_mask="notebook_image")
        self.assertEqual((moved.notebook_image, moved.notebook_image_info.name), (other.name, other.name))

        resumed = self.client.resume_notebook_engine(name=name)
        self.assertEqual(resumed.state, NotebookEngineState.STATE_STARTING)
        resumed = self.client.wait(name=name, timeout_seconds=WAIT)
        self.assertNotebook(resumed, state=NotebookEngineState.STATE_RUNNING, storage_bytes="8Gi", display_name="Only the name")
        self.assertIsNotNone(resumed.resume_time)

        self.assertIsNone(self.client.delete_notebook_engine(name=name))
        self.assertIsNone(self.client.wait(name=name, timeout_seconds=WAIT))  # gone
        self.assertApiError(404, self.client.get_notebook_engine, name=name)

    def test_lists_sharing_and_errors(self) -> None:
        ids = [oc.unique("oc-nb-list") for _ in range(2)]
        for engine_id in ids:
            self.client.create_notebook_engine(parent=PARENT, notebook_engine=notebook(shared=engine_id == ids[1]), notebook_engine_id=engine_id)
            self.addCleanup(self.client.delete_notebook_engine, name=f"{PARENT}/notebookEngines/{engine_id}")
        names = {f"{PARENT}/notebookEngines/{i}" for i in ids}

        first = self.client.list_notebook_engines(parent=PARENT, page_size=1)
        self.assertEqual(len(first.notebook_engines), 1)
        self.assertNotEqual(first.next_page_token, "")
        second = self.client.list_notebook_engines(parent=PARENT, page_size=1, page_token=first.next_page_token)
        self.assertEqual(len(second.notebook_engines), 1)
        self.assertNotEqual(first.notebook_engines[0].name, second.notebook_engines[0].name)
        every = {e.name for e in self.client.list_all_notebook_engines(parent=PARENT)}
        self.assertLessEqual(names, every)

        # Another member sees only the shared one, may not change it, and cannot see the other.
        other = oc.other_member().notebook_engine_client
        shared_name = f"{PARENT}/notebookEngines/{ids[1]}"
        seen = {e.name for e in other.list_all_notebook_engines(parent=PARENT)}
        self.assertIn(shared_name, seen)
        self.assertNotIn(f"{PARENT}/notebookEngines/{ids[0]}", seen)
        shared = other.get_notebook_engine(name=shared_name)
        self.assertTrue(shared.shared)
        shared.display_name = "Not mine"
        self.assertApiError(403, other.update_notebook_engine, notebook_engine=shared)
        self.assertApiError(403, other.delete_notebook_engine, name=shared_name)
        self.assertApiError(404, other.get_notebook_engine, name=f"{PARENT}/notebookEngines/{ids[0]}")

        # not found, invalid argument, already exists
        self.assertApiError(404, self.client.get_notebook_engine, name=f"{PARENT}/notebookEngines/oc-no-such-notebook")
        self.assertApiError(404, self.client.pause_notebook_engine, name=f"{PARENT}/notebookEngines/oc-no-such-notebook")
        error = self.assertApiError(400, self.client.create_notebook_engine, parent=PARENT, notebook_engine=notebook(cpu=0),
                                    notebook_engine_id=oc.unique("oc-nb-bad"))
        self.assertIn("cpu", str(error))
        self.assertApiError(409, self.client.create_notebook_engine, parent=PARENT, notebook_engine=notebook(), notebook_engine_id=ids[0])
        # A notebook that is starting cannot be resumed.
        self.assertApiError(400, self.client.resume_notebook_engine, name=f"{PARENT}/notebookEngines/{ids[0]}")


if __name__ == "__main__":
    unittest.main()
