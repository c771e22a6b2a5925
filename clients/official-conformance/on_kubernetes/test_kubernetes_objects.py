"""The product on Kubernetes, driven by the official client, checked in the cluster.

A real control plane with kwok nodes (``scripts/test-cluster/main.ts``: etcd, kube-apiserver,
controller-manager, scheduler, kwok; no kubelet) and the product as ``npm start`` runs it (the
edge with every service) with ``AIEM_RUNTIME=kubernetes``. The official ``h2o-engine-manager``
client creates a DAI engine, a 2-node H2O engine and a sandbox with a public port and waits for
them; ``kubectl`` then reads the objects the official integration tests read, by the names and
labels they use (docs/adr/0265-official-client-on-kubernetes.md lists each assertion matched and
each departed from). Deleting through the client removes every object.

Skipped when the control plane is not built (``npm run setup -- --kubernetes``), unless
``AIEM_REQUIRE_KUBERNETES=1`` (CI), where that is an error.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from types import ModuleType
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[3]
NAMESPACE = "workloads"
GATEWAY = "gateways/public"
WORKSPACE = "default"
GLOBAL = "workspaces/global"
MEMBER = "k8s-alice"
WAIT = 120
# What the official tests expect on every object the product makes.
OPERATOR = "engine-operator"


def _load_support() -> ModuleType:
    """The product's Python test server (``clients/python/tests/support.py``), by path."""
    name = "aiem_python_test_support"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "clients" / "python" / "tests" / "support.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


support = _load_support()

import h2o_engine_manager  # noqa: E402
from h2o_engine_manager.clients.dai_engine.dai_engine_state import DAIEngineState  # noqa: E402
from h2o_engine_manager.clients.exception import CustomApiException  # noqa: E402
from h2o_engine_manager.clients.h2o_engine.state import H2OEngineState  # noqa: E402
from h2o_engine_manager.clients.sandbox.port.port import Port  # noqa: E402
from h2o_engine_manager.clients.sandbox.port.state import PortState  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine.engine import SandboxEngine  # noqa: E402
from h2o_engine_manager.clients.sandbox_engine.state import SandboxEngineState  # noqa: E402


class TestCluster:
    """The launcher's cluster: started on construction, stopped by closing its stdin."""

    def __init__(self) -> None:
        launcher = REPO_ROOT / "scripts" / "test-cluster" / "main.ts"
        self.process = subprocess.Popen(
            ["node", "--import", "tsx", str(launcher), "--namespace", NAMESPACE],
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait(timeout=30)
            raise RuntimeError(f"the test cluster did not start (exit {code}); its error is above")
        self.info: dict[str, Any] = json.loads(line)

    @property
    def unavailable(self) -> str | None:
        return self.info.get("unavailable")

    def kubectl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [self.info["kubectl"], f"--kubeconfig={self.info['kubeconfig']}", "-n", NAMESPACE, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=WAIT + 30, check=check)

    def get(self, kind: str, name: str) -> dict[str, Any]:
        return json.loads(self.kubectl("get", kind, name, "-o", "json").stdout)

    def wait(self, condition: str, *objects: str) -> None:
        """``kubectl wait`` (a watch) for each object; fails the test with kubectl's words."""
        for obj in objects:
            result = self.kubectl("wait", f"--for={condition}", obj, f"--timeout={WAIT}s", check=False)
            if result.returncode != 0:
                raise AssertionError(f"{obj} never met {condition}: {result.stderr.strip()}")

    def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def _isolated_client_config() -> None:
    """Nothing of this machine's H2O CLI set-up may steer the official client."""
    config_dir = tempfile.mkdtemp(prefix="aiem-official-k8s-")
    config = Path(config_dir) / "h2o-cli-config.toml"
    config.write_text("")
    for key in [k for k in os.environ if k.startswith("H2O_CLOUD_")]:
        del os.environ[key]
    os.environ.update({"H2OCONFIG": str(config), "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})


class KubernetesObjectsTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls) -> None:
        cls.cluster = TestCluster()
        if cls.cluster.unavailable:
            # Each test skips (setUp), so that the run counts them as skipped.
            return
        try:
            cls.server = support.TestServer()
            cls.server.env.update({
                "AIEM_RUNTIME": "kubernetes",
                "KUBECONFIG": cls.cluster.info["kubeconfig"],
                "AIEM_KUBERNETES_NAMESPACE": NAMESPACE,
                # kwok runs no containers: the agent image is never pulled.
                "AIEM_SANDBOX_AGENT_IMAGE": "example.invalid/aiem-agent:1",
                "AIEM_KUBERNETES_GATEWAY": GATEWAY,
            })
            cls.server.start(timeout=180)
            _isolated_client_config()
            cls.clients = h2o_engine_manager.login_custom(
                endpoint=cls.server.url,
                refresh_token=cls.server.token(MEMBER, refresh=True),
                issuer_url=cls.server.url + "/oidc",
                client_id="platform",
            )
        except BaseException:
            cls.tearDownClass()
            raise

    def setUp(self) -> None:
        if self.cluster.unavailable:
            self.skipTest(self.cluster.unavailable)

    @classmethod
    def tearDownClass(cls) -> None:
        server = getattr(cls, "server", None)
        if server is not None:
            server.stop()
        cls.cluster.stop()

    def assertLabels(self, obj: dict[str, Any], uid: str, app: str) -> None:
        labels = obj["metadata"]["labels"]
        self.assertEqual(labels["app.kubernetes.io/created-by"], OPERATOR)
        self.assertEqual(labels["app.kubernetes.io/managed-by"], OPERATOR)
        self.assertEqual(labels["app.kubernetes.io/instance"], uid)
        self.assertEqual(labels["app.kubernetes.io/name"], app)

    def assertRunningOnNode(self, pod: dict[str, Any]) -> None:
        self.assertEqual(pod["status"]["phase"], "Running")
        self.assertIn(pod["spec"]["nodeName"], self.cluster.info["nodes"])

    def delete_sandbox_quietly(self, name: str) -> None:
        """Cleanup after a failure; the test deletes the sandbox itself when it gets that far."""
        try:
            self.clients.sandbox_engine_client.delete_sandbox_engine(name=name)
        except CustomApiException as e:
            if e.status != 404:
                raise

    def test_dai_engine(self) -> None:
        client = self.clients.dai_engine_client
        engine = client.create_engine(
            workspace_id=WORKSPACE, engine_id=support.unique("k8s-dai"), display_name="DAI on Kubernetes",
            profile=f"{GLOBAL}/daiEngineProfiles/default", dai_engine_version=f"{GLOBAL}/daiEngineVersions/1.11.0",
        )
        self.addCleanup(engine.delete, allow_missing=True)
        engine.wait(timeout_seconds=WAIT)
        self.assertEqual(engine.state, DAIEngineState.STATE_RUNNING)

        name = f"engine-{engine.uid}"
        pod = self.cluster.get("pod", name)
        self.assertEqual(pod["metadata"]["namespace"], NAMESPACE)
        self.assertLabels(pod, engine.uid, "dai-engine")
        self.assertEqual(pod["metadata"]["annotations"]["engine.h2o.ai/name"], engine.name)
        self.assertRunningOnNode(pod)
        self.assertEqual(pod["spec"]["containers"][0]["image"], "h2oai/dai:1.11.0")
        # No GPU: the apiserver's two default tolerations only.
        self.assertEqual(sorted(t["key"] for t in pod["spec"]["tolerations"]),
                         ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"])
        claim = self.cluster.get("pvc", name)
        self.assertLabels(claim, engine.uid, "dai-engine")
        self.assertEqual(claim["status"]["phase"], "Bound")
        service = self.cluster.get("service", name)
        self.assertLabels(service, engine.uid, "dai-engine")
        self.assertEqual(service["spec"]["selector"], {"app.kubernetes.io/instance": engine.uid})

        engine.delete()
        engine.wait(timeout_seconds=WAIT)
        self.cluster.wait("delete", f"pod/{name}", f"pvc/{name}", f"service/{name}")

    def test_h2o_engine_of_two_nodes(self) -> None:
        client = self.clients.h2o_engine_client
        engine = client.create_engine(
            workspace_id=WORKSPACE, engine_id=support.unique("k8s-h2o"), node_count=2, cpu=1, memory_bytes="4Gi",
            display_name="H2O on Kubernetes", profile=f"{GLOBAL}/h2oEngineProfiles/default",
            h2o_engine_version=f"{GLOBAL}/h2oEngineVersions/3.46.0",
        )
        self.addCleanup(engine.delete, allow_missing=True)
        engine.wait(timeout_seconds=WAIT)
        self.assertEqual(engine.state, H2OEngineState.STATE_RUNNING)

        name = f"engine-{engine.uid}"
        # The official tests find the nodes by name: one pod per node, `engine-<uid>-<i>`.
        pods = self.cluster.get("pods", f"--selector=app.kubernetes.io/instance={engine.uid}")["items"]
        self.assertEqual(sorted(p["metadata"]["name"] for p in pods), [f"{name}-0", f"{name}-1"])
        for pod in pods:
            self.assertLabels(pod, engine.uid, "h2o-engine")
            self.assertRunningOnNode(pod)
            self.assertEqual(pod["spec"]["subdomain"], name)
            self.assertEqual(pod["spec"]["containers"][0]["image"], "h2oai/h2o-open-source-k8s:3.46.0")
        service = self.cluster.get("service", name)
        self.assertLabels(service, engine.uid, "h2o-engine")
        self.assertEqual(service["spec"]["clusterIP"], "None")
        self.assertEqual(service["spec"]["selector"], {"app.kubernetes.io/instance": engine.uid})

        engine.delete()
        engine.wait(timeout_seconds=WAIT)
        self.cluster.wait("delete", f"pod/{name}-0", f"pod/{name}-1", f"service/{name}")

    def test_sandbox_with_a_public_port(self) -> None:
        engines = self.clients.sandbox_engine_client
        ports = self.clients.sandbox_clients.port_client
        engine_id = support.unique("k8s-sb")
        created = engines.create_sandbox_engine(
            parent=f"workspaces/{WORKSPACE}",
            sandbox_engine=SandboxEngine(sandbox_engine_image=f"{GLOBAL}/sandboxEngineImages/default",
                                         sandbox_engine_template=f"{GLOBAL}/sandboxEngineTemplates/default",
                                         display_name="Sandbox on Kubernetes"),
            sandbox_engine_id=engine_id,
        )
        self.addCleanup(self.delete_sandbox_quietly, created.name)
        engine = engines.wait(name=created.name, timeout_seconds=WAIT)
        self.assertEqual(engine.state, SandboxEngineState.STATE_RUNNING)
        uid = engine.uid

        pod = self.cluster.get("pod", f"engine-{uid}")
        self.assertLabels(pod, uid, "sandbox-engine")
        self.assertIn("cloud.h2o.ai/creator", pod["metadata"]["labels"])
        self.assertIn("cloud.h2o.ai/owner", pod["metadata"]["labels"])
        annotations = pod["metadata"]["annotations"]
        self.assertEqual(annotations["cloud.h2o.ai/resource"], f"//engine-manager/{engine.name}")
        self.assertEqual(annotations["cloud.h2o.ai/workspace-id"], WORKSPACE)
        self.assertIn("cloud.h2o.ai/creator", annotations)
        self.assertIn("cloud.h2o.ai/creator-display-name", annotations)
        self.assertRunningOnNode(pod)
        spec = pod["spec"]
        self.assertEqual(spec["restartPolicy"], "Never")
        self.assertEqual([c["name"] for c in spec["containers"]], ["sandbox"])
        container = spec["containers"][0]
        self.assertEqual(container["image"], "docker.io/library/python:3.12-slim")
        self.assertEqual(container["ports"], [{"name": "grpc", "containerPort": 50051, "protocol": "TCP"}])
        self.assertNotIn("nvidia.com/gpu", container["resources"]["limits"])
        self.assertIs(spec["securityContext"]["runAsNonRoot"], True)
        self.assertEqual(spec["securityContext"]["fsGroup"], 1000)
        self.assertEqual(spec["securityContext"]["seccompProfile"]["type"], "RuntimeDefault")
        service = self.cluster.get("service", f"engine-{uid}")
        self.assertLabels(service, uid, "sandbox-engine")
        self.assertEqual(service["spec"]["type"], "ClusterIP")
        self.assertEqual([(p["name"], p["port"], p["protocol"]) for p in service["spec"]["ports"]],
                         [("grpc", 80, "TCP")])
        self.assertEqual(service["spec"]["selector"]["app.kubernetes.io/instance"], uid)

        port = ports.create_port(parent=engine.name, port=Port(display_name="Public 9090", public=True), port_id="9090")
        self.assertEqual(port.state, PortState.STATE_PENDING)
        self.assertNotEqual(port.public_url, "")
        port = ports.wait(name=port.name, timeout_seconds=30)
        self.assertEqual(port.state, PortState.STATE_READY)
        self.assertEqual(port.failure_reason, "")

        port_name = f"engine-{uid}-port-9090"
        port_service = self.cluster.get("service", port_name)
        self.assertLabels(port_service, uid, "sandbox-engine")
        self.assertEqual(port_service["metadata"]["labels"]["engine.h2o.ai/port-id"], "9090")
        self.assertEqual(port_service["spec"]["type"], "ClusterIP")
        self.assertEqual([(p["port"], p["targetPort"], p["protocol"]) for p in port_service["spec"]["ports"]],
                         [(9090, 9090, "TCP")])
        self.assertEqual(port_service["spec"]["selector"]["app.kubernetes.io/instance"], uid)
        # The endpoints controller puts the Ready pod's IP behind the port's Service.
        self.cluster.wait("create", f"endpoints/{port_name}")
        self.cluster.wait("jsonpath={.subsets[0].addresses[0].ip}", f"endpoints/{port_name}")
        endpoints = self.cluster.get("endpoints", port_name)
        self.assertIn(pod["status"]["podIP"], [a["ip"] for a in endpoints["subsets"][0]["addresses"]])
        self.assertEqual(endpoints["subsets"][0]["ports"][0]["port"], 9090)

        route = self.cluster.get("httproutes.gateway.networking.k8s.io", port_name)
        labels = route["metadata"]["labels"]
        self.assertEqual(labels["app.kubernetes.io/created-by"], OPERATOR)
        self.assertEqual(labels["app.kubernetes.io/instance"], uid)
        self.assertEqual(labels["engine.h2o.ai/port-id"], "9090")
        rule = route["spec"]["rules"][0]
        self.assertEqual((rule["backendRefs"][0]["name"], rule["backendRefs"][0]["port"]), (port_name, 9090))
        rewrite = next(f for f in rule["filters"] if f["type"] == "URLRewrite")
        self.assertEqual(rewrite["urlRewrite"]["path"], {"type": "ReplacePrefixMatch", "replacePrefixMatch": ""})
        namespace, gateway = GATEWAY.split("/")
        self.assertEqual(route["spec"]["parentRefs"][0]["name"], gateway)
        self.assertEqual(route["spec"]["parentRefs"][0].get("namespace"), namespace)

        ports.delete_port(name=port.name)
        self.cluster.wait("delete", f"httproutes.gateway.networking.k8s.io/{port_name}", f"service/{port_name}")

        engines.delete_sandbox_engine(name=engine.name)
        self.assertIsNone(engines.wait(name=engine.name, timeout_seconds=WAIT))
        self.cluster.wait("delete", f"pod/engine-{uid}", f"service/engine-{uid}")


if __name__ == "__main__":
    unittest.main()
