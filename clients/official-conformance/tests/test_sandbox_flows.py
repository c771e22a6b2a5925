"""Sandboxes as the official integration tests drive them, each test with sandboxes of its own.

The official tests create an image and a template in ``workspaces/global`` (a template of 100/200
milli-CPU and 10Mi/20Mi of memory), an administrator creates a sandbox on them in
``workspaces/default`` and at once, before any read, calls into it; then waits, works in it,
terminates and deletes it. A member is the other user, who must find nothing. This module follows
those flows: the life cycle, the calls made before the sandbox is seen running, the calls on a
sandbox that does not exist, the creator-only rule, files, processes, ports, the drive between two
sandboxes and metrics.
"""

from __future__ import annotations

import time
import unittest
import uuid
from typing import Any

from . import _conformance as oc

from h2o_engine_manager.clients.base.image_pull_policy import ImagePullPolicy  # noqa: E402
from h2o_engine_manager.clients.exception import CustomApiException  # noqa: E402
from h2o_engine_manager.clients.sandbox.filesystem.file_type import FileType  # noqa: E402
from h2o_engine_manager.clients.sandbox.port.port import Port  # noqa: E402
from h2o_engine_manager.clients.sandbox.port.state import PortState  # noqa: E402
from h2o_engine_manager.clients.sandbox.process.process_state import ProcessState  # noqa: E402
from h2o_engine_manager.clients.sandbox.process.ps import Process  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine.engine import SandboxEngine  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine.state import SandboxEngineState  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine_image.image import SandboxEngineImage  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine_template.template import SandboxEngineTemplate  # noqa: E402
from h2o_engine_manager.gen.exceptions import ApiValueError  # noqa: E402

DEFAULT = "workspaces/default"
UUID_WORKSPACE = "workspaces/8cf6b17d-c018-48f0-8d05-cdd5fba22893"
WAIT = 120
S = SandboxEngineState


def short() -> str:
    return uuid.uuid4().hex[:8]


class SandboxFlowTest(oc.ConformanceCase):
    @classmethod
    def setUpClass(cls) -> None:
        admin = oc.admin()
        cls.engines = admin.sandbox_engine_client
        cls.fs = admin.sandbox_clients.filesystem_client
        cls.processes = admin.sandbox_clients.process_client
        cls.ports = admin.sandbox_clients.port_client
        cls.drive = admin.sandbox_clients.h2o_drive_client
        cls.metrics = admin.sandbox_clients.metrics_client
        cls.member = oc.member().sandbox_clients
        cls.template = admin.sandbox_engine_template_client.create_sandbox_engine_template(
            parent=oc.GLOBAL,
            sandbox_engine_template=SandboxEngineTemplate(
                display_name="Template T1", milli_cpu_request=100, milli_cpu_limit=200, memory_bytes_request="10Mi",
                memory_bytes_limit="20Mi", storage_bytes="10Mi", max_idle_duration="4h", max_running_duration="8h",
                gpu_resource="nvidia.com/gpu", gpu=0, enabled=True),
            sandbox_engine_template_id=oc.unique("oc-flow-t"))
        cls.image = admin.sandbox_engine_image_client.create_sandbox_engine_image(
            parent=oc.GLOBAL,
            sandbox_engine_image=SandboxEngineImage(image="registry.example.com/h2oai-sandbox-mock:latest-snapshot",
                                                    image_pull_secrets=["regcred"],
                                                    image_pull_policy=ImagePullPolicy.IMAGE_PULL_POLICY_ALWAYS),
            sandbox_engine_image_id=oc.unique("oc-flow-i"))

    @classmethod
    def tearDownClass(cls) -> None:
        admin = oc.admin()
        admin.sandbox_engine_template_client.delete_sandbox_engine_template(name=cls.template.name)
        admin.sandbox_engine_image_client.delete_sandbox_engine_image(name=cls.image.name)

    def create(self, parent: str = DEFAULT, display_name: str = "Flow", cleanup: bool = True) -> Any:
        """A sandbox on the module's image and template, as the administrator; deleted at the end."""
        engine = self.engines.create_sandbox_engine(
            parent=parent,
            sandbox_engine=SandboxEngine(sandbox_engine_template=self.template.name, sandbox_engine_image=self.image.name,
                                         display_name=display_name),
            sandbox_engine_id=f"sandbox-{short()}")
        if cleanup:
            self.addCleanup(self.delete_quietly, engine.name)
        return engine

    def delete_quietly(self, name: str) -> None:
        try:
            self.engines.delete_sandbox_engine(name=name)
        except CustomApiException:
            pass

    def running(self, engine: Any) -> Any:
        self.engines.wait(name=engine.name, timeout_seconds=WAIT)
        got = self.engines.get_sandbox_engine(name=engine.name)
        self.assertEqual(got.state, S.STATE_RUNNING)
        return got

    def assertNotRunning(self, call: Any, **kwargs: Any) -> None:
        error = self.assertApiError(400, call, **kwargs)
        self.assertIn("not in running state", str(error).lower())

    # -- the sandbox itself -------------------------------------------------------------------------

    def test_life_cycle(self) -> None:
        engine = self.create(parent=UUID_WORKSPACE, display_name="Sandbox E1")
        self.assertTrue(engine.name.startswith(f"{UUID_WORKSPACE}/sandboxEngines/sandbox-"))
        self.assertEqual((engine.display_name, engine.state, engine.sandbox_engine_image, engine.sandbox_engine_template),
                         ("Sandbox E1", S.STATE_STARTING, self.image.name, self.template.name))
        self.assertIsNotNone(engine.create_time)
        info = engine.sandbox_engine_template_info
        self.assertEqual((info.milli_cpu_request, info.milli_cpu_limit, info.memory_bytes_request, info.memory_bytes_limit,
                          info.storage_bytes, info.max_idle_duration, info.gpu), (100, 200, "10Mi", "20Mi", "10Mi", "4h", 0))

        terminating = self.engines.terminate_sandbox_engine(name=engine.name)
        self.assertEqual(terminating.state, S.STATE_TERMINATING)
        self.engines.wait(name=engine.name, timeout_seconds=30)
        self.assertEqual(self.engines.get_sandbox_engine(name=engine.name).state, S.STATE_TERMINATED)

        self.engines.delete_sandbox_engine(name=engine.name)
        try:
            self.assertEqual(self.engines.get_sandbox_engine(name=engine.name).state, S.STATE_DELETING)
        except CustomApiException as e:
            self.assertEqual(e.status, 404)
        self.assertIsNone(self.engines.wait(name=engine.name, timeout_seconds=30))
        self.assertApiError(404, self.engines.get_sandbox_engine, name=engine.name)

    def test_calls_before_the_sandbox_is_seen_running(self) -> None:
        """Created and called at once: refused until a read saw it running; ports are made at once.

        Three times in a row: the first sandbox of these limits starts cold, the next ones are most
        likely served by a warm sandbox whose agent already answers when the create does.
        """
        for attempt in range(3):
            with self.subTest(attempt=attempt):
                self.check_calls_before_running()

    def check_calls_before_running(self) -> None:
        engine = self.create()
        self.assertEqual(engine.state, S.STATE_STARTING)
        for call, kwargs in [
            (self.fs.read_file, dict(path="/workspace/test.txt")),
            (self.fs.write_file, dict(path="/workspace/test.txt", content=b"Test content", create_parent_directories=True)),
            (self.fs.list_directory, dict(path="/workspace")),
            (self.fs.stat_file, dict(path="/workspace/test.txt")),
            (self.fs.make_directory, dict(path="/workspace/test_dir", create_parent_directories=True)),
            (self.fs.move, dict(source_path="/workspace/source.txt", destination_path="/workspace/dest.txt")),
            (self.fs.remove, dict(path="/workspace/test.txt")),
            (self.drive.upload_file, dict(local_path="/workspace/test.txt", remote_path="test/uploaded.txt")),
            (self.drive.download_file, dict(remote_path="test/file.txt", local_path="/workspace/downloaded.txt")),
        ]:
            with self.subTest(call=call.__name__):
                self.assertNotRunning(call, name=engine.name, **kwargs)
        self.assertNotRunning(self.processes.create_process, parent=engine.name, process=Process(command="echo", args=["test"]),
                              auto_run=True)
        port = self.ports.create_port(parent=engine.name, port=Port(display_name="While starting", public=False), port_id="5555")
        self.assertIsNone(self.ports.delete_port(name=port.name))

        self.running(engine)
        self.fs.write_file(name=engine.name, path="/workspace/running.txt", content=b"Engine is now running",
                           create_parent_directories=True)
        self.assertEqual(self.fs.read_file(name=engine.name, path="/workspace/running.txt").content, b"Engine is now running")
        process = self.processes.create_process(parent=engine.name, process=Process(command="echo", args=["now running"]),
                                                auto_run=True)
        self.processes.wait_process(name=process.name)
        self.assertIn(b"now running", self.processes.read_output(name=process.name))
        self.assertGreater(self.drive.upload_file(name=engine.name, local_path="/workspace/running.txt",
                                                  remote_path=f"test/{short()}.txt").bytes_uploaded, 0)
        port = self.ports.create_port(parent=engine.name, port=Port(display_name="While running", public=False), port_id="5556")
        self.ports.delete_port(name=port.name)

        self.engines.terminate_sandbox_engine(name=engine.name)
        self.assertIn(self.engines.get_sandbox_engine(name=engine.name).state, (S.STATE_TERMINATING, S.STATE_TERMINATED))
        self.assertNotRunning(self.fs.read_file, name=engine.name, path="/workspace/running.txt")
        self.assertNotRunning(self.processes.create_process, parent=engine.name, process=Process(command="echo"), auto_run=True)
        self.assertNotRunning(self.drive.upload_file, name=engine.name, local_path="/workspace/running.txt", remote_path="test/x.txt")
        error = self.assertApiError(400, self.ports.create_port, parent=engine.name, port=Port(display_name="Late", public=False),
                                    port_id="6666")
        self.assertIn("starting or running", str(error).lower())

    def test_calls_on_a_sandbox_that_does_not_exist(self) -> None:
        missing = f"{DEFAULT}/sandboxEngines/nonexistent-{short()}"
        process = f"{missing}/processes/nonexistent-{short()}"
        port = f"{missing}/ports/9999"
        for call, kwargs in [
            (self.fs.read_file, dict(name=missing, path="/workspace/test.txt")),
            (self.fs.write_file, dict(name=missing, path="/workspace/test.txt", content=b"Test content")),
            (self.fs.list_directory, dict(name=missing, path="/workspace")),
            (self.fs.stat_file, dict(name=missing, path="/workspace/test.txt")),
            (self.fs.make_directory, dict(name=missing, path="/workspace/test_dir")),
            (self.fs.move, dict(name=missing, source_path="/workspace/source.txt", destination_path="/workspace/dest.txt")),
            (self.fs.remove, dict(name=missing, path="/workspace/test.txt")),
            (self.processes.create_process, dict(parent=missing, process=Process(command="echo", args=["test"]))),
            (self.processes.list_processes, dict(parent=missing)),
            (self.processes.get_process, dict(name=process)),
            (self.processes.start_process, dict(name=process)),
            (self.processes.wait_process, dict(name=process)),
            (self.processes.read_output, dict(name=process)),
            (self.processes.send_signal, dict(name=process, signal=15)),
            (self.ports.create_port, dict(parent=missing, port=Port(display_name="Test Port", public=False), port_id="1111")),
            (self.ports.list_ports, dict(parent=missing)),
            (self.ports.get_port, dict(name=port)),
            (self.ports.delete_port, dict(name=port)),
            (self.drive.upload_file, dict(name=missing, local_path="/workspace/test.txt", remote_path="test/file.txt")),
            (self.drive.download_file, dict(name=missing, remote_path="test/file.txt", local_path="/workspace/test.txt")),
        ]:
            with self.subTest(call=call.__name__):
                self.assertApiError(404, call, **kwargs)
        # Malformed names never leave the client.
        for call, kwargs in [
            (self.fs.read_file, dict(name="invalid-resource-name", path="/workspace/test.txt")),
            (self.fs.write_file, dict(name=DEFAULT, path="/workspace/test.txt", content=b"Test")),
            (self.fs.list_directory, dict(name="", path="/workspace")),
            (self.processes.create_process, dict(parent=DEFAULT, process=Process(command="echo"))),
            (self.ports.create_port, dict(parent="invalid-parent-name", port=Port(display_name="x", public=False), port_id="1234")),
            (self.drive.download_file, dict(name=DEFAULT, remote_path="test/file.txt", local_path="/workspace/test.txt")),
        ]:
            with self.assertRaises(ApiValueError) as caught:
                call(**kwargs)
            self.assertIn("must match regular expression", str(caught.exception))

    def test_only_the_creator_works_in_a_sandbox(self) -> None:
        engine = self.running(self.create())
        self.fs.write_file(name=engine.name, path="/workspace/creator_file.txt", content=b"Created by the administrator",
                           create_parent_directories=True)
        process = self.processes.create_process(parent=engine.name, process=Process(command="echo", args=["mine"]), auto_run=True)
        self.processes.wait_process(name=process.name)
        port = self.ports.create_port(parent=engine.name, port=Port(display_name="Auth Test Port", public=False), port_id="8888")
        fs, ps, ports, drive = (self.member.filesystem_client, self.member.process_client, self.member.port_client,
                                self.member.h2o_drive_client)
        for call, kwargs in [
            (fs.read_file, dict(name=engine.name, path="/workspace/creator_file.txt")),
            (fs.write_file, dict(name=engine.name, path="/workspace/basic.txt", content=b"x", create_parent_directories=True)),
            (fs.list_directory, dict(name=engine.name, path="/workspace")),
            (fs.stat_file, dict(name=engine.name, path="/workspace/creator_file.txt")),
            (fs.make_directory, dict(name=engine.name, path="/workspace/basic_dir", create_parent_directories=True)),
            (fs.move, dict(name=engine.name, source_path="/workspace/creator_file.txt", destination_path="/workspace/moved.txt")),
            (fs.remove, dict(name=engine.name, path="/workspace/creator_file.txt")),
            (ps.get_process, dict(name=process.name)),
            (ps.create_process, dict(parent=engine.name, process=Process(command="echo"), auto_run=True)),
            (ps.list_processes, dict(parent=engine.name)),
            (ps.wait_process, dict(name=process.name)),
            (ps.read_output, dict(name=process.name)),
            (ps.send_signal, dict(name=process.name, signal=15)),
            (ports.get_port, dict(name=port.name)),
            (ports.create_port, dict(parent=engine.name, port=Port(display_name="Unauthorized", public=False), port_id="9999")),
            (ports.list_ports, dict(parent=engine.name)),
            (ports.update_port, dict(port=Port(name=port.name, display_name="Changed Name", public=False), update_mask=["display_name"])),
            (ports.delete_port, dict(name=port.name)),
            (drive.upload_file, dict(name=engine.name, local_path="/workspace/creator_file.txt", remote_path="test/up.txt")),
            (drive.download_file, dict(name=engine.name, remote_path="test/some_file.txt", local_path="/workspace/down.txt")),
        ]:
            with self.subTest(call=call.__name__):
                self.assertApiError(404, call, **kwargs)
        self.assertEqual(self.fs.read_file(name=engine.name, path="/workspace/creator_file.txt").content,
                         b"Created by the administrator")
        self.assertEqual(self.processes.get_process(name=process.name).name, process.name)
        self.assertEqual(self.ports.get_port(name=port.name).name, port.name)
        self.ports.delete_port(name=port.name)

    # -- inside a running sandbox -------------------------------------------------------------------

    def test_files(self) -> None:
        engine = self.running(self.create())
        name = engine.name
        content = b"Hello from filesystem E2E test!\nThis is a test file.\nLine 3."
        written = self.fs.write_file(name=name, path="/workspace/test_file.txt", content=content, create_parent_directories=True)
        self.assertEqual((written.file_info.path, written.file_info.size, written.file_info.type),
                         ("/workspace/test_file.txt", len(content), FileType.FILE_TYPE_REGULAR))
        self.assertIsNotNone(written.file_info.mode)
        read = self.fs.read_file(name=name, path="/workspace/test_file.txt")
        self.assertEqual((read.content, read.file_info.path, read.file_info.size, read.file_info.type),
                         (content, "/workspace/test_file.txt", len(content), FileType.FILE_TYPE_REGULAR))
        rewritten = self.fs.write_file(name=name, path="/workspace/test_file.txt", content=b"Updated content.", overwrite=True)
        self.assertEqual(rewritten.file_info.size, len(b"Updated content."))
        self.assertEqual(self.fs.read_file(name=name, path="/workspace/test_file.txt").content, b"Updated content.")
        self.assertApiError(404, self.fs.read_file, name=name, path="/workspace/nonexistent_file.txt")
        with self.assertRaises(CustomApiException):
            self.fs.write_file(name=name, path="/workspace/no/such/dir/file.txt", content=b"fails", create_parent_directories=False)

        made = self.fs.make_directory(name=name, path="/workspace/deep/nested/path", create_parent_directories=True)
        self.assertEqual((made.path, made.type), ("/workspace/deep/nested/path", FileType.FILE_TYPE_DIRECTORY))
        self.assertIsNotNone(made.mode)
        self.assertEqual(self.fs.write_file(name=name, path="/workspace/deep/nested/path/test.txt", content=b"nested").file_info.path,
                         "/workspace/deep/nested/path/test.txt")
        self.fs.make_directory(name=name, path="/workspace/subdir", create_parent_directories=True)
        self.fs.write_file(name=name, path="/workspace/subdir/nested_file.txt", content=b"Nested file content")
        listed = {f.path: f for f in self.fs.list_directory(name=name, path="/workspace")}
        self.assertEqual(listed["/workspace/test_file.txt"].type, FileType.FILE_TYPE_REGULAR)
        self.assertGreater(listed["/workspace/test_file.txt"].size, 0)
        self.assertEqual(listed["/workspace/subdir"].type, FileType.FILE_TYPE_DIRECTORY)
        self.assertEqual([(f.path, f.type) for f in self.fs.list_directory(name=name, path="/workspace/subdir")],
                         [("/workspace/subdir/nested_file.txt", FileType.FILE_TYPE_REGULAR)])
        stat = self.fs.stat_file(name=name, path="/workspace/subdir")
        self.assertEqual((stat.path, stat.type), ("/workspace/subdir", FileType.FILE_TYPE_DIRECTORY))
        self.assertIsNotNone(stat.modify_time)

        moved = self.fs.move(name=name, source_path="/workspace/test_file.txt", destination_path="/workspace/renamed.txt")
        self.assertEqual((moved.path, moved.type, moved.size), ("/workspace/renamed.txt", FileType.FILE_TYPE_REGULAR, 16))
        self.assertApiError(404, self.fs.read_file, name=name, path="/workspace/test_file.txt")
        self.fs.write_file(name=name, path="/workspace/source_file.txt", content=b"Source content")
        self.fs.move(name=name, source_path="/workspace/source_file.txt", destination_path="/workspace/renamed.txt", overwrite=True)
        self.assertEqual(self.fs.read_file(name=name, path="/workspace/renamed.txt").content, b"Source content")

        self.fs.remove(name=name, path="/workspace/renamed.txt")
        self.assertApiError(404, self.fs.read_file, name=name, path="/workspace/renamed.txt")
        self.fs.make_directory(name=name, path="/workspace/empty_dir")
        self.fs.remove(name=name, path="/workspace/empty_dir")
        self.assertApiError(404, self.fs.stat_file, name=name, path="/workspace/empty_dir")
        self.fs.remove(name=name, path="/workspace/deep", recursive=True)
        self.assertApiError(404, self.fs.stat_file, name=name, path="/workspace/deep")

    def test_processes(self) -> None:
        engine = self.running(self.create())
        echo = self.processes.create_process(parent=engine.name, process=Process(command="echo", args=["Hello from process"]),
                                             auto_run=True)
        self.assertEqual((echo.command, echo.args), ("echo", ["Hello from process"]))
        self.assertIn(echo.state, (ProcessState.STATE_RUNNING, ProcessState.STATE_SUCCEEDED))
        done = self.processes.wait_process(name=echo.name)
        self.assertEqual((done.state, done.exit_code), (ProcessState.STATE_SUCCEEDED, 0))
        self.assertIn(b"Hello from process", self.processes.read_output(name=echo.name, output_stream="OUTPUT_STREAM_COMBINED"))

        deferred = self.processes.create_process(parent=engine.name, process_id="deferred-process", auto_run=False,
                                                 process=Process(command="sh", args=["-c", "echo 'Deferred process started'"]))
        self.assertEqual(deferred.state, ProcessState.STATE_PENDING)
        self.assertIn("deferred-process", deferred.name)
        self.assertIn(self.processes.start_process(name=deferred.name).state, (ProcessState.STATE_RUNNING, ProcessState.STATE_SUCCEEDED))
        self.assertEqual(self.processes.wait_process(name=deferred.name).exit_code, 0)
        self.assertIn(b"Deferred process started", self.processes.read_output(name=deferred.name))

        env = self.processes.create_process(parent=engine.name, auto_run=True, process=Process(
            command="sh", args=["-c", "echo MY_VAR is: $MY_VAR"], environment_variables={"MY_VAR": "test_value_123"}))
        self.assertEqual(self.processes.wait_process(name=env.name).state, ProcessState.STATE_SUCCEEDED)
        self.assertIn(b"MY_VAR is: test_value_123", self.processes.read_output(name=env.name))

        listed, _ = self.processes.list_processes(parent=engine.name, page_size=10)
        states = {p.name: (p.state, p.exit_code) for p in listed}
        for p in (echo, deferred, env):
            self.assertEqual(states[p.name], (ProcessState.STATE_SUCCEEDED, 0))

        sleeper = self.processes.create_process(parent=engine.name, process=Process(command="sleep", args=["30"]), auto_run=True)
        self.assertEqual(sleeper.state, ProcessState.STATE_RUNNING)
        with self.assertRaises(TimeoutError) as caught:
            self.processes.wait_process_by_polling(name=sleeper.name, timeout_seconds=2, poll_interval_seconds=1)
        self.assertIn("did not reach final state", str(caught.exception))
        self.assertIn(sleeper.name, str(caught.exception))
        self.assertIsNotNone(self.processes.send_signal(name=sleeper.name, signal=15))
        self.assertIn(self.processes.wait_process(name=sleeper.name).state, (ProcessState.STATE_SUCCEEDED, ProcessState.STATE_FAILED))
        polled = self.processes.wait_process_by_polling(name=echo.name, timeout_seconds=60, poll_interval_seconds=1)
        self.assertEqual((polled.state, polled.exit_code), (ProcessState.STATE_SUCCEEDED, 0))

    def test_ports(self) -> None:
        engine = self.running(self.create(parent=UUID_WORKSPACE))
        private = self.ports.create_port(parent=engine.name, port=Port(display_name="Private Port 8080", public=False), port_id="8080")
        self.assertTrue(private.name.endswith("/ports/8080"))
        self.assertEqual((private.display_name, private.public, private.public_url, private.state),
                         ("Private Port 8080", False, "", PortState.STATE_PENDING))
        self.assertNotEqual(private.internal_url, "")
        ready = self.ports.wait(name=private.name, timeout_seconds=30)
        self.assertEqual((ready.state, ready.failure_reason), (PortState.STATE_READY, ""))
        fetched = self.ports.get_port(name=private.name)
        self.assertEqual((fetched.display_name, fetched.public, fetched.state), ("Private Port 8080", False, PortState.STATE_READY))

        public = self.ports.create_port(parent=engine.name, port=Port(display_name="Public Port 9090", public=True), port_id="9090")
        self.assertEqual((public.public, public.state), (True, PortState.STATE_PENDING))
        self.assertNotEqual((public.internal_url, public.public_url), ("", ""))
        self.assertNotIn("", (public.internal_url, public.public_url))
        self.assertEqual(self.ports.wait(name=public.name, timeout_seconds=30).state, PortState.STATE_READY)

        listed, _ = self.ports.list_ports(parent=engine.name, page_size=10)
        self.assertLessEqual({private.name, public.name}, {p.name for p in listed})

        private.display_name = "Updated Name"
        updated = self.ports.update_port(port=private, update_mask=["display_name"])
        self.assertEqual((updated.display_name, updated.public), ("Updated Name", False))
        updated.public = True
        updated = self.ports.update_port(port=updated, update_mask=["public"])
        self.assertEqual((updated.display_name, updated.public), ("Updated Name", True))

        for port_id in ("80", "70000", "not-a-number"):
            with self.subTest(port_id=port_id):
                self.assertApiError(400, self.ports.create_port, parent=engine.name, port=Port(display_name="Bad", public=False),
                                    port_id=port_id)
        for port in (private, public):
            self.assertIsNone(self.ports.delete_port(name=port.name))

    # -- between sandboxes, and metrics -------------------------------------------------------------

    def test_drive_between_two_sandboxes(self) -> None:
        source, target = self.create(display_name="Drive Source"), self.create(display_name="Drive Destination")
        self.assertEqual((source.state, target.state), (S.STATE_STARTING, S.STATE_STARTING))
        self.running(source)
        self.running(target)
        content = "Hello from H2O Drive!\nLine 3 with special chars: \u00a9\u2122".encode()
        filename = f"drive_test_{short()}.txt"
        written = self.fs.write_file(name=source.name, path=f"/workspace/{filename}", content=content, create_parent_directories=True)
        self.assertEqual(written.file_info.size, len(content))
        uploaded = self.drive.upload_file(name=source.name, local_path=f"/workspace/{filename}", remote_path=f"e2e_tests/{filename}")
        self.assertEqual(uploaded.bytes_uploaded, len(content))
        downloaded = self.drive.download_file(name=target.name, remote_path=f"e2e_tests/{filename}",
                                              local_path=f"/workspace/downloaded_{filename}", create_parent_directories=True)
        self.assertEqual((downloaded.file_info.path, downloaded.file_info.size), (f"/workspace/downloaded_{filename}", len(content)))
        read = self.fs.read_file(name=target.name, path=f"/workspace/downloaded_{filename}")
        self.assertEqual((read.content, read.file_info.size), (content, len(content)))

    def test_metrics_of_a_sandbox_in_the_global_workspace(self) -> None:
        engine = self.engines.create_sandbox_engine(
            parent=oc.GLOBAL, sandbox_engine_id=f"metrics-test-{short()}",
            sandbox_engine=SandboxEngine(sandbox_engine_template=self.template.name, sandbox_engine_image=self.image.name))
        self.addCleanup(self.delete_quietly, engine.name)
        self.running(engine)
        metrics = self.metrics.read_metrics(name=engine.name)
        self.assertIsNotNone(metrics.collect_time)
        self.assertGreaterEqual(metrics.memory.current_bytes, 0)
        self.assertGreater(metrics.disk.total_bytes, 0)
        self.assertGreaterEqual(metrics.disk.available_bytes, 0)
        self.assertGreaterEqual(metrics.disk.used_bytes, 0)
        self.assertTrue(0.0 <= metrics.disk.usage_ratio <= 1.0)
        self.assertGreaterEqual(metrics.cpu.usage_ratio, 0.0)


if __name__ == "__main__":
    unittest.main()
