// The sandbox service with AIEM_RUNTIME=kubernetes against a real control plane with kwok nodes:
// through the REST API, a sandbox becomes a pod and RUNNING, its ports Services (and routes), a
// pod deleted by someone else is made again, and deleting the sandbox removes every object. No
// call reaches an agent here; kubernetes-data-plane.test.ts runs one per pod (docs/adr/0268).
import { kubernetesSkipReason } from "@aiem/kit/testing";
import { waitFor } from "@aiem/kit/events/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SandboxClusterFixture, startSandboxCluster } from "../testing/kubernetes-cluster.js";
import { ok, type SandboxHarness, startSandboxHarness } from "../testing/index.js";

const unavailable = kubernetesSkipReason("kubernetes-service.test.ts");
const namespace = "sandboxes";
const group = "gateway.networking.k8s.io";

describe.skipIf(unavailable !== undefined)("the sandbox service on Kubernetes", () => {
  let k8s: SandboxClusterFixture;
  let h: SandboxHarness;

  beforeAll(async () => {
    k8s = await startSandboxCluster(namespace);
    h = await startSandboxHarness({
      settings: {
        runtime: "kubernetes",
        kubernetes: {
          namespace,
          agentImage: "example.invalid/aiem-agent:1",
          kubeconfigPath: k8s.cluster.kubeconfigPath,
        },
      },
    });
  }, 240_000);
  afterAll(async () => {
    await h?.stop();
    await k8s?.stop();
  });

  const notFound = { code: 404 };
  const readRoute = (name: string) =>
    k8s.custom.getNamespacedCustomObject({ group, version: "v1", namespace, plural: "httproutes", name });
  const portState = async (name: string) => ok(await h.rest("GET", `/v1/${name}`)).port.state as string;

  it("runs a sandbox as a pod, its ports as Services and routes, and deletes them with it", async () => {
    const sandbox = await h.createSandbox("k8s-one");
    const pod = await k8s.core.readNamespacedPod({ namespace, name: `engine-${sandbox.uid}` });
    expect(pod.metadata?.annotations?.["cloud.h2o.ai/resource"]).toBe(`//engine-manager/${sandbox.name}`);
    expect(pod.spec?.containers[0]?.image).toBe("python:3.12-slim");
    // This installation's H2O AI Cloud variables (the edge serves the discovery) and the template's.
    const env = Object.fromEntries((pod.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      H2O_CLOUD_ENVIRONMENT: h.t.url,
      H2O_CLOUD_DISCOVERY: `${h.t.url}/.ai.h2o.cloud.discovery`,
      H2O_CLOUD_TOKEN_ENDPOINT_URL: `${h.t.url}/oidc/token`,
      FROM_TEMPLATE: "template",
    });

    const created = ok(
      await h.rest("POST", `/v1/${sandbox.name}/ports?portId=9090`, { body: { displayName: "web", public: true } }),
    ).port;
    expect(created.state).toBe("STATE_PENDING");
    await waitFor(async () => (await portState(created.name)) === "STATE_READY", 30_000, "the port to be ready");
    const service = await k8s.core.readNamespacedService({ namespace, name: `engine-${sandbox.uid}-port-9090` });
    expect(service.metadata?.labels?.["engine.h2o.ai/port-id"]).toBe("9090");
    await readRoute(`engine-${sandbox.uid}-port-9090`);

    // Private again: the route goes, the Service stays.
    ok(await h.rest("PATCH", `/v1/${created.name}?updateMask=public`, { body: { name: created.name, public: false } }));
    await waitFor(
      () =>
        readRoute(`engine-${sandbox.uid}-port-9090`).then(
          () => false,
          (e) => e.code === 404,
        ),
      30_000,
      "the route to go",
    );

    ok(await h.rest("DELETE", `/v1/${sandbox.name}`));
    await waitFor(async () => (await h.rest("GET", `/v1/${sandbox.name}`, { who: "admin" })).status === 404, 60_000);
    await expect(k8s.core.readNamespacedPod({ namespace, name: `engine-${sandbox.uid}` })).rejects.toMatchObject(
      notFound,
    );
    for (const name of [`engine-${sandbox.uid}`, `engine-${sandbox.uid}-port-9090`]) {
      await expect(k8s.core.readNamespacedService({ namespace, name })).rejects.toMatchObject(notFound);
    }
  }, 120_000);

  it("makes again the pod of a running sandbox that someone else deleted", async () => {
    const sandbox = await h.createSandbox("k8s-two");
    const name = `engine-${sandbox.uid}`;
    const first = await k8s.core.readNamespacedPod({ namespace, name });
    await k8s.core.deleteNamespacedPod({ namespace, name });
    await waitFor(
      () =>
        k8s.core.readNamespacedPod({ namespace, name }).then(
          (pod) => pod.metadata?.uid !== first.metadata?.uid && pod.status?.phase === "Running",
          () => false,
        ),
      60_000,
      "a new pod",
    );
    expect((await h.waitState(sandbox.name, "STATE_RUNNING")).state).toBe("STATE_RUNNING");
    ok(await h.rest("DELETE", `/v1/${sandbox.name}`));
  }, 120_000);

  it("says why a sandbox waits while no node fits it", async () => {
    const { template } = await h.catalogueFixture("k8s-gpu", { gpu: 1, gpuResource: "amd.com/gpu" });
    const created = ok(
      await h.rest("POST", `/v1/workspaces/team-a/sandboxEngines?sandboxEngineId=k8s-gpu`, {
        body: { sandboxEngineImage: h.image, sandboxEngineTemplate: template },
      }),
    ).sandboxEngine;
    let seen: { state: string; pendingReason: string; pendingMessage: string } | undefined;
    await waitFor(
      async () => {
        seen = ok(await h.rest("GET", `/v1/${created.name}`)).sandboxEngine;
        return seen?.pendingReason === "PENDING_REASON_SCHEDULING" && seen.pendingMessage.startsWith("Unschedulable");
      },
      30_000,
      "the scheduler's reason",
    );
    expect(seen?.state).toBe("STATE_STARTING");
    expect(seen?.pendingMessage).toMatch(/Insufficient amd\.com\/gpu/);
    // Its pod deleted while it waits: a new one is made, and it waits on.
    const name = `engine-${created.uid}`;
    const first = await k8s.core.readNamespacedPod({ namespace, name });
    await k8s.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 });
    await waitFor(
      () =>
        k8s.core.readNamespacedPod({ namespace, name }).then(
          (pod) => pod.metadata?.uid !== first.metadata?.uid && !pod.metadata?.deletionTimestamp,
          () => false,
        ),
      60_000,
      "a new pod",
    );
    expect(ok(await h.rest("GET", `/v1/${created.name}`)).sandboxEngine.state).toBe("STATE_STARTING");
    // Deleting it interrupts its wait for a node.
    ok(await h.rest("DELETE", `/v1/${created.name}`));
    await waitFor(async () => (await h.rest("GET", `/v1/${created.name}`, { who: "admin" })).status === 404, 60_000);
  }, 120_000);

  // Last: it stops the service.
  it("stops without waiting for a pod that no node fits, which runs on for the other replicas", async () => {
    const { template } = await h.catalogueFixture("k8s-stop", { gpu: 1, gpuResource: "amd.com/gpu" });
    const created = ok(
      await h.rest("POST", `/v1/workspaces/team-a/sandboxEngines?sandboxEngineId=k8s-stop`, {
        body: { sandboxEngineImage: h.image, sandboxEngineTemplate: template },
      }),
    ).sandboxEngine;
    await waitFor(
      async () =>
        ok(await h.rest("GET", `/v1/${created.name}`)).sandboxEngine.pendingReason === "PENDING_REASON_SCHEDULING",
      30_000,
      "the sandbox to wait for a node",
    );
    const harness = h;
    h = undefined as unknown as SandboxHarness;
    const stopping = Date.now();
    await harness.stop();
    expect(Date.now() - stopping).toBeLessThan(10_000);
    // The pod stays: the sandbox is the cluster's and any replica's, not this process's.
    const pod = await k8s.core.readNamespacedPod({ namespace, name: `engine-${created.uid}` });
    expect(pod.metadata?.deletionTimestamp).toBeUndefined();
  }, 120_000);
});
