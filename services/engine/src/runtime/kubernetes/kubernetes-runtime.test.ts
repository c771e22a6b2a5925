// The Kubernetes runtime against a real control plane with kwok nodes: the lifecycle the
// reconciler drives, observed through the runtime's own watch.
import { kubernetesUnavailable, startTestCluster, type TestCluster } from "@aiem/kit/testing";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { daiRunSpec as spec } from "../../testing/run-spec.js";
import type { EngineRuntime, EngineStatus } from "../runtime.js";
import { createKubernetesRuntime } from "./kubernetes-runtime.js";

const unavailable = kubernetesUnavailable();
if (unavailable) console.warn(`skipping the Kubernetes runtime's tests: ${unavailable}`);

const namespace = "engines";

/** Resolves once the engine's status satisfies `done`, checked now and on every change the runtime reports. */
function until(runtime: EngineRuntime, uid: string, done: (status: EngineStatus) => boolean): Promise<EngineStatus> {
  return new Promise((resolve, reject) => {
    let unwatch = () => {};
    const check = () =>
      runtime.inspect(uid).then((status) => {
        if (!done(status)) return;
        unwatch();
        resolve(status);
      }, reject);
    unwatch = runtime.watch((changed) => {
      if (changed === uid) void check();
    });
    void check();
  });
}

describe.skipIf(unavailable !== undefined)("the Kubernetes engine runtime", () => {
  let cluster: TestCluster;
  let runtime: EngineRuntime;
  let core: CoreV1Api;

  beforeAll(async () => {
    cluster = await startTestCluster();
    await cluster.createNamespace(namespace);
    const config = new KubeConfig();
    config.loadFromFile(cluster.kubeconfigPath);
    core = config.makeApiClient(CoreV1Api);
    runtime = await createKubernetesRuntime({ config, namespace });
  }, 180_000);
  afterAll(async () => {
    await runtime?.close();
    await cluster?.stop();
  });

  it("starts, pauses keeping the claim, resumes and removes an engine", async () => {
    const uid = "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f";
    expect(await runtime.inspect(uid)).toEqual({ phase: "absent", dataPresent: false });
    await runtime.start(spec(uid));
    await until(runtime, uid, (s) => s.phase === "ready" && s.dataPresent);
    expect(await runtime.endpoint(uid)).toEqual({ host: `engine-${uid}.${namespace}.svc`, port: 12345 });

    await runtime.stop(uid);
    await until(runtime, uid, (s) => s.phase === "stopped" && s.dataPresent);

    await runtime.start(spec(uid));
    await until(runtime, uid, (s) => s.phase === "ready");

    await runtime.remove(uid);
    await until(runtime, uid, (s) => s.phase === "absent" && !s.dataPresent);
    await expect(core.readNamespacedService({ namespace, name: `engine-${uid}` })).rejects.toMatchObject({ code: 404 });
  });

  it("starts an engine again whose pod someone else deleted", async () => {
    const uid = "2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a";
    await runtime.start(spec(uid, { kind: "notebook", version: "python", image: "example.invalid/nb" }));
    await until(runtime, uid, (s) => s.phase === "ready");
    await core.deleteNamespacedPod({ namespace, name: `engine-${uid}` });
    await until(runtime, uid, (s) => s.phase === "stopped" && s.dataPresent);
    await runtime.start(spec(uid, { kind: "notebook", version: "python", image: "example.invalid/nb" }));
    await until(runtime, uid, (s) => s.phase === "ready");
    await runtime.remove(uid);
  });

  it("reports why an engine waits when no node has its GPU", async () => {
    const uid = "3e4f5a6b-7c8d-4e9f-8a1b-2c3d4e5f6a7b";
    await runtime.start(spec(uid, { gpu: 1 }));
    const status = await until(runtime, uid, (s) => s.pending !== undefined);
    expect(status.phase).toBe("starting");
    expect(status.pending).toMatchObject({ reason: "Unschedulable" });
    expect(status.pending?.message).toMatch(/Insufficient nvidia\.com\/gpu/);
    await runtime.remove(uid);
  });
});
