"""Every handwritten call sends a request the API's contract accepts.

The engine, sandbox and process clients are written by hand. This test runs each of their
methods (and the engine objects' actions) against a recording connection and checks every
request against the request message in the descriptor image: known methods, known JSON field
names at every level, and a path the method's HTTP rule accepts. It holds even while the
services behind those clients answer UNIMPLEMENTED.
"""

from __future__ import annotations

import sys
import unittest
from typing import Any, Iterator

from tests import support
from ai_engine_manager._http import Connection
from ai_engine_manager._routes import ROUTES
from ai_engine_manager.connection_config import ConnectionConfig
from ai_engine_manager.dai_engine.client import DAIEngineClient
from ai_engine_manager.engine.client import EngineClient
from ai_engine_manager.exception import CustomApiException
from ai_engine_manager.h2o_engine.client import H2OEngineClient
from ai_engine_manager.notebook_engine.client import NotebookEngineClient
from ai_engine_manager.port.client import PortClient
from ai_engine_manager.process.client import ProcessClient
from ai_engine_manager.process.output_stream import OutputStream
from ai_engine_manager.sandbox_engine.client import SandboxEngineClient

IMAGE = support.REPO_ROOT / "proto" / "gen" / "image.binpb"
W = "workspaces/w"
SANDBOX = f"{W}/sandboxEngines/s"
FREE_IDS = {"generated", "new-h2o-engine", "new-notebook-engine", "agent"}


class RecordingConnection(Connection):
    """Answers every call with a minimal response of the method's response message."""

    def __init__(self, descriptors: Any) -> None:
        super().__init__(ConnectionConfig(url="http://recording.invalid"))
        self.descriptors = descriptors
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def _response(self, rpc: str, request: dict[str, Any]) -> dict[str, Any]:
        service, method = rpc.rsplit(".", 1)
        output = next(m for m in self.descriptors.services[service].methods if m.name == method).output_type
        answer: dict[str, Any] = {}
        for field in self.descriptors.messages[output].fields:
            if field.type == "message" and field.label != 3:
                name = self._name_of(rpc, request)
                answer[field.json_name] = {"name": name, "state": "STATE_RUNNING"}
            elif field.label == 3 and method.startswith("ListAssigned"):
                answer[field.json_name] = [{"name": "workspaces/global/profiles/first"}]
            elif field.json_name == "totalSize":
                answer[field.json_name] = 0
        return answer

    @staticmethod
    def _name_of(rpc: str, request: dict[str, Any]) -> str:
        """The name of the resource a request is about, as the server would answer it."""
        if "name" in request:
            return str(request["name"])
        ids = [v for k, v in request.items() if k.endswith("Id")]
        if ids:
            return f"{request['parent']}/{ROUTES[rpc].path.rsplit('/', 1)[-1]}/{ids[0]}"
        body = request.get(ROUTES[rpc].body, {})
        return str(body.get("name", ""))

    def call(self, rpc: str, request: dict[str, Any], timeout: float | None = ...) -> dict[str, Any]:  # type: ignore[override]
        self.calls.append((rpc, request))
        # Generated ids are looked up first; these are free.
        if rpc.rsplit(".", 1)[1].startswith("Get") and request.get("name", "").rsplit("/", 1)[-1] in FREE_IDS:
            raise CustomApiException(404, "not found", code=5)
        return self._response(rpc, request)

    def stream(self, rpc: str, request: dict[str, Any], timeout: float | None = ...) -> Iterator[dict[str, Any]]:  # type: ignore[override]
        self.calls.append((rpc, request))
        yield {"stream": "OUTPUT_STREAM_STDOUT", "data": "aGk=", "offset": "0"}


@unittest.skipUnless(IMAGE.exists(), "proto/gen/image.binpb is missing; run npm install")
class RequestShapeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        sys.path.insert(0, str(support.CLIENT_ROOT / "scripts"))
        from proto_descriptor import read_descriptor_set

        cls.descriptors = read_descriptor_set(IMAGE.read_bytes())

    def check(self, message_name: str, value: Any, where: str) -> None:
        message = self.descriptors.messages[message_name]
        fields = {f.json_name: f for f in message.fields}
        self.assertIsInstance(value, dict, where)
        for key, item in value.items():
            self.assertIn(key, fields, f"{where}: {message_name} has no field {key!r}")
            field = fields[key]
            if field.type == "message" and field.map_entry is None and not field.type_name.startswith("google.protobuf."):
                items = item if field.label == 3 else [item]
                for element in items:
                    self.check(field.type_name, element, f"{where}.{key}")
            elif field.map_entry is not None and field.map_entry.fields[1].type == "message":
                for element in item.values():
                    self.check(field.map_entry.fields[1].type_name, element, f"{where}.{key}[]")

    def test_handwritten_requests_match_the_contract(self) -> None:
        connection = RecordingConnection(self.descriptors)
        dai = DAIEngineClient(connection)
        h2o = H2OEngineClient(connection)
        notebooks = NotebookEngineClient(connection)
        sandboxes = SandboxEngineClient(connection)
        processes = ProcessClient(connection)

        engine = dai.create_engine("w", "e", profile=f"{W}/daiEngineProfiles/p", cpu=2, memory_bytes="1Gi",
                                   storage_bytes=10, max_idle_duration="1h", config={"a": "b"}, annotations={"x": "y"},
                                   validate_only=True)
        dai.create_engine("w", display_name="Generated")  # default profile, generated id
        dai.get_engine("e", "w")
        dai.list_engines("w", 10, "t", "name", "cpu > 1")
        dai.list_all_engines("w")
        engine.refresh()
        engine.pause(validate_only=True)
        engine.resume()
        engine.update("cpu", validate_only=True)
        engine.download_logs()
        engine.upgrade_dai_engine_version(f"{W}/daiEngineVersions/latest")
        engine.migrate_creator("users/bob")
        engine.resize_storage("2Gi")
        engine.delete(allow_missing=True, validate_only=True)

        h2o_engine = h2o.create_engine(workspace_id="w", engine_id="h", node_count=2, memory_bytes="1Gi", max_running_duration=60)
        h2o.create_engine(workspace_id="w", display_name="", profile=f"{W}/h2oEngineProfiles/p")
        h2o.get_engine("h", "w")
        h2o.list_engines("w")
        h2o.list_all_engines("w", filter="node_count > 1")
        h2o.calculate_h2o_engine_size_raw_dataset("1Gi", memory_bytes_per_node_min="1Mi", node_count_min=1, node_count_max=4)
        h2o.calculate_h2o_engine_size_compressed_dataset(10, 20, memory_bytes_per_node_min=1, memory_bytes_per_node_max="2Gi",
                                                         node_count_min=1)
        h2o_engine.refresh()
        h2o_engine.terminate()
        h2o_engine.download_logs()
        h2o_engine.delete()

        notebook = notebooks.create_notebook_engine("w", None, "n", profile=f"{W}/notebookEngineProfiles/p",
                                                          notebook_image=f"{W}/notebookEngineImages/i", shared=True,
                                                          storage_bytes="1Gi", validate_only=True)
        notebooks.create_notebook_engine("w", notebook_engine=notebook)
        notebooks.get_notebook_engine(f"{W}/notebookEngines/n")
        notebooks.list_notebook_engines("w")
        notebooks.list_all_notebook_engines("w")
        notebooks.update_notebook_engine(notebook, "display_name")
        notebooks.access_notebook_engine(f"{W}/notebookEngines/n")
        notebooks.delete_notebook_engine(f"{W}/notebookEngines/n")
        notebooks.pause_notebook_engine(f"{W}/notebookEngines/n")
        notebooks.resume_notebook_engine(f"{W}/notebookEngines/n")
        notebooks.resize_notebook_engine_storage(f"{W}/notebookEngines/n", "10Gi")
        notebooks.wait(f"{W}/notebookEngines/n")
        notebook.refresh()
        notebook.pause()
        notebook.resume()
        notebook.update()
        notebook.resize_storage(10**9)
        notebook.access()
        notebook.delete()

        sandbox = sandboxes.create_sandbox_engine("w", None, "s", sandbox_engine_image=f"{W}/sandboxEngineImages/i",
                                                  sandbox_engine_template=f"{W}/sandboxEngineTemplates/t",
                                                  annotations={"a": "b"})
        sandboxes.create_sandbox_engine("w", display_name="Agent")
        sandboxes.get_sandbox_engine(SANDBOX)
        sandboxes.list_sandbox_engines("-")
        sandboxes.list_all_sandbox_engines("w")
        sandboxes.terminate_sandbox_engine(SANDBOX)
        sandboxes.delete_sandbox_engine(SANDBOX)
        sandboxes.wait(SANDBOX, timeout_seconds=1)
        sandbox.refresh()
        sandbox.terminate()
        sandbox.delete()

        processes.create_process(SANDBOX, None, "p", True, command="/bin/sh", args=["-c", "true"], working_directory="/tmp",
                                 environment_variables={"A": "1"},
                                 secret_environment_variables={"B": "workspaces/w/secrets/s/versions/latest"})
        processes.wait_process(f"{SANDBOX}/processes/p", timeout_seconds=5)
        processes.read_output(f"{SANDBOX}/processes/p", OutputStream.OUTPUT_STREAM_STDERR)
        self.assertEqual([c.data for c in processes.stream_output(f"{SANDBOX}/processes/p", skip_replay=True)], [b"hi"])
        list(processes.stream_output(f"{SANDBOX}/processes/p", start_offset=5))
        processes.send_signal(f"{SANDBOX}/processes/p", signal=9)
        PortClient(connection).create_port(SANDBOX, None, 8080, display_name="web", public=True)
        EngineClient(connection).list_all_engines_all_workspaces(filter_expr="state = STATE_RUNNING")
        EngineClient(connection).list_engines_all_workspaces(1, "", "name", "state = STATE_RUNNING")

        rpcs = set()
        for rpc, request in connection.calls:
            service, method = rpc.rsplit(".", 1)
            self.assertIn(service, self.descriptors.services, rpc)
            found = [m for m in self.descriptors.services[service].methods if m.name == method]
            self.assertEqual(len(found), 1, rpc)
            self.check(found[0].input_type, request, rpc)
            Connection(ConnectionConfig(url="http://unused")).plan(rpc, request)
            rpcs.add(rpc)
        handwritten = {
            f"{service.full_name}.{method.name}"
            for service in self.descriptors.services.values()
            if service.name in {"DAIEngineService", "H2OEngineService", "NotebookEngineService", "SandboxEngineService",
                                "EngineService"}
            for method in service.methods
        } | {f"enginemanager.sandbox.v1.ProcessService.{m}" for m in
             ("CreateProcess", "WaitProcess", "ReadProcessOutput", "StreamProcessOutput")}
        self.assertEqual(handwritten - rpcs, set(), "methods no handwritten call reaches")

        create = next(r for rpc, r in connection.calls if rpc.endswith("CreateDAIEngine"))
        self.assertEqual(create["daiEngine"]["memoryBytes"], "1073741824")
        self.assertEqual(create["daiEngine"]["maxIdleDuration"], "3600s")
        self.assertEqual(create["daiEngine"]["daiEngineVersion"], "workspaces/global/daiEngineVersions/latest")
        resize = next(r for rpc, r in connection.calls if rpc.endswith("ResizeDAIEngineStorage"))
        self.assertEqual(resize["newStorageBytes"], "2147483648")
        raw = next(r for rpc, r in connection.calls if rpc.endswith("CalculateH2OEngineSizeRawDataset"))
        self.assertEqual(raw["limits"], {"memoryBytesPerNodeMin": "1048576", "nodeCountMin": "1", "nodeCountMax": "4"})


if __name__ == "__main__":
    unittest.main()
