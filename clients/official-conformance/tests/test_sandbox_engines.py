"""Sandbox engines and what runs inside them, through the official sandbox clients.

``SandboxEngineClient`` and the six clients of ``Clients.sandbox_clients``: filesystem, processes
(with streamed output and frames), ports (with the wait), H2O drive, secure store and metrics. One
sandbox serves the whole module; its creator (a member) makes every call, another member is
refused, and the last test terminates and deletes it. The secret the secure store reveals is made
beforehand over REST, since the official client has no secret client.
"""

from __future__ import annotations

import base64
import json
import time
import unittest
import urllib.error
import urllib.request
from typing import Any

from . import _conformance as oc

from h2o_engine_manager.clients.sandbox.filesystem.file_type import FileType  # noqa: E402
from h2o_engine_manager.clients.sandbox.port.port import Port  # noqa: E402
from h2o_engine_manager.clients.sandbox.port.state import PortState  # noqa: E402
from h2o_engine_manager.clients.sandbox.process.output_stream import OutputStream  # noqa: E402
from h2o_engine_manager.clients.sandbox.process.process_state import ProcessState  # noqa: E402
from h2o_engine_manager.clients.sandbox.process.ps import Process  # noqa: E402
from h2o_engine_manager.clients.sandbox.process.secret_environment_variable import SecretEnvironmentVariable  # noqa: E402
from h2o_engine_manager.clients.sandbox.process.stream_output_chunk import StreamOutputChunk  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine.engine import SandboxEngine  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine.pending_reason import SandboxEnginePendingReason  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine.state import SandboxEngineState  # noqa: E402

PARENT = "workspaces/default"
IMAGE = f"{oc.GLOBAL}/sandboxEngineImages/default"
TEMPLATE = f"{oc.GLOBAL}/sandboxEngineTemplates/default"
WAIT = 60
SECRET_VALUE = b"s3cr3t-value"


def rest(method: str, path: str, body: Any = None, user: str = oc.MEMBER) -> dict:
    """A plain REST call with the user's access token (for what the official client lacks)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(oc.server().url + path, data=data, method=method, headers={
        "Authorization": f"Bearer {oc.server().token(user)}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


class SandboxTest(oc.ConformanceCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.clients = oc.member()
        cls.engines = cls.clients.sandbox_engine_client
        cls.fs = cls.clients.sandbox_clients.filesystem_client
        cls.processes = cls.clients.sandbox_clients.process_client
        cls.ports = cls.clients.sandbox_clients.port_client
        cls.drive = cls.clients.sandbox_clients.h2o_drive_client
        cls.secure_store = cls.clients.sandbox_clients.h2o_secure_store_client
        cls.metrics = cls.clients.sandbox_clients.metrics_client
        cls.other = oc.other_member().sandbox_clients
        cls.engine_id = oc.unique("oc-sb")
        cls.name = f"{PARENT}/sandboxEngines/{cls.engine_id}"
        cls.created = cls.engines.create_sandbox_engine(
            parent=PARENT,
            sandbox_engine=SandboxEngine(sandbox_engine_image=IMAGE, sandbox_engine_template=TEMPLATE,
                                         display_name="Conformance sandbox", annotations={"team": "conformance"}),
            sandbox_engine_id=cls.engine_id,
        )
        cls.running = cls.engines.wait(name=cls.name, timeout_seconds=WAIT)
        secret_id = oc.unique("oc-secret")
        rest("POST", f"/v1/{PARENT}/secrets?secretId={secret_id}", {})
        version = rest("POST", f"/v1/{PARENT}/secrets/{secret_id}/versions", {"value": base64.b64encode(SECRET_VALUE).decode()})
        cls.secret_version = version["secretVersion"]["name"]

    @classmethod
    def tearDownClass(cls) -> None:
        try:
            cls.engines.delete_sandbox_engine(name=cls.name)
        except Exception:
            pass

    def path(self, leaf: str = "") -> str:
        """A path under a directory of the test's own."""
        return f"/workspace/{self._testMethodName}" + (f"/{leaf}" if leaf else "")

    # -- the sandbox itself ------------------------------------------------------------------------

    def test_sandbox_engine(self) -> None:
        created, running = self.created, self.running
        self.assertEqual((created.name, created.display_name, created.sandbox_engine_image, created.sandbox_engine_template,
                          created.annotations, created.creator),
                         (self.name, "Conformance sandbox", IMAGE, TEMPLATE, {"team": "conformance"}, f"users/{oc.MEMBER}"))
        self.assertEqual(created.state, SandboxEngineState.STATE_STARTING)
        self.assertEqual(running.state, SandboxEngineState.STATE_RUNNING)
        self.assertEqual(running.pending_reason, SandboxEnginePendingReason.PENDING_REASON_UNSPECIFIED)
        self.assertEqual(running.uid, created.uid)
        template = running.sandbox_engine_template_info
        self.assertEqual((template.milli_cpu_limit, template.memory_bytes_limit), (1000, "2Gi"))
        self.assertEqual(running.sandbox_engine_image_info.image, "docker.io/library/python:3.12-slim")

        got = self.engines.get_sandbox_engine(name=self.name)
        self.assertEqual((got.name, got.state, got.display_name), (self.name, SandboxEngineState.STATE_RUNNING, "Conformance sandbox"))
        page = self.engines.list_sandbox_engines(parent=PARENT, page_size=1)
        self.assertEqual(len(page.sandbox_engines), 1)
        self.assertIn(self.name, [e.name for e in self.engines.list_all_sandbox_engines(parent=PARENT)])
        # Members see only their own sandboxes.
        self.assertNotIn(self.name, [e.name for e in self.other_engines().list_all_sandbox_engines(parent=PARENT)])

        self.assertApiError(404, self.engines.get_sandbox_engine, name=f"{PARENT}/sandboxEngines/oc-no-such-sandbox")
        self.assertApiError(409, self.engines.create_sandbox_engine, parent=PARENT, sandbox_engine_id=self.engine_id,
                            sandbox_engine=SandboxEngine(sandbox_engine_image=IMAGE, sandbox_engine_template=TEMPLATE))
        error = self.assertApiError(400, self.engines.create_sandbox_engine, parent=PARENT, sandbox_engine_id=oc.unique("oc-sb-bad"),
                                    sandbox_engine=SandboxEngine(sandbox_engine_image=IMAGE,
                                                                 sandbox_engine_template=f"{oc.GLOBAL}/sandboxEngineTemplates/oc-missing"))
        self.assertIn("sandbox_engine_template", str(error))
        self.assertApiError(404, self.other_engines().get_sandbox_engine, name=self.name)
        self.assertApiError(404, self.other_engines().terminate_sandbox_engine, name=self.name)

    def other_engines(self) -> Any:
        return oc.other_member().sandbox_engine_client

    # -- filesystem --------------------------------------------------------------------------------

    def test_filesystem(self) -> None:
        path = self.path("a/notes.txt")
        written = self.fs.write_file(name=self.name, path=path, content=b"first", create_parent_directories=True)
        self.assertEqual((written.file_info.path, written.file_info.size, written.file_info.type),
                         (path, 5, FileType.FILE_TYPE_REGULAR))
        self.assertIsNotNone(written.file_info.modify_time)
        # Unspecified overwrite means overwrite; false refuses an existing file.
        self.fs.write_file(name=self.name, path=path, content=b"second!")
        self.assertApiError(409, self.fs.write_file, name=self.name, path=path, content=b"third", overwrite=False)
        read = self.fs.read_file(name=self.name, path=path)
        self.assertEqual(read.content, b"second!")
        self.assertEqual((read.file_info.path, read.file_info.size), (path, 7))

        stat = self.fs.stat_file(name=self.name, path=path)
        self.assertEqual((stat.path, stat.size, stat.type), (path, 7, FileType.FILE_TYPE_REGULAR))
        self.assertRegex(stat.mode, r"^0[0-7]{3}$")
        directory = self.fs.make_directory(name=self.name, path=self.path("b/c"), create_parent_directories=True)
        self.assertEqual((directory.path, directory.type), (self.path("b/c"), FileType.FILE_TYPE_DIRECTORY))
        # Already there: fine (mkdir -p for the leaf).
        self.fs.make_directory(name=self.name, path=self.path("b/c"))
        listed = {f.path: f.type for f in self.fs.list_directory(name=self.name, path=self.path())}
        self.assertEqual(listed, {self.path("a"): FileType.FILE_TYPE_DIRECTORY, self.path("b"): FileType.FILE_TYPE_DIRECTORY})

        moved = self.fs.move(name=self.name, source_path=path, destination_path=self.path("b/c/moved.txt"))
        self.assertEqual((moved.path, moved.size), (self.path("b/c/moved.txt"), 7))
        self.fs.write_file(name=self.name, path=path, content=b"again")
        # Unspecified overwrite on move means do not overwrite.
        self.assertApiError(409, self.fs.move, name=self.name, source_path=path, destination_path=self.path("b/c/moved.txt"))
        self.fs.move(name=self.name, source_path=path, destination_path=self.path("b/c/moved.txt"), overwrite=True)
        self.fs.move(name=self.name, source_path=self.path("b/c/moved.txt"), destination_path=self.path("d/e/f.txt"),
                     create_parent_directories=True)
        self.assertEqual(self.fs.read_file(name=self.name, path=self.path("d/e/f.txt")).content, b"again")

        self.assertApiError(400, self.fs.remove, name=self.name, path=self.path("d"))  # not empty
        self.assertIsNone(self.fs.remove(name=self.name, path=self.path("d"), recursive=True))
        self.assertApiError(404, self.fs.stat_file, name=self.name, path=self.path("d"))
        self.assertApiError(404, self.fs.read_file, name=self.name, path=self.path("missing.txt"))
        self.assertApiError(400, self.fs.read_file, name=self.name, path="relative/path")
        self.assertApiError(404, self.other.filesystem_client.read_file, name=self.name, path=self.path("a/notes.txt"))

    # -- processes ---------------------------------------------------------------------------------

    def test_processes(self) -> None:
        workdir = self.path()
        self.fs.make_directory(name=self.name, path=workdir, create_parent_directories=True)
        process = Process(command="sh", args=["-c", 'echo "out:$GREETING:$TOKEN"; echo err >&2; pwd'], working_directory=workdir,
                          environment_variables={"GREETING": "hello"},
                          secret_environment_variables={"TOKEN": SecretEnvironmentVariable(secret_version=self.secret_version)})
        pending = self.processes.create_process(parent=self.name, process=process, process_id="greet")
        self.assertEqual((pending.name, pending.state, pending.command, pending.args, pending.working_directory,
                          pending.environment_variables, pending.exit_code),
                         (f"{self.name}/processes/greet", ProcessState.STATE_PENDING, "sh", process.args, workdir, {"GREETING": "hello"}, None))
        self.assertEqual(pending.secret_environment_variables["TOKEN"].secret_version, self.secret_version)
        started = self.processes.start_process(name=pending.name)
        self.assertIn(started.state, (ProcessState.STATE_RUNNING, ProcessState.STATE_SUCCEEDED))
        done = self.processes.wait_process(name=pending.name)
        self.assertEqual((done.state, done.exit_code), (ProcessState.STATE_SUCCEEDED, 0))
        self.assertIsNotNone(done.end_time)
        out = f"out:hello:{SECRET_VALUE.decode()}\n".encode()
        self.assertEqual(self.processes.read_output(name=pending.name, output_stream="OUTPUT_STREAM_STDOUT"), out + workdir.encode() + b"\n")
        self.assertEqual(self.processes.read_output(name=pending.name, output_stream="OUTPUT_STREAM_STDERR"), b"err\n")
        combined = self.processes.read_output(name=pending.name)
        self.assertEqual(sorted(combined.splitlines()), sorted([out.strip(), b"err", workdir.encode()]))
        frames = self.processes.read_output_frames(name=pending.name)
        self.assertEqual(b"".join(f["data"] for f in frames), combined)
        self.assertEqual({f["stream"].value if hasattr(f["stream"], "value") else str(f["stream"]) for f in frames},
                         {"OUTPUT_STREAM_STDOUT", "OUTPUT_STREAM_STDERR"})
        chunks = list(self.processes.stream_output(name=pending.name))
        self.assertTrue(all(isinstance(c, StreamOutputChunk) for c in chunks))
        self.assertEqual(b"".join(c.data for c in chunks), combined)
        self.assertEqual({c.stream for c in chunks}, {OutputStream.OUTPUT_STREAM_STDOUT, OutputStream.OUTPUT_STREAM_STDERR})
        # Skipping the replay of an ended process leaves nothing.
        self.assertEqual(list(self.processes.stream_output(name=pending.name, skip_replay=True)), [])

        # A generated id, started at once; a signal ends it with 128 + the signal.
        sleeper = self.processes.create_process(parent=self.name, process=Process(command="sleep", args=["60"]), auto_run=True)
        self.assertRegex(sleeper.name, rf"^{self.name}/processes/p-[a-z0-9]{{10}}$")
        self.assertEqual(sleeper.state, ProcessState.STATE_RUNNING)
        running, _ = self.processes.list_processes(parent=self.name, filter="state = STATE_RUNNING")
        self.assertIn(sleeper.name, [p.name for p in running])
        self.assertNotIn(pending.name, [p.name for p in running])
        signalled = self.processes.send_signal(name=sleeper.name, signal=15)
        self.assertEqual(signalled.name, sleeper.name)
        ended = self.processes.wait_process_by_polling(name=sleeper.name, timeout_seconds=30, poll_interval_seconds=0.2)
        self.assertEqual((ended.state, ended.exit_code), (ProcessState.STATE_FAILED, 128 + 15))
        self.assertEqual(self.processes.get_process(name=sleeper.name).exit_code, 143)

        first, token = self.processes.list_processes(parent=self.name, page_size=1)
        self.assertEqual(len(first), 1)
        self.assertNotEqual(token, "")
        rest_of, last = self.processes.list_processes(parent=self.name, page_size=10, page_token=token)
        self.assertEqual(last, "")
        self.assertLessEqual({pending.name, sleeper.name}, {p.name for p in first + rest_of})

        self.assertApiError(404, self.processes.get_process, name=f"{self.name}/processes/oc-missing")
        self.assertApiError(409, self.processes.create_process, parent=self.name, process=Process(command="true"), process_id="greet")
        self.assertApiError(400, self.processes.create_process, parent=self.name, process=Process(command="true"), process_id="Bad Id")
        self.assertApiError(400, self.processes.start_process, name=pending.name)  # not pending any more
        self.assertApiError(404, self.other.process_client.get_process, name=pending.name)
        looping = self.processes.create_process(parent=self.name, process=Process(command="sleep", args=["30"]), auto_run=True)
        self.addCleanup(self.processes.send_signal, name=looping.name, signal=9)
        with self.assertRaises(TimeoutError):
            self.processes.wait_process_by_polling(name=looping.name, timeout_seconds=0.3, poll_interval_seconds=0.1)

    # -- ports -------------------------------------------------------------------------------------

    def test_ports(self) -> None:
        server = self.processes.create_process(
            parent=self.name, auto_run=True,
            process=Process(command="python3", args=["-m", "http.server", "8080", "--bind", "127.0.0.1"], working_directory="/workspace"))
        self.addCleanup(self.processes.send_signal, name=server.name, signal=15)
        created = self.ports.create_port(parent=self.name, port=Port(display_name="Web", public=False), port_id="8080")
        name = f"{self.name}/ports/8080"
        self.assertEqual((created.name, created.display_name, created.public), (name, "Web", False))
        self.assertEqual((created.state, created.failure_reason), (PortState.STATE_PENDING, ""))
        ready = self.ports.wait(name=name, timeout_seconds=WAIT)
        self.assertEqual(ready.state, PortState.STATE_READY)
        self.assertTrue(ready.internal_url.startswith(oc.server().url), ready.internal_url)
        self.assertEqual(ready.public_url, "")
        # The port's URL reaches the program for its creator, once the program listens: READY says
        # the port is routed, and the gateway answers 502 until then.
        request = urllib.request.Request(ready.internal_url, headers={"Authorization": f"Bearer {oc.server().token(oc.MEMBER)}"})
        deadline = time.monotonic() + WAIT
        while True:
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    self.assertEqual(response.status, 200)
                break
            except urllib.error.HTTPError as error:
                if error.code != 502 or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

        got = self.ports.get_port(name=name)
        self.assertEqual((got.name, got.display_name, got.state), (name, "Web", PortState.STATE_READY))
        ports, token = self.ports.list_ports(parent=self.name)
        self.assertEqual(([p.name for p in ports], token), ([name], ""))
        got.display_name = "Public web"
        got.public = True
        updated = self.ports.update_port(port=got, update_mask=["display_name", "public"])
        self.assertEqual((updated.display_name, updated.public), ("Public web", True))
        self.assertTrue(updated.public_url.startswith(oc.server().url), updated.public_url)
        with urllib.request.urlopen(updated.public_url, timeout=30) as response:
            self.assertEqual(response.status, 200)
        updated.display_name = "Only the name"
        updated.public = False
        masked = self.ports.update_port(port=updated, update_mask=["display_name"])
        self.assertEqual((masked.display_name, masked.public), ("Only the name", True))

        self.assertApiError(409, self.ports.create_port, parent=self.name, port=Port(), port_id="8080")
        self.assertApiError(400, self.ports.create_port, parent=self.name, port=Port(), port_id="80")
        self.assertApiError(404, self.other.port_client.get_port, name=name)
        self.assertIsNone(self.ports.delete_port(name=name))
        self.assertApiError(404, self.ports.get_port, name=name)
        self.assertIsNone(self.ports.wait(name=name, timeout_seconds=5))  # gone

    def test_port_ready_before_anything_listens(self) -> None:
        """READY once routed: the wait returns though no program listens; its URL then answers 502."""
        created = self.ports.create_port(parent=self.name, port=Port(display_name="Empty", public=False), port_id="8125")
        self.addCleanup(self.ports.delete_port, name=created.name)
        self.assertEqual(created.state, PortState.STATE_PENDING)
        ready = self.ports.wait(name=created.name, timeout_seconds=30)
        self.assertEqual((ready.state, ready.failure_reason), (PortState.STATE_READY, ""))
        request = urllib.request.Request(ready.internal_url, headers={"Authorization": f"Bearer {oc.server().token(oc.MEMBER)}"})
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=30)
        self.assertEqual(caught.exception.code, 502)

    # -- drive, secure store, metrics --------------------------------------------------------------

    def test_drive(self) -> None:
        local = self.path("upload.csv")
        self.fs.write_file(name=self.name, path=local, content=b"a,b\n1,2\n", create_parent_directories=True)
        remote = f"{oc.unique('oc-drive')}/data.csv"
        uploaded = self.drive.upload_file(name=self.name, local_path=local, remote_path=remote)
        self.assertEqual(uploaded.bytes_uploaded, 8)
        # The workspace defaults to the sandbox's own.
        downloaded = self.drive.download_file(name=self.name, remote_path=remote, local_path=self.path("down/data.csv"),
                                              create_parent_directories=True)
        self.assertEqual((downloaded.file_info.path, downloaded.file_info.size), (self.path("down/data.csv"), 8))
        self.assertEqual(self.fs.read_file(name=self.name, path=self.path("down/data.csv")).content, b"a,b\n1,2\n")
        # Named explicitly; unspecified overwrite overwrites, false refuses.
        again = self.drive.download_file(name=self.name, remote_path=remote, local_path=self.path("down/data.csv"), workspace=PARENT)
        self.assertEqual(again.file_info.size, 8)
        self.assertApiError(409, self.drive.download_file, name=self.name, remote_path=remote, local_path=self.path("down/data.csv"),
                            overwrite=False)
        self.drive.upload_file(name=self.name, local_path=local, remote_path=remote + ".copy", workspace=PARENT)

        self.assertApiError(404, self.drive.download_file, name=self.name, remote_path="oc-no-such/file", local_path=self.path("x"))
        self.assertApiError(404, self.drive.upload_file, name=self.name, local_path=self.path("missing"), remote_path=remote)
        self.assertApiError(404, self.other.h2o_drive_client.upload_file, name=self.name, local_path=local, remote_path=remote)

    def test_secure_store(self) -> None:
        path = self.path("secret.txt")
        self.fs.make_directory(name=self.name, path=self.path(), create_parent_directories=True)
        revealed = self.secure_store.reveal_secret_to_file(name=self.name, secret_version=self.secret_version, path=path)
        self.assertEqual((revealed.secret_version, revealed.file_info.path, revealed.file_info.size),
                         (self.secret_version, path, len(SECRET_VALUE)))
        self.assertEqual(self.fs.read_file(name=self.name, path=path).content, SECRET_VALUE)
        # As the official tests reveal: the latest version, into directories that do not exist yet,
        # over a file that exists.
        latest = self.secret_version.rsplit("/", 1)[0] + "/latest"
        nested = self.path("deep/nested/directory/structure/secret.txt")
        revealed = self.secure_store.reveal_secret_to_file(name=self.name, secret_version=latest, path=nested)
        self.assertIn(self.secret_version.split("/")[3], revealed.secret_version)
        self.assertEqual((revealed.file_info.path, revealed.file_info.type, revealed.file_info.size),
                         (nested, FileType.FILE_TYPE_REGULAR, len(SECRET_VALUE)))
        self.fs.write_file(name=self.name, path=path, content=b"the original content, longer than the secret")
        self.assertEqual(self.secure_store.reveal_secret_to_file(name=self.name, secret_version=latest, path=path).file_info.size,
                         len(SECRET_VALUE))
        self.assertEqual(self.fs.read_file(name=self.name, path=path).content, SECRET_VALUE)
        missing = self.secret_version.rsplit("/", 1)[0] + "/99"
        self.assertApiError(404, self.secure_store.reveal_secret_to_file, name=self.name, secret_version=missing, path=path)
        self.assertApiError(400, self.secure_store.reveal_secret_to_file, name=self.name, secret_version="not-a-version", path=path)
        self.assertApiError(404, self.other.h2o_secure_store_client.reveal_secret_to_file, name=self.name,
                            secret_version=self.secret_version, path=path)

    def test_metrics(self) -> None:
        for strict in (False, True):
            with self.subTest(strict_mode=strict):
                metrics = self.metrics.read_metrics(name=self.name, strict_mode=strict)
                self.assertIsNotNone(metrics.collect_time)
                self.assertEqual(metrics.memory.limit_bytes, 2 * 1024**3)  # the template's limit
                self.assertGreater(metrics.memory.current_bytes, 0)
                self.assertGreater(metrics.disk.total_bytes, 0)
                self.assertEqual(metrics.disk.used_bytes, metrics.disk.total_bytes - metrics.disk.available_bytes)
                self.assertTrue(0 <= metrics.disk.usage_ratio <= 1)
                self.assertGreaterEqual(metrics.cpu.usage_ratio, 0)
        self.assertApiError(404, self.metrics.read_metrics, name=f"{PARENT}/sandboxEngines/oc-no-such-sandbox")
        self.assertApiError(404, self.other.metrics_client.read_metrics, name=self.name)

    def test_workspace_named_by_uuid(self) -> None:
        """A workspace id may start with a digit, as the UUIDs the official tests use do."""
        parent = "workspaces/8cf6b17d-c018-48f0-8d05-cdd5fba22893"
        self.assertEqual(self.engines.list_all_sandbox_engines(parent=parent), [])
        missing = f"{parent}/sandboxEngines/oc-none"
        self.assertApiError(404, self.engines.get_sandbox_engine, name=missing)
        self.assertApiError(404, self.fs.stat_file, name=missing, path="/workspace")
        self.assertApiError(404, self.ports.list_ports, parent=missing)

    # -- another member -----------------------------------------------------------------------------

    def test_other_member_finds_nothing(self) -> None:
        """To another member the sandbox and all inside it do not exist: 404 as for a missing one."""
        path = self.path("mine.txt")
        self.fs.write_file(name=self.name, path=path, content=b"mine", create_parent_directories=True)
        process = self.processes.create_process(parent=self.name, process=Process(command="echo", args=["mine"]), auto_run=True)
        self.processes.wait_process(name=process.name)
        port = self.ports.create_port(parent=self.name, port=Port(display_name="Mine", public=False), port_id="8123")
        self.addCleanup(self.ports.delete_port, name=port.name)
        fs, ps, ports, drive = (self.other.filesystem_client, self.other.process_client, self.other.port_client,
                                self.other.h2o_drive_client)
        missing = f"{PARENT}/sandboxEngines/{oc.unique('oc-none')}"
        for sandbox in (self.name, missing):
            with self.subTest(sandbox=sandbox):
                calls = [
                    (fs.read_file, dict(name=sandbox, path=path)),
                    (fs.write_file, dict(name=sandbox, path=self.path("theirs.txt"), content=b"x", create_parent_directories=True)),
                    (fs.list_directory, dict(name=sandbox, path="/workspace")),
                    (fs.stat_file, dict(name=sandbox, path=path)),
                    (fs.make_directory, dict(name=sandbox, path=self.path("theirs"), create_parent_directories=True)),
                    (fs.move, dict(name=sandbox, source_path=path, destination_path=self.path("moved.txt"))),
                    (fs.remove, dict(name=sandbox, path=path)),
                    (ps.create_process, dict(parent=sandbox, process=Process(command="echo"), auto_run=True)),
                    (ps.list_processes, dict(parent=sandbox)),
                    (ports.create_port, dict(parent=sandbox, port=Port(display_name="Theirs", public=False), port_id="9999")),
                    (ports.list_ports, dict(parent=sandbox)),
                    (drive.upload_file, dict(name=sandbox, local_path=path, remote_path="theirs/x.txt")),
                    (drive.download_file, dict(name=sandbox, remote_path="theirs/x.txt", local_path=self.path("d.txt"))),
                    (self.other.metrics_client.read_metrics, dict(name=sandbox)),
                    (self.other_engines().get_sandbox_engine, dict(name=sandbox)),
                    (self.other_engines().terminate_sandbox_engine, dict(name=sandbox)),
                    (self.other_engines().delete_sandbox_engine, dict(name=sandbox)),
                ]
                for call, kwargs in calls:
                    error = self.assertApiError(404, call, **kwargs)
                    self.assertNotIn("creator", str(error))
        theirs_process = process.name
        theirs_port = Port(name=port.name, display_name="Changed", public=False)
        for call, kwargs in [
            (ps.get_process, dict(name=theirs_process)),
            (ps.wait_process, dict(name=theirs_process)),
            (ps.read_output, dict(name=theirs_process)),
            (ps.send_signal, dict(name=theirs_process, signal=15)),
            (ports.get_port, dict(name=port.name)),
            (ports.update_port, dict(port=theirs_port, update_mask=["display_name"])),
            (ports.delete_port, dict(name=port.name)),
        ]:
            self.assertApiError(404, call, **kwargs)
        # The creator's things are untouched.
        self.assertEqual(self.fs.read_file(name=self.name, path=path).content, b"mine")
        self.assertEqual(self.ports.get_port(name=port.name).display_name, "Mine")
        self.assertEqual(self.engines.get_sandbox_engine(name=self.name).state, SandboxEngineState.STATE_RUNNING)

    # -- last: the end of the sandbox --------------------------------------------------------------

    def test_zz_terminate_and_delete(self) -> None:
        terminating = self.engines.terminate_sandbox_engine(name=self.name)
        self.assertIn(terminating.state, (SandboxEngineState.STATE_TERMINATING, SandboxEngineState.STATE_TERMINATED))
        terminated = self.engines.wait(name=self.name, timeout_seconds=WAIT)
        self.assertEqual(terminated.state, SandboxEngineState.STATE_TERMINATED)
        # Nothing runs inside a terminated sandbox: 400, "not in running state".
        for call, kwargs in [
            (self.fs.stat_file, dict(name=self.name, path="/workspace")),
            (self.fs.read_file, dict(name=self.name, path="/workspace/x")),
            (self.fs.write_file, dict(name=self.name, path="/workspace/x", content=b"x")),
            (self.processes.create_process, dict(parent=self.name, process=Process(command="echo"), auto_run=True)),
            (self.drive.upload_file, dict(name=self.name, local_path="/workspace/x", remote_path="x")),
            (self.metrics.read_metrics, dict(name=self.name)),
        ]:
            error = self.assertApiError(400, call, **kwargs)
            self.assertIn("not in running state", str(error).lower())
        # Ports may be made while it starts or runs, not after.
        error = self.assertApiError(400, self.ports.create_port, parent=self.name, port=Port(), port_id="6666")
        self.assertIn("starting or running", str(error).lower())
        self.assertIsNone(self.engines.delete_sandbox_engine(name=self.name))
        self.assertIsNone(self.engines.wait(name=self.name, timeout_seconds=WAIT))
        self.assertApiError(404, self.engines.get_sandbox_engine, name=self.name)
        self.assertApiError(404, self.engines.delete_sandbox_engine, name=self.name)


if __name__ == "__main__":
    unittest.main()
