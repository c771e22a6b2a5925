// The sandbox runtime on Kubernetes against a real control plane with kwok nodes: the objects a
// sandbox and its ports become (as the real service's integration tests read them), the states
// read from its pod, and what happens when someone else deletes its pod. The agent is never
// reached here; kubernetes-data-plane.test.ts runs one per pod (docs/adr/0268).
import { type KubeletFault, kubeletFaultAnnotation, kubernetesSkipReason } from "@aiem/kit/testing";
import { SandboxEngine_PendingReason as Reason } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type SandboxClusterFixture,
  startSandboxCluster,
  untilSandbox as until,
} from "../testing/kubernetes-cluster.js";
import { createKubernetesSandboxRuntime, type KubernetesSandboxRuntime } from "./kubernetes-sandbox-runtime.js";
import type { SandboxPodSpec } from "./sandbox-objects.js";
import { SMALL_SANDBOX } from "../testing/fixtures.js";

const unavailable = kubernetesSkipReason("kubernetes-sandbox-runtime.test.ts");
const namespace = "sandboxes";
const group = "gateway.networking.k8s.io";

function spec(uid: string, overrides: Partial<SandboxPodSpec> = {}): SandboxPodSpec {
  return {
    uid,
    name: `workspaces/w1/sandboxEngines/s-${uid.slice(0, 4)}`,
    creator: "users/alice",
    creatorDisplayName: "Alice",
    image: "example.invalid/sandbox:1",
    ...SMALL_SANDBOX,
    gpu: 0,
    ...overrides,
  };
}

const fault = (name: KubeletFault) => ({ metadata: { annotations: { [kubeletFaultAnnotation]: name } } });

describe.skipIf(unavailable !== undefined)("the Kubernetes sandbox runtime", () => {
  let k8s: SandboxClusterFixture;
  let runtime: KubernetesSandboxRuntime;

  beforeAll(async () => {
    k8s = await startSandboxCluster(namespace);
    runtime = await createKubernetesSandboxRuntime({
      config: k8s.config,
      namespace,
      agent: { image: "example.invalid/aiem-agent:1", config: "{}" },
      gateway: { name: "public", namespace: "gateways" },
      agentToken: async (uid) => `token-of-${uid}`,
    });
  }, 180_000);
  afterAll(async () => {
    await runtime?.close();
    await k8s?.stop();
  });

  const readRoute = (name: string) =>
    k8s.custom.getNamespacedCustomObject({ group, version: "v1", namespace, plural: "httproutes", name });

  it("runs a sandbox as a pod behind a Service, with its ports' Services and routes, and deletes them all", async () => {
    const uid = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d";
    expect(runtime.status(uid)).toEqual({ state: "absent" });
    expect(runtime.routes).toBe(true);
    await runtime.start(spec(uid));
    await until(runtime, uid, (s) => s.state === "running");
    const pod = await k8s.core.readNamespacedPod({ namespace, name: `engine-${uid}` });
    expect(pod.metadata?.labels).toMatchObject({
      "app.kubernetes.io/name": "sandbox-engine",
      "cloud.h2o.ai/creator": "alice",
    });
    expect(runtime.endpoint(uid)).toEqual({ host: pod.status?.podIP, port: 50051 });
    // The agent serves TCP in the pod and answers only the service, which knows its token: it is
    // in the sandbox's Secret, mounted as a file, never in the pod's spec.
    const service = await k8s.core.readNamespacedService({ namespace, name: `engine-${uid}` });
    const secret = await k8s.core.readNamespacedSecret({ namespace, name: `engine-${uid}` });
    const config = Buffer.from(secret.data?.["agent.json"] ?? "", "base64").toString();
    expect(JSON.parse(config)).toEqual({ token: `token-of-${uid}` });
    expect(secret.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Service", uid: service.metadata?.uid });
    expect(JSON.stringify(pod.spec)).not.toContain(`token-of-${uid}`);
    expect(pod.spec?.containers[0]?.env).toContainEqual({
      name: "AIEM_AGENT_CONFIG_FILE",
      value: "/.aiem-config/agent.json",
    });
    expect(service.spec?.ports?.[0]).toMatchObject({ name: "grpc", port: 80, targetPort: 50051 });
    // The Service owns the pod, so the garbage collector takes the pod with it.
    expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Service", uid: service.metadata?.uid });

    await runtime.ensurePort(uid, 8080, undefined);
    await runtime.ensurePort(uid, 9090, { publicUrl: `https://9090-${uid}.sandboxes.example.com/` });
    expect(runtime.portReady(uid, 8080, false)).toBe(true);
    expect(runtime.portReady(uid, 9090, true)).toBe(true);
    const portService = await k8s.core.readNamespacedService({ namespace, name: `engine-${uid}-port-8080` });
    expect(portService.metadata?.labels).toMatchObject({
      "app.kubernetes.io/instance": uid,
      "app.kubernetes.io/name": "sandbox-engine",
      "engine.h2o.ai/port-id": "8080",
    });
    expect(portService.spec).toMatchObject({ type: "ClusterIP", selector: { "app.kubernetes.io/instance": uid } });
    expect(portService.spec?.ports).toEqual([
      expect.objectContaining({ port: 8080, targetPort: 8080, protocol: "TCP" }),
    ]);
    await expect(readRoute(`engine-${uid}-port-8080`)).rejects.toMatchObject({ code: 404 });
    const route = (await readRoute(`engine-${uid}-port-9090`)) as { spec: { rules: { backendRefs: unknown[] }[] } };
    expect(route.spec.rules[0]?.backendRefs).toEqual([{ name: `engine-${uid}-port-9090`, port: 9090 }]);

    // A public port made private loses its route, keeps its Service.
    await runtime.ensurePort(uid, 9090, undefined);
    await expect(readRoute(`engine-${uid}-port-9090`)).rejects.toMatchObject({ code: 404 });
    expect(runtime.portReady(uid, 9090, false)).toBe(true);
    await runtime.ensurePort(uid, 9090, { publicUrl: `https://9090-${uid}.sandboxes.example.com/` });
    await runtime.removePort(uid, 8080);
    expect(runtime.portReady(uid, 8080, false)).toBe(false);
    await expect(k8s.core.readNamespacedService({ namespace, name: `engine-${uid}-port-8080` })).rejects.toMatchObject({
      code: 404,
    });

    await runtime.remove(uid);
    expect(runtime.status(uid)).toEqual({ state: "absent" });
    for (const name of [`engine-${uid}`, `engine-${uid}-port-9090`]) {
      await expect(k8s.core.readNamespacedService({ namespace, name })).rejects.toMatchObject({ code: 404 });
    }
    await expect(k8s.core.readNamespacedPod({ namespace, name: `engine-${uid}` })).rejects.toMatchObject({ code: 404 });
    await expect(readRoute(`engine-${uid}-port-9090`)).rejects.toMatchObject({ code: 404 });
    // The Secret went with its owner (foreground deletion waits for it).
    await expect(k8s.core.readNamespacedSecret({ namespace, name: `engine-${uid}` })).rejects.toMatchObject({
      code: 404,
    });
  }, 120_000);

  it("says why a sandbox waits when no node has the GPU its template asks for", async () => {
    const uid = "6b7c8d9e-0f1a-4b2c-9d3e-4f5a6b7c8d9e";
    await runtime.start(spec(uid, { gpu: 1, gpuResource: "amd.com/gpu" }));
    const status = await until(
      runtime,
      uid,
      (s) => s.pending?.reason === Reason.SCHEDULING && s.pending.message !== "waiting for a node",
    );
    expect(status.state).toBe("starting");
    expect(status.pending?.message).toMatch(/^Unschedulable: .*Insufficient amd\.com\/gpu/);
    await runtime.remove(uid);
  });

  it("says an image cannot be pulled, and why a pod that ended failed", async () => {
    const pulling = "7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f";
    await runtime.start(spec(pulling, { podTemplate: fault("image-pull-error") }));
    const waiting = await until(runtime, pulling, (s) => s.pending?.reason === Reason.PULLING_IMAGE);
    expect(waiting.pending?.message).toMatch(/^ErrImagePull: /);
    const killed = "8d9e0f1a-2b3c-4d4e-9f5a-6b7c8d9e0f1a";
    await runtime.start(spec(killed, { podTemplate: fault("oom") }));
    const failed = await until(runtime, killed, (s) => s.state === "failed");
    expect(failed.failure).toMatch(/killed for using more memory than its limit/);
    await Promise.all([runtime.remove(pulling), runtime.remove(killed)]);
  }, 60_000);

  it("finds the pod another replica made while its own start was under way", async () => {
    const uid = "1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e";
    // The other replica's start reads the agent's token after its first look for the pod: by the
    // time it reads it here, this replica made the pod and the other's informer has seen it.
    let other: KubernetesSandboxRuntime | undefined;
    const seenMeanwhile = async (id: string) => {
      await runtime.start(spec(id));
      await until(other!, id, (s) => s.state !== "absent");
      return `token-of-${id}`;
    };
    other = await createKubernetesSandboxRuntime({
      config: k8s.config,
      namespace,
      agent: { image: "example.invalid/aiem-agent:1", config: "{}" },
      agentToken: seenMeanwhile,
    });
    try {
      // It neither waits for that pod to go nor makes another: the pod is the first replica's.
      expect(await other.start(spec(uid))).toBe(false);
      await until(other, uid, (s) => s.state === "running");
      await runtime.remove(uid);
    } finally {
      await other.close();
    }
  }, 60_000);

  it("tells a sandbox whose pod someone else deleted, and runs it again", async () => {
    const uid = "9e0f1a2b-3c4d-4e5f-8a6b-7c8d9e0f1a2b";
    await runtime.start(spec(uid));
    await until(runtime, uid, (s) => s.state === "running");
    await runtime.ensurePort(uid, 8080, undefined);
    await k8s.core.deleteNamespacedPod({ namespace, name: `engine-${uid}` });
    await until(runtime, uid, (s) => s.state === "lost");
    // Its Service and its ports' stay: only the pod is made again.
    expect(runtime.portReady(uid, 8080, false)).toBe(true);
    await runtime.start(spec(uid));
    await until(runtime, uid, (s) => s.state === "running");
    await runtime.remove(uid);
  }, 60_000);
});
