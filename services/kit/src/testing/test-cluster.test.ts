import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kubernetesUnavailable, startTestCluster, type TestCluster } from "./test-cluster.js";
import { kubeletFaultAnnotation } from "./test-cluster-stages.js";

const unavailable = kubernetesUnavailable();
if (unavailable) console.warn(`skipping the test cluster's tests: ${unavailable}`);

describe.skipIf(unavailable !== undefined)("the test Kubernetes cluster", () => {
  let cluster: TestCluster;
  beforeAll(async () => {
    cluster = await startTestCluster({ nodes: [{ name: "small", allocatable: { cpu: "2" } }, { name: "big" }] });
  }, 180_000);
  afterAll(() => cluster?.stop());
  /** Applies one object in the namespace `demo`. */
  const apply = (object: object) => cluster.kubectl(["apply", "-n", "demo", "-f", "-"], JSON.stringify(object));

  it("serves the pinned Kubernetes version with the simulated nodes Ready", () => {
    expect(JSON.parse(cluster.kubectl(["version", "-o", "json"])).serverVersion.gitVersion).toBe("v1.35.4");
    const nodes = JSON.parse(cluster.kubectl(["get", "nodes", "-o", "json"])).items;
    expect(nodes.map((n: { metadata: { name: string } }) => n.metadata.name).sort()).toEqual(["big", "small"]);
    expect(nodes.find((n: { metadata: { name: string } }) => n.metadata.name === "small").status.allocatable.cpu).toBe(
      "2",
    );
  });

  it("schedules a pod on a node and kwok makes it Running", async () => {
    await cluster.createNamespace("demo");
    apply({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: { containers: [{ name: "c", image: "example.invalid/never-pulled" }] },
    });
    cluster.kubectl(["wait", "-n", "demo", "--for=jsonpath={.status.phase}=Running", "pod/p", "--timeout=60s"]);
    const pod = JSON.parse(cluster.kubectl(["get", "-n", "demo", "pod/p", "-o", "json"]));
    expect(cluster.nodeNames).toContain(pod.spec.nodeName);
    expect(pod.status.podIP.split(".").slice(0, 3)).toEqual(cluster.podCidr.split(".").slice(0, 3));
    expect(pod.status.podIP).toMatch(/^127\./);
  });

  it("binds a claim to one of its volumes in the default class", () => {
    apply({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    });
    cluster.kubectl(["wait", "-n", "demo", "--for=jsonpath={.status.phase}=Bound", "pvc/data", "--timeout=60s"]);
  });

  it("binds a ReadWriteMany claim, as the sandbox service's shared drive asks", () => {
    apply({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "shared" },
      spec: { accessModes: ["ReadWriteMany"], resources: { requests: { storage: "1Gi" } } },
    });
    cluster.kubectl(["wait", "-n", "demo", "--for=jsonpath={.status.phase}=Bound", "pvc/shared", "--timeout=60s"]);
  });

  it("fails pods as a kubelet would when their annotation asks", async () => {
    const pod = (name: string, fault: string) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, annotations: { [kubeletFaultAnnotation]: fault } },
      spec: { containers: [{ name: "c", image: `example.invalid/${name}` }] },
    });
    apply(pod("pull", "image-pull-error"));
    apply(pod("oom", "oom"));
    cluster.kubectl([
      "wait",
      "-n",
      "demo",
      "--for=jsonpath={.status.containerStatuses[0].state.waiting.reason}=ErrImagePull",
      "pod/pull",
      "--timeout=60s",
    ]);
    cluster.kubectl(["wait", "-n", "demo", "--for=jsonpath={.status.phase}=Failed", "pod/oom", "--timeout=60s"]);
    const oom = JSON.parse(cluster.kubectl(["get", "-n", "demo", "pod/oom", "-o", "json"]));
    expect(oom.status.containerStatuses[0].state.terminated).toMatchObject({ reason: "OOMKilled", exitCode: 137 });
  });

  it("stops every process and removes its directory", async () => {
    const directory = dirname(cluster.kubeconfigPath);
    await cluster.stop();
    expect(existsSync(directory)).toBe(false);
  });
});
