"""Driverless AI engines through ``DAIEngineClient`` and the ``DAIEngine`` objects it returns.

The engines are the local runtime's stand-in Driverless AI servers, which reach RUNNING in about a
second; the official waits poll every 5 s (fixed in the client), so the module keeps to a few
waits. One engine goes through the whole life cycle; a second one, created with every choice left
to the client (generated id, first assigned profile, first version), covers the rest.
"""

from __future__ import annotations

import json
import unittest
import urllib.error
import urllib.request

from . import _conformance as oc
from ._log_stream import open_log_stream

from h2o_engine_manager.clients.dai_engine.dai_engine import DAIEngine  # noqa: E402
from h2o_engine_manager.clients.dai_engine.dai_engine_state import DAIEngineState  # noqa: E402
from h2o_engine_manager.clients.dai_engine_version.version import DAIEngineVersion  # noqa: E402

WORKSPACE = "default"
PROFILE = f"{oc.GLOBAL}/daiEngineProfiles/default"
VERSION = f"{oc.GLOBAL}/daiEngineVersions/1.11.0"
WAIT = 60


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class DAIEngineTest(oc.ConformanceCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.clients = oc.member()
        cls.client = cls.clients.dai_engine_client
        # A newer version to upgrade to, in a workspace of its own so that nobody else's
        # "first version" changes.
        cls.version_workspace = f"workspaces/{oc.unique('oc-daiv')}"
        cls.newer = oc.admin().dai_engine_version_client.create_dai_engine_version(
            parent=cls.version_workspace,
            dai_engine_version=DAIEngineVersion(image="registry.example.com/dai:1.11.9"),
            dai_engine_version_id="1.11.9",
        )

    @classmethod
    def tearDownClass(cls) -> None:
        oc.admin().dai_engine_version_client.delete_all_dai_engine_versions(parent=cls.version_workspace)

    def create(self, engine_id: str, **overrides: object) -> DAIEngine:
        args = dict(
            workspace_id=WORKSPACE,
            engine_id=engine_id,
            cpu=2,
            gpu=0,
            memory_bytes="8Gi",
            storage_bytes="16Gi",
            max_idle_duration="2h",
            max_running_duration="1d",
            display_name="Conformance DAI",
            config={"max_runtime_minutes": "30"},
            annotations={"team": "conformance"},
            profile=PROFILE,
            dai_engine_version=VERSION,
        )
        args.update(overrides)
        return self.client.create_engine(**args)

    def assertEngine(self, engine: DAIEngine, **expected: object) -> None:
        for field, value in expected.items():
            self.assertEqual(getattr(engine, field), value, field)

    def test_life_cycle(self) -> None:
        engine_id = oc.unique("oc-dai")
        name = f"workspaces/{WORKSPACE}/daiEngines/{engine_id}"
        created_fields = dict(name=name, workspace_id=WORKSPACE, engine_id=engine_id, cpu=2, gpu=0, memory_bytes="8Gi",
                              storage_bytes="16Gi", max_idle_duration="2h", max_running_duration="1d",
                              display_name="Conformance DAI", config={"max_runtime_minutes": "30"},
                              annotations={"team": "conformance"}, profile=PROFILE, dai_engine_version=VERSION,
                              creator=f"users/{oc.MEMBER}")

        # validate_only creates nothing.
        checked = self.create(engine_id, validate_only=True)
        self.assertEngine(checked, cpu=2, display_name="Conformance DAI")
        self.assertApiError(404, self.client.get_engine, engine_id=engine_id, workspace_id=WORKSPACE)

        engine = self.create(engine_id)
        self.assertEngine(engine, **created_fields)
        self.assertIn(engine.state, (DAIEngineState.STATE_STARTING, DAIEngineState.STATE_RUNNING))
        self.assertNotEqual(engine.uid, "")
        self.assertEqual(engine.profile_info.name, PROFILE)
        self.assertEqual(engine.dai_engine_version_info.name, VERSION)
        # From creation on: the name is the engine's path, its sign-in the login URL.
        self.assertEqual(engine.api_url, f"{oc.server().url}/{name}")
        self.assertEqual(engine.login_url, f"{engine.api_url}/oidc/login")

        engine.wait(timeout_seconds=WAIT)
        self.assertEqual(engine.state, DAIEngineState.STATE_RUNNING)
        self.assertFalse(engine.reconciling)
        self.assertEqual(engine.api_url, f"{oc.server().url}/{name}")
        self.assertEqual(engine.login_url, f"{engine.api_url}/oidc/login")
        # The login URL reaches the engine (the stand-in's sign-in page), for its creator only.
        token = self.client.client_info.token_provider()
        page = urllib.request.urlopen(urllib.request.Request(engine.login_url, headers=bearer(token)))
        self.assertEqual(page.status, 200)
        self.assertIn("Driverless AI", page.read().decode())
        other = oc.other_member().dai_engine_client.client_info.token_provider()
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(engine.login_url, headers=bearer(other)))
        self.assertEqual(refused.exception.code, 404)
        # Upgrades are offered within the version's workspace; 1.11.9 lives in another one.
        self.assertFalse(engine.upgrade_available)
        got = self.client.get_engine(engine_id=engine_id, workspace_id=WORKSPACE)
        self.assertEngine(got, state=DAIEngineState.STATE_RUNNING, **created_fields)

        # The stand-in's log says which product and version it stands in for.
        logs = engine.download_logs()
        self.assertIn("Driverless AI 1.11.0", logs)
        # The log stream: a line per message, the same lines as the download.
        stream = open_log_stream(oc.server().url, engine.name, token)
        self.assertEqual(stream.status, 101)
        self.assertEqual([stream.recv(), stream.recv()], logs.splitlines(keepends=True)[:2])
        stream.close()

        # A running engine is not updated: it must be paused or failed first.
        engine.display_name = "Renamed DAI"
        refused = self.assertApiError(400, engine.update)
        self.assertIn("engine must be paused or failed", json.loads(refused.body)["message"])
        engine = self.client.get_engine(engine_id=engine_id, workspace_id=WORKSPACE)

        engine.resize_storage(new_storage="32Gi")
        self.assertEqual(engine.storage_bytes, "32Gi")
        self.assertEqual(self.client.get_engine(engine_id=engine_id, workspace_id=WORKSPACE).storage_bytes, "32Gi")
        # Storage only grows.
        self.assertApiError(400, engine.resize_storage, new_storage="1Gi")

        engine.pause()
        self.assertIn(engine.state, (DAIEngineState.STATE_PAUSING, DAIEngineState.STATE_PAUSED))
        # Pausing again changes nothing: the engine is answered as it is.
        engine.pause()
        self.assertIn(engine.state, (DAIEngineState.STATE_PAUSING, DAIEngineState.STATE_PAUSED))
        engine.wait(timeout_seconds=WAIT)
        self.assertEqual(engine.state, DAIEngineState.STATE_PAUSED)
        self.assertEqual(engine.login_url, f"{oc.server().url}/{name}/oidc/login")  # whatever the state
        with self.assertRaises(RuntimeError):
            engine.connect()  # only a running engine can be connected to
        # While it does not run, the stream says so every two seconds.
        stream = open_log_stream(oc.server().url, engine.name, token)
        self.assertEqual([stream.recv(), stream.recv()], ["Driverless AI logs are not available yet\n"] * 2)
        stream.close()

        # update (paused): everything (mask "*"), then one field, then validate_only.
        created_fields = dict(created_fields, storage_bytes="32Gi")
        engine.display_name = "Renamed DAI"
        engine.cpu = 4
        engine.memory_bytes = "16Gi"
        engine.max_idle_duration = "3h"
        engine.config = {"max_runtime_minutes": "45"}
        engine.annotations = {"team": "conformance", "extra": "yes"}
        engine.update()
        updated_fields = dict(created_fields, display_name="Renamed DAI", cpu=4, memory_bytes="16Gi",
                              max_idle_duration="3h", config={"max_runtime_minutes": "45"},
                              annotations={"team": "conformance", "extra": "yes"})
        self.assertEngine(engine, **updated_fields)
        self.assertEngine(self.client.get_engine(engine_id=engine_id, workspace_id=WORKSPACE), **updated_fields)
        engine.display_name = "Only this"
        engine.cpu = 1
        engine.update(update_mask="display_name")
        self.assertEngine(engine, **dict(updated_fields, display_name="Only this"))
        engine.display_name = "Not stored"
        engine.update(validate_only=True)
        self.assertEqual(self.client.get_engine(engine_id=engine_id, workspace_id=WORKSPACE).display_name, "Only this")
        engine.profile = ""
        unset = self.assertApiError(400, engine.update, update_mask="profile")
        self.assertIn("profile cannot be unset", json.loads(unset.body)["message"])
        engine = self.client.get_engine(engine_id=engine_id, workspace_id=WORKSPACE)

        engine.upgrade_dai_engine_version(new_dai_engine_version=self.newer.name)
        self.assertEqual(engine.dai_engine_version, self.newer.name)
        self.assertEqual(engine.dai_engine_version_info.image, "registry.example.com/dai:1.11.9")
        # Not to an older one.
        self.assertApiError(400, engine.upgrade_dai_engine_version, new_dai_engine_version=VERSION)

        engine.resume()
        self.assertIn(engine.state, (DAIEngineState.STATE_STARTING, DAIEngineState.STATE_RUNNING))
        # Resuming again changes nothing: the engine is answered as it is, wherever its start is.
        engine.resume()
        self.assertIn(engine.state, (DAIEngineState.STATE_STARTING, DAIEngineState.STATE_CONNECTING,
                                     DAIEngineState.STATE_RUNNING))
        oc.run_async(engine.wait_async(timeout_seconds=WAIT))
        self.assertEqual(engine.state, DAIEngineState.STATE_RUNNING)
        self.assertIn("Driverless AI 1.11.9", engine.download_logs())

        # delete: validate_only keeps it; then it goes, and the wait ends when it is gone.
        engine.delete(validate_only=True)
        self.assertEqual(self.client.get_engine(engine_id=engine_id, workspace_id=WORKSPACE).state, DAIEngineState.STATE_RUNNING)
        engine.delete()
        self.assertEqual(engine.state, DAIEngineState.STATE_DELETING)
        engine.wait(timeout_seconds=WAIT)
        self.assertApiError(404, self.client.get_engine, engine_id=engine_id, workspace_id=WORKSPACE)
        engine.delete(allow_missing=True)  # gone already: no error
        self.assertApiError(404, engine.delete)

    def test_client_choices_lists_and_admin_calls(self) -> None:
        # Without an id, profile or version the client picks them: an id from the display name
        # that the server says is free, the first assigned profile, the first version.
        first_profile = self.clients.dai_engine_profile_client.get_first_dai_engine_profile(workspace=oc.GLOBAL)
        first_version = self.clients.dai_engine_version_client.get_first_dai_engine_version(workspace=oc.GLOBAL)
        generated = self.client.generate_engine_id(display_name="OC Generated DAI", workspace_id=WORKSPACE)
        self.assertEqual(generated, "oc-generated-dai")
        engine = self.client.create_engine(workspace_id=WORKSPACE, display_name="OC Generated DAI")
        self.addCleanup(self.delete_quietly, engine)
        self.assertEqual(engine.engine_id, "oc-generated-dai")
        self.assertEqual(engine.profile, first_profile.name)
        self.assertEqual(engine.dai_engine_version, first_version.name)
        # The id is taken now, so the next one gets a random suffix.
        self.assertRegex(self.client.generate_engine_id(display_name="OC Generated DAI", workspace_id=WORKSPACE),
                         r"^oc-generated-dai-[0-9]{4}$")
        # Profile defaults fill what was not given.
        self.assertEqual((engine.cpu, engine.gpu, engine.memory_bytes, engine.storage_bytes), (1, 0, "4Gi", "16Gi"))

        other_id = oc.unique("oc-dai-list")
        other = self.create(other_id, display_name="Listed")
        self.addCleanup(self.delete_quietly, other)

        page = self.client.list_engines(workspace_id=WORKSPACE, page_size=1, order_by="create_time desc")
        self.assertEqual(len(page.engines), 1)
        self.assertNotEqual(page.next_page_token, "")
        self.assertEqual(page.engines[0].name, other.name)
        rest = self.client.list_engines(workspace_id=WORKSPACE, page_size=1, page_token=page.next_page_token,
                                        order_by="create_time desc")
        self.assertEqual(rest.engines[0].name, engine.name)
        filtered = self.client.list_all_engines(workspace_id=WORKSPACE, filter='display_name = "Listed"')
        self.assertEqual([e.name for e in filtered], [other.name])
        every = self.client.list_all_engines(workspace_id=WORKSPACE, order_by="name")
        names = [e.name for e in every]
        self.assertIn(engine.name, names)
        self.assertIn(other.name, names)
        self.assertEqual(names, sorted(names))

        # The default workspace is the client's: elsewhere the engine is not found.
        self.client.set_default_workspace_id("elsewhere")
        try:
            self.assertApiError(404, self.client.get_engine, engine_id=other_id)
            self.assertEqual(self.client.list_engines().engines, [])
        finally:
            self.client.set_default_workspace_id(WORKSPACE)
        self.assertEqual(self.client.get_engine(engine_id=other_id).name, other.name)

        # Another member does not see it; only an administrator may migrate the creator.
        self.assertApiError(404, oc.other_member().dai_engine_client.get_engine, engine_id=other_id, workspace_id=WORKSPACE)
        self.assertApiError(403, other.migrate_creator, new_creator=f"users/{oc.OTHER}")
        as_admin = oc.admin().dai_engine_client.get_engine(engine_id=other_id, workspace_id=WORKSPACE)
        as_admin.migrate_creator(new_creator=f"users/{oc.OTHER}")
        self.assertEqual(as_admin.creator, f"users/{oc.OTHER}")
        self.assertEqual(oc.other_member().dai_engine_client.get_engine(engine_id=other_id, workspace_id=WORKSPACE).creator,
                         f"users/{oc.OTHER}")

    def test_errors(self) -> None:
        engine_id = oc.unique("oc-dai-err")
        self.assertApiError(404, self.client.get_engine, engine_id="oc-no-such-engine", workspace_id=WORKSPACE)
        # Below the profile's minimum cpu.
        error = self.assertApiError(400, self.create, engine_id, cpu=0)
        self.assertIn("cpu", str(error))
        self.assertApiError(400, self.create, engine_id, dai_engine_version=f"{oc.GLOBAL}/daiEngineVersions/9.9.9")
        engine = self.create(engine_id)
        self.addCleanup(self.delete_quietly, engine)
        self.assertApiError(409, self.create, engine_id)
        # Only an administrator may hand an engine to someone else.
        self.assertApiError(403, engine.migrate_creator, new_creator=f"users/{oc.OTHER}")

    def delete_quietly(self, engine: DAIEngine) -> None:
        engine.delete(allow_missing=True)


if __name__ == "__main__":
    unittest.main()
