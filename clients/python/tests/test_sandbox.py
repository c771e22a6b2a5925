"""Sandbox engines and what runs inside them, against the real server.

One sandbox engine from the demo catalogue (image and template ``default`` in
``workspaces/global``) serves the filesystem, process, port, drive and secure store tests; it is
terminated and deleted at the end. These tests skip while the sandbox service answers
UNIMPLEMENTED.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import unittest

from tests import support
from tests.support import requires, unique
from ai_engine_manager.exception import CustomApiException, TimeoutException
from ai_engine_manager.filesystem.file_type import FileType
from ai_engine_manager.port.port import Port
from ai_engine_manager.port.state import PortState
from ai_engine_manager.process.output_stream import OutputStream
from ai_engine_manager.process.process import Process
from ai_engine_manager.process.secret_environment_variable import SecretEnvironmentVariable
from ai_engine_manager.process.state import ProcessState
from ai_engine_manager.sandbox_engine.pending_reason import SandboxEnginePendingReason
from ai_engine_manager.sandbox_engine.sandbox_engine import SandboxEngine
from ai_engine_manager.sandbox_engine.state import SandboxEngineState
from ai_engine_manager.secret.secret import Secret
from ai_engine_manager.secret.version import SecretVersion

WAIT = 60
IMAGE = "workspaces/global/sandboxEngineImages/default"
TEMPLATE = "workspaces/global/sandboxEngineTemplates/default"


_shared: dict[str, SandboxEngine] = {}


def shared_sandbox() -> SandboxEngine:
    """The running sandbox engine that the test classes of this module share, created once."""
    if "sandbox" not in _shared:
        alice = support.clients("alice")
        workspace = "workspaces/" + unique("py")
        sandbox = alice.sandbox_engine_client.create_sandbox_engine(
            parent=workspace,
            sandbox_engine_id="py-sandbox",
            sandbox_engine_image=IMAGE,
            sandbox_engine_template=TEMPLATE,
            display_name="Py sandbox",
            annotations={"suite": "python"},
        )
        _shared["sandbox"] = alice.sandbox_engine_client.wait(name=sandbox.name, timeout_seconds=WAIT)
    return _shared["sandbox"]


def tearDownModule() -> None:  # noqa: N802
    sandbox = _shared.pop("sandbox", None)
    if sandbox is not None:
        try:
            sandbox.delete()
        except CustomApiException:
            pass


class SandboxTestCase(unittest.TestCase):
    sandbox: SandboxEngine

    @classmethod
    def setUpClass(cls) -> None:
        cls.alice = support.clients("alice")
        cls.bob = support.clients("bob")
        cls.sandbox = shared_sandbox()
        cls.workspace = cls.sandbox.name.split("/sandboxEngines/")[0]

    def assertCode(self, code_names: str | set[str], call, *args, **kwargs) -> CustomApiException:  # noqa: N802
        wanted = {code_names} if isinstance(code_names, str) else code_names
        with self.assertRaises(CustomApiException) as caught:
            call(*args, **kwargs)
        self.assertIn(caught.exception.code_name, wanted, str(caught.exception))
        return caught.exception

    def run_process(self, script: str, **kwargs) -> Process:
        processes = self.alice.process_client
        created = processes.create_process(parent=self.sandbox.name, command="/bin/sh", args=["-c", script], auto_run=True, **kwargs)
        return processes.wait_process(name=created.name, timeout_seconds=WAIT)


@requires("sandbox_engine", "sandbox_engine_image", "sandbox_engine_template")
class SandboxEngineClientTest(unittest.TestCase):
    def test_sandbox_lifecycle(self) -> None:
        alice = support.clients("alice")
        sandboxes = alice.sandbox_engine_client
        parent = "workspaces/" + unique("py")
        sandbox = sandboxes.create_sandbox_engine(
            parent=parent, sandbox_engine_image=IMAGE, sandbox_engine_template=TEMPLATE, display_name="Agent Run"
        )
        self.assertEqual(sandbox.sandbox_engine_id, "agent-run")
        self.assertEqual((sandbox.sandbox_engine_image, sandbox.sandbox_engine_template), (IMAGE, TEMPLATE))
        self.assertEqual(sandbox.sandbox_engine_template_info.memory_bytes_limit, "2Gi")
        self.assertEqual(sandbox.sandbox_engine_template_info.max_running_duration, "8h")
        self.assertEqual(sandbox.sandbox_engine_image_info.name, IMAGE)
        # STARTING with what it waits for; or, handed a warm sandbox of the template (an earlier
        # test used it), RUNNING at once.
        if sandbox.state == SandboxEngineState.STATE_STARTING:
            self.assertIn(sandbox.pending_reason, (SandboxEnginePendingReason.PENDING_REASON_CREATING_RESOURCES,
                                                   SandboxEnginePendingReason.PENDING_REASON_WAITING_READINESS))
        else:
            self.assertEqual((sandbox.state, sandbox.pending_reason),
                             (SandboxEngineState.STATE_RUNNING, SandboxEnginePendingReason.PENDING_REASON_UNSPECIFIED))

        sandbox.wait(timeout_seconds=WAIT)
        self.assertEqual(sandbox.state, SandboxEngineState.STATE_RUNNING)
        self.assertEqual((sandbox.pending_reason, sandbox.pending_message),
                         (SandboxEnginePendingReason.PENDING_REASON_UNSPECIFIED, ""))
        self.assertEqual(sandboxes.get_sandbox_engine(sandbox.name).uid, sandbox.uid)
        page = sandboxes.list_sandbox_engines(parent=parent)
        self.assertEqual(([s.name for s in page.sandbox_engines], page.total_size), ([sandbox.name], 1))
        self.assertEqual([s.name for s in sandboxes.list_all_sandbox_engines(parent=parent, filter="state = STATE_RUNNING")],
                         [sandbox.name])

        sandbox.terminate()
        self.assertIn(sandbox.state, (SandboxEngineState.STATE_TERMINATING, SandboxEngineState.STATE_TERMINATED))
        sandbox.wait(timeout_seconds=WAIT)
        self.assertEqual(sandbox.state, SandboxEngineState.STATE_TERMINATED)
        with self.assertRaises(CustomApiException) as caught:
            sandboxes.terminate_sandbox_engine(name=sandbox.name)
        self.assertEqual(caught.exception.code_name, "FAILED_PRECONDITION")

        # Positionally in the official order: parent, sandbox_engine (the id is generated here).
        other = sandboxes.create_sandbox_engine(parent, SandboxEngine(sandbox_engine_image=IMAGE, sandbox_engine_template=TEMPLATE))
        self.assertEqual(other.sandbox_engine_id, "new-sandbox-engine")
        other.delete()
        self.assertEqual(other.state, SandboxEngineState.STATE_DELETING)
        other.wait(timeout_seconds=WAIT)

        deleted = sandboxes.delete_sandbox_engine(name=sandbox.name)
        self.assertEqual(deleted.state, SandboxEngineState.STATE_DELETING)
        deleted.wait(timeout_seconds=WAIT)
        self.assertEqual(deleted.state, SandboxEngineState.STATE_DELETING, "a deleted sandbox keeps its last state")
        with self.assertRaises(CustomApiException) as caught:
            sandboxes.get_sandbox_engine(sandbox.name)
        self.assertEqual(caught.exception.code_name, "NOT_FOUND")


@requires("sandbox_engine", "filesystem", "sandbox_engine_image", "sandbox_engine_template")
class FilesystemClientTest(SandboxTestCase):
    def test_files_and_directories(self) -> None:
        files = self.alice.filesystem_client
        name = self.sandbox.name
        made = files.make_directory(name=name, path="/workspace/py/data", create_parent_directories=True)
        self.assertEqual((made.type, made.mode), (FileType.FILE_TYPE_DIRECTORY, "0755"))
        self.assertEqual(files.make_directory(name=name, path="/workspace/py/data").path, "/workspace/py/data")
        self.assertCode("ALREADY_EXISTS", files.create_directory, name=name, path="/workspace/py/data")
        created = files.create_directory(name=name, path="/workspace/py/new")
        self.assertEqual(created.type, FileType.FILE_TYPE_DIRECTORY)
        self.assertCode("FAILED_PRECONDITION", files.create_directory, name=name, path="/workspace/none/x")

        written = files.write_file(name=name, path="/workspace/py/data/a.txt", content=b"hello")
        self.assertEqual((written.size, written.mode, written.type), (5, "0644", FileType.FILE_TYPE_REGULAR))
        self.assertCode("ALREADY_EXISTS", files.write_file, name=name, path="/workspace/py/data/a.txt", content=b"x",
                        overwrite=False)
        files.write_file(name=name, path="/workspace/py/data/a.txt", content="héllo")
        self.assertEqual(files.read_file(name=name, path="/workspace/py/data/a.txt"), "héllo".encode())
        script = files.write_file(name=name, path="/workspace/py/run.sh", content=b"#!/bin/sh\n", mode="0750")
        self.assertEqual(script.mode, "0750")
        self.assertCode("INVALID_ARGUMENT", files.write_file, name=name, path="/workspace/py/run.sh", content=b"", mode="999")
        self.assertEqual(files.stat_file(name=name, path="/workspace/py/data/a.txt").size, 6)
        self.assertIsNotNone(files.stat_file(name=name, path="/workspace/py/data/a.txt").modify_time)
        self.assertEqual([i.path for i in files.list_directory(name=name, path="/workspace/py/data")], ["/workspace/py/data/a.txt"])

        moved = files.move(name=name, source_path="/workspace/py/data/a.txt", destination_path="/workspace/py/moved/b.txt",
                           create_parent_directories=True)
        self.assertEqual(moved.path, "/workspace/py/moved/b.txt")
        self.assertCode("NOT_FOUND", files.stat_file, name=name, path="/workspace/py/data/a.txt")
        self.assertCode("FAILED_PRECONDITION", files.remove, name=name, path="/workspace/py/moved")
        files.remove(name=name, path="/workspace/py/moved", recursive=True)
        self.assertEqual([i.path for i in files.list_directory(name=name, path="/workspace/py")],
                         ["/workspace/py/data", "/workspace/py/new", "/workspace/py/run.sh"])
        self.assertCode("INVALID_ARGUMENT", files.read_file, name=name, path="relative.txt")
        self.assertCode("NOT_FOUND", self.bob.filesystem_client.read_file, name=name, path="/workspace/py")

    def test_upload_and_download_stream_large_files(self) -> None:
        files = self.alice.filesystem_client
        name = self.sandbox.name
        # 6 MiB of every byte value: more than the server's JSON request limit takes as base64.
        content = bytes(range(256)) * (6 * 4096)
        with tempfile.TemporaryDirectory() as tmp:
            local = os.path.join(tmp, "data.bin")
            with open(local, "wb") as f:
                f.write(content)
            info = files.upload_file(name=name, path="/workspace/up/data.bin", source=local, create_parent_directories=True)
            self.assertEqual((info.size, info.mode, info.type), (len(content), "0644", FileType.FILE_TYPE_REGULAR))
            self.assertCode("ALREADY_EXISTS", files.upload_file, name=name, path="/workspace/up/data.bin", source=b"x", overwrite=False)
            back = os.path.join(tmp, "back.bin")
            self.assertEqual(files.download_file(name=name, path="/workspace/up/data.bin", destination=back), len(content))
            with open(back, "rb") as f:
                self.assertEqual(hashlib.sha256(f.read()).hexdigest(), hashlib.sha256(content).hexdigest())
            self.assertEqual(sorted(os.listdir(tmp)), ["back.bin", "data.bin"])
            # Open files and bytes work too; a failed download leaves no local file behind.
            sink = io.BytesIO()
            self.assertEqual(files.upload_file(name=name, path="/workspace/up/small", source=io.BytesIO(b"small"), mode="0600").mode, "0600")
            files.download_file(name=name, path="/workspace/up/small", destination=sink)
            self.assertEqual(sink.getvalue(), b"small")
            self.assertCode("NOT_FOUND", files.download_file, name=name, path="/workspace/up/none", destination=os.path.join(tmp, "none"))
            self.assertFalse(os.path.exists(os.path.join(tmp, "none")) or os.path.exists(os.path.join(tmp, "none.part")))


@requires("sandbox_engine", "process", "sandbox_engine_image", "sandbox_engine_template")
class ProcessClientTest(SandboxTestCase):
    def test_output_and_exit_code(self) -> None:
        processes = self.alice.process_client
        ended = self.run_process("echo out; echo err >&2; exit 3", environment_variables={"X": "1"})
        self.assertEqual((ended.state, ended.exit_code), (ProcessState.STATE_FAILED, 3))
        self.assertIsNotNone(ended.end_time)
        self.assertEqual(processes.read_output(name=ended.name), b"out\nerr\n")
        self.assertEqual(processes.read_output(name=ended.name, output_stream=OutputStream.OUTPUT_STREAM_STDOUT), b"out\n")
        self.assertEqual(processes.read_output(name=ended.name, output_stream="OUTPUT_STREAM_STDERR"), b"err\n")

        chunks = list(processes.stream_output(name=ended.name))
        self.assertEqual(b"".join(c.data for c in chunks), b"out\nerr\n")
        self.assertEqual({c.stream for c in chunks}, {OutputStream.OUTPUT_STREAM_STDOUT, OutputStream.OUTPUT_STREAM_STDERR})
        tail = list(processes.stream_output(name=ended.name, start_offset=4))
        self.assertEqual(b"".join(c.data for c in tail), b"err\n")
        frames = processes.read_output_frames(name=ended.name)
        self.assertEqual([(f.stream, f.data, f.offset) for f in frames],
                         [(OutputStream.OUTPUT_STREAM_STDOUT, b"out\n", 0), (OutputStream.OUTPUT_STREAM_STDERR, b"err\n", 4)])

    def test_pending_process_streams_live_output(self) -> None:
        processes = self.alice.process_client
        pending = processes.create_process(
            parent=self.sandbox.name,
            process=Process(command="/bin/sh", args=["-c", "for i in 1 2 3; do echo $i; sleep 0.2; done"],
                            working_directory="/workspace"),
            process_id="counter",
        )
        self.assertEqual(pending.name, f"{self.sandbox.name}/processes/counter")
        self.assertEqual(pending.state, ProcessState.STATE_PENDING)
        started = processes.start_process(name=pending.name)
        self.assertIn(started.state, (ProcessState.STATE_RUNNING, ProcessState.STATE_SUCCEEDED))
        streamed = b"".join(c.data for c in processes.stream_output(name=pending.name))
        self.assertEqual(streamed, b"1\n2\n3\n")
        # The stream ends once the output is drained; :wait returns once the end is recorded.
        done = processes.wait_process(name=pending.name)
        self.assertEqual((done.state, done.exit_code), (ProcessState.STATE_SUCCEEDED, 0))

        succeeded = processes.list_processes(parent=self.sandbox.name, filter="state = STATE_SUCCEEDED")
        self.assertIn(pending.name, [p.name for p in succeeded.processes])
        everything = processes.list_all_processes(parent=self.sandbox.name, page_size=1)
        self.assertIn(pending.name, [p.name for p in everything])
        deleted = processes.delete_process(name=pending.name)
        self.assertEqual(deleted.name, pending.name)
        self.assertCode("NOT_FOUND", processes.get_process, name=pending.name)

    def test_signals(self) -> None:
        processes = self.alice.process_client
        sleeper = processes.create_process(parent=self.sandbox.name, command="sleep", args=["30"], auto_run=True)
        processes.send_signal(name=sleeper.name, signal=15)
        ended = processes.wait_process(name=sleeper.name, timeout_seconds=WAIT)
        self.assertEqual((ended.state, ended.exit_code), (ProcessState.STATE_FAILED, 143))
        self.assertCode("INVALID_ARGUMENT", processes.send_signal, name=sleeper.name, signal=0)

    def test_wait_timeout(self) -> None:
        processes = self.alice.process_client
        sleeper = processes.create_process(parent=self.sandbox.name, command="sleep", args=["30"], auto_run=True)
        with self.assertRaises(TimeoutException):
            processes.wait_process(name=sleeper.name, timeout_seconds=0.5)
        processes.send_signal(name=sleeper.name, signal=9)


@requires("sandbox_engine", "process", "secret", "secure_store", "sandbox_engine_image", "sandbox_engine_template")
class SecretsInSandboxTest(SandboxTestCase):
    def test_secret_environment_variables_and_files(self) -> None:
        secrets = self.alice.secret_client
        secret = secrets.create_secret(parent=self.workspace, secret=Secret(display_name="Token"), secret_id="token")
        secrets.add_secret_version(parent=secret.name, secret_version=SecretVersion(value=b"s3cr3t"))
        latest = f"{secret.name}/versions/latest"

        ended = self.run_process('printf %s "$TOKEN"', secret_environment_variables={"TOKEN": latest})
        self.assertEqual(self.alice.process_client.read_output(name=ended.name), b"s3cr3t")
        again = self.run_process('printf %s "$TOKEN"',
                                 secret_environment_variables={"TOKEN": SecretEnvironmentVariable(secret_version=latest)})
        self.assertEqual(self.alice.process_client.get_process(name=again.name).secret_environment_variables["TOKEN"].secret_version,
                         latest)

        info = self.alice.sandbox_clients.h2o_secure_store_client.reveal_secret_to_file(name=self.sandbox.name, secret_version=latest,
                                                                    path="/workspace/secrets/token")
        self.assertEqual((info.mode, info.size), ("0600", 6))
        self.assertEqual(self.alice.filesystem_client.read_file(name=self.sandbox.name, path="/workspace/secrets/token"), b"s3cr3t")


@requires("sandbox_engine", "port", "sandbox_engine_image", "sandbox_engine_template")
class PortClientTest(SandboxTestCase):
    def test_ports(self) -> None:
        ports = self.alice.port_client
        port = ports.create_port(parent=self.sandbox.name, port_id=8080, display_name="Web")
        self.assertEqual(port.name, f"{self.sandbox.name}/ports/8080")
        self.assertEqual(port.state, PortState.STATE_PENDING)
        # READY once routed, whether or not a program listens yet (docs/adr/0136).
        self.assertEqual(ports.wait(name=port.name, timeout_seconds=WAIT).state, PortState.STATE_READY)
        self.assertTrue(port.internal_url)
        self.assertEqual((port.public, port.public_url), (False, ""))
        self.assertCode("ALREADY_EXISTS", ports.create_port, parent=self.sandbox.name, port_id="8080")
        self.assertCode("INVALID_ARGUMENT", ports.create_port, parent=self.sandbox.name, port_id=80)
        other = ports.create_port(parent=self.sandbox.name, port_id=9090, port=Port(display_name="Other", public=True))
        self.assertTrue(other.public_url)

        port.public = True
        public = ports.update_port(port, update_mask="public")
        self.assertTrue(public.public and public.public_url)
        self.assertEqual(ports.get_port(name=port.name).public, True)
        self.assertEqual(len(ports.list_ports(parent=self.sandbox.name).ports), 2)
        self.assertEqual(len(ports.list_all_ports(parent=self.sandbox.name, page_size=1)), 2)
        ports.delete_port(name=other.name)
        self.assertIsNone(ports.wait(name=other.name, timeout_seconds=WAIT))
        self.assertEqual([p.name for p in ports.list_all_ports(parent=self.sandbox.name)], [port.name])


@requires("sandbox_engine", "drive", "filesystem", "sandbox_engine_image", "sandbox_engine_template")
class DriveClientTest(SandboxTestCase):
    def test_upload_and_download(self) -> None:
        files = self.alice.filesystem_client
        files.write_file(name=self.sandbox.name, path="/workspace/out/report.txt", content=b"results", create_parent_directories=True)
        drive = self.alice.sandbox_clients.h2o_drive_client
        uploaded = drive.upload_file(name=self.sandbox.name, workspace=self.workspace, local_path="/workspace/out/report.txt",
                                     remote_path="py/report.txt")
        self.assertEqual(uploaded, 7)
        info = drive.download_file(name=self.sandbox.name, workspace=self.workspace, remote_path="py/report.txt",
                                   local_path="/workspace/in/report.txt", create_parent_directories=True)
        self.assertEqual((info.path, info.size), ("/workspace/in/report.txt", 7))
        self.assertCode("ALREADY_EXISTS", drive.download_file, name=self.sandbox.name, workspace=self.workspace,
                        remote_path="py/report.txt", local_path="/workspace/in/report.txt", overwrite=False)
        drive.download_file(name=self.sandbox.name, workspace=self.workspace, remote_path="py/report.txt",
                            local_path="/workspace/in/report.txt", overwrite=True)
        # Without a workspace: the sandbox engine's own, and without overwrite: replace.
        self.assertEqual(drive.upload_file(name=self.sandbox.name, local_path="/workspace/out/report.txt",
                                           remote_path="py/own.txt"), 7)
        drive.download_file(name=self.sandbox.name, remote_path="py/own.txt", local_path="/workspace/in/report.txt")
        self.assertCode("NOT_FOUND", drive.download_file, name=self.sandbox.name, workspace=self.workspace,
                        remote_path="py/missing.txt", local_path="/workspace/in/missing.txt")


@requires("sandbox_engine", "metrics", "sandbox_engine_image", "sandbox_engine_template")
class MetricsClientTest(SandboxTestCase):
    def test_read_metrics(self) -> None:
        metrics = self.alice.metrics_client.read_metrics(name=self.sandbox.name)
        self.assertGreater(metrics.memory.current_bytes, 0)
        self.assertEqual(metrics.memory.limit_bytes, 2 << 30)
        self.assertGreater(metrics.disk.total_bytes, 0)
        self.assertLessEqual(metrics.disk.available_bytes, metrics.disk.total_bytes)
        self.assertTrue(0.0 <= metrics.cpu.usage_ratio <= 1.0)
        self.assertIsNotNone(metrics.collect_time)
        self.assertEqual(self.alice.metrics_client.read_metrics(name=self.sandbox.name, strict_mode=True).memory.limit_bytes, 2 << 30)
        self.assertCode("NOT_FOUND", self.bob.metrics_client.read_metrics, name=self.sandbox.name)


@requires("sandbox_engine", "filesystem", "process", "port", "metrics", "sandbox_engine_image", "sandbox_engine_template")
class OfficialCallsTest(SandboxTestCase):
    """Calls written for the official client (positional, in its order) mean the same with ours."""

    def test_filesystem_and_metrics_flags_positionally(self) -> None:
        files = self.alice.filesystem_client
        name = self.sandbox.name
        self.assertEqual(files.make_directory(name, "/workspace/official/a/b", True).type, FileType.FILE_TYPE_DIRECTORY)
        self.assertEqual(files.write_file(name, "/workspace/official/new/f.txt", b"abc", True).size, 3)
        self.assertCode("ALREADY_EXISTS", files.write_file, name, "/workspace/official/new/f.txt", b"x", False, False)
        self.assertEqual(files.write_file(name, "/workspace/official/new/f.txt", b"abcd", False, True).size, 4)
        moved = files.move(name, "/workspace/official/new/f.txt", "/workspace/official/moved/g.txt", None, True)
        self.assertEqual(moved.path, "/workspace/official/moved/g.txt")
        files.remove(name, "/workspace/official", True)
        self.assertCode("NOT_FOUND", files.stat_file, name, "/workspace/official")
        self.assertEqual(self.alice.metrics_client.read_metrics(name, True).memory.limit_bytes, 2 << 30)

    def test_processes_in_the_official_order(self) -> None:
        processes = self.alice.process_client
        created = processes.create_process(
            self.sandbox.name, Process(command="/bin/sh", args=["-c", "sleep 0.3; echo polled"]), "polled", True
        )
        self.assertEqual(created.name, f"{self.sandbox.name}/processes/polled")
        ended = processes.wait_process_by_polling(created.name, 30, 0.1)
        self.assertEqual((ended.state, ended.exit_code), (ProcessState.STATE_SUCCEEDED, 0))
        self.assertEqual(processes.read_output(created.name), b"polled\n")
        self.assertEqual(processes.read_output(created.name, "OUTPUT_STREAM_STDOUT"), b"polled\n")
        page = processes.list_processes(self.sandbox.name, 1000, "", "state = STATE_SUCCEEDED")
        self.assertIn(created.name, [p.name for p in page.processes])
        self.assertEqual(processes.wait_process_by_polling(created.name).state, ProcessState.STATE_SUCCEEDED)

        sleeper = processes.create_process(self.sandbox.name, Process(command="sleep", args=["30"]), "", True)
        with self.assertRaises(TimeoutError) as caught:
            processes.wait_process_by_polling(sleeper.name, timeout_seconds=0.3, poll_interval_seconds=0.1)
        self.assertIn("STATE_RUNNING", str(caught.exception))
        processes.send_signal(sleeper.name, 9)
        self.assertEqual(processes.wait_process_by_polling(sleeper.name, None, 0.1).exit_code, 137)
        self.assertCode("NOT_FOUND", processes.wait_process_by_polling, f"{self.sandbox.name}/processes/never-was")

    def test_ports_in_the_official_order(self) -> None:
        ports = self.alice.port_client
        port = ports.create_port(self.sandbox.name, Port(display_name="Official"), "8181")
        self.assertEqual((port.name, port.display_name), (f"{self.sandbox.name}/ports/8181", "Official"))
        with self.assertRaises(TypeError):
            ports.create_port(self.sandbox.name, Port())
        port.public = True
        self.assertTrue(ports.update_port(port, ["public"]).public)
        first = ports.list_ports(self.sandbox.name, 1, "")
        self.assertEqual(len(first.ports), 1)
        ports.delete_port(port.name)
        self.assertIsNone(ports.wait(port.name, WAIT))


if __name__ == "__main__":
    unittest.main()
