// The Kubernetes runtime against a real control plane with kwok nodes: the lifecycle the
// reconciler drives, observed through the runtime's own watch.
import { kubeletFaultAnnotation, type KubeletFault, kubernetesSkipReason } from "@aiem/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type KubernetesFixture,
  startKubernetesFixture,
  untilStatus as until,
} from "../../testing/kubernetes-cluster.js";
import { daiRunSpec as spec } from "../../testing/run-spec.js";
import type { EngineRuntime } from "../runtime.js";
import { createKubernetesRuntime } from "./kubernetes-runtime.js";

const unavailable = kubernetesSkipReason("kubernetes-runtime.test.ts");

const namespace = "engines";

describe.skipIf(unavailable !== undefined)("the Kubernetes engine runtime", () => {
  let k8s: KubernetesFixture;
  let runtime: EngineRuntime;

  beforeAll(async () => {
    k8s = await startKubernetesFixture(namespace);
    runtime = await createKubernetesRuntime({ config: k8s.config, namespace });
  }, 180_000);
  afterAll(async () => {
    await runtime?.close();
    await k8s?.stop();
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

    // Storage grows by the claim's request (the class allows expansion).
    await runtime.resizeStorage(uid, 2n << 30n);
    const claim = await k8s.core.readNamespacedPersistentVolumeClaim({ namespace, name: `engine-${uid}` });
    expect(claim.spec?.resources?.requests?.storage).toBe(String(2 * (1 << 30)));

    await runtime.remove(uid);
    await until(runtime, uid, (s) => s.phase === "absent" && !s.dataPresent);
    await expect(k8s.core.readNamespacedService({ namespace, name: `engine-${uid}` })).rejects.toMatchObject({
      code: 404,
    });
  });

  it("starts an engine again whose pod someone else deleted", async () => {
    const uid = "2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a";
    await runtime.start(spec(uid, { kind: "notebook", version: "python", image: "example.invalid/nb" }));
    await until(runtime, uid, (s) => s.phase === "ready");
    await k8s.core.deleteNamespacedPod({ namespace, name: `engine-${uid}` });
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

  it("runs an H2O engine as one pod per node behind a headless Service, and forms it anew when a node goes", async () => {
    const uid = "4f5a6b7c-8d9e-4f0a-9b1c-2d3e4f5a6b7c";
    const h2o = spec(uid, { kind: "h2o", version: "3.46.0.7", image: "example.invalid/h2o", nodeCount: 2 });
    const names = [`engine-${uid}-0`, `engine-${uid}-1`];
    await runtime.start(h2o);
    expect(await until(runtime, uid, (s) => s.phase === "ready")).toEqual({ phase: "ready", dataPresent: false });
    const service = await k8s.core.readNamespacedService({ namespace, name: `engine-${uid}` });
    expect(service.spec?.clusterIP).toBe("None");
    const listed = await k8s.core.listNamespacedPod({ namespace, labelSelector: `app.kubernetes.io/instance=${uid}` });
    expect(listed.items.map((p) => p.metadata?.name).sort()).toEqual(names);
    for (const pod of listed.items) {
      expect(k8s.cluster.nodeNames).toContain(pod.spec?.nodeName);
      expect(pod.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Service", uid: service.metadata?.uid });
    }
    expect(await runtime.endpoint(uid)).toEqual({
      host: `engine-${uid}-0.engine-${uid}.${namespace}.svc`,
      port: 54321,
    });
    // Starting what runs already changes nothing.
    await runtime.start(h2o);
    const again = await k8s.core.listNamespacedPod({ namespace, labelSelector: `app.kubernetes.io/instance=${uid}` });
    expect(again.items.map((p) => p.metadata?.uid).sort()).toEqual(listed.items.map((p) => p.metadata?.uid).sort());

    // A node deleted by someone else: the rest of the cloud cannot take it back, so it is
    // reported stopped and, started again, every node is replaced.
    await k8s.core.deleteNamespacedPod({ namespace, name: names[1] ?? "" });
    await until(runtime, uid, (s) => s.phase === "stopped");
    await runtime.start(h2o);
    await until(runtime, uid, (s) => s.phase === "ready");
    const replaced = await k8s.core.listNamespacedPod({
      namespace,
      labelSelector: `app.kubernetes.io/instance=${uid}`,
    });
    expect(replaced.items).toHaveLength(2);
    for (const pod of replaced.items) expect(listed.items.map((p) => p.metadata?.uid)).not.toContain(pod.metadata?.uid);

    await runtime.stop(uid);
    expect(await runtime.inspect(uid)).toEqual({ phase: "stopped", dataPresent: false });
    await runtime.start(h2o);
    await until(runtime, uid, (s) => s.phase === "ready");

    await runtime.remove(uid);
    expect(await runtime.inspect(uid)).toEqual({ phase: "absent", dataPresent: false });
    await expect(k8s.core.readNamespacedService({ namespace, name: `engine-${uid}` })).rejects.toMatchObject({
      code: 404,
    });
    const left = await k8s.core.listNamespacedPod({ namespace, labelSelector: `app.kubernetes.io/instance=${uid}` });
    expect(left.items).toEqual([]);
  });

  /** A DAI engine whose pod the test cluster's kwok fails as a kubelet would. */
  const faulty = (uid: string, fault: KubeletFault) =>
    spec(uid, { kubernetes: { podTemplate: { metadata: { annotations: { [kubeletFaultAnnotation]: fault } } } } });

  it("reports an image that cannot be pulled, with the kubelet's words", async () => {
    const uid = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d";
    await runtime.start(faulty(uid, "image-pull-error"));
    const status = await until(runtime, uid, (s) => s.pending !== undefined);
    expect(status.phase).toBe("starting");
    expect(status.pending?.reason).toBe("ErrImagePull");
    expect(status.pending?.message).toContain("example.invalid/dai:1.11.0");
    await runtime.remove(uid);
  });

  it("reports the latest warning about a scheduled pod that waits (a volume that cannot be mounted)", async () => {
    const uid = "6b7c8d9e-0f1a-4b2c-9d3e-4f5a6b7c8d9e";
    await runtime.start(faulty(uid, "hold"));
    const pod = await k8s.watchPod(`engine-${uid}`, (p) => p?.spec?.nodeName !== undefined);
    // What a kubelet records when it cannot mount the claim.
    await k8s.core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name: `engine-${uid}.mount` },
        involvedObject: { kind: "Pod", namespace, name: `engine-${uid}`, uid: pod?.metadata?.uid },
        type: "Warning",
        reason: "FailedMount",
        message: 'MountVolume.SetUp failed for volume "data": mount failed',
        source: { component: "kubelet" },
      },
    });
    const status = await until(runtime, uid, (s) => s.pending !== undefined);
    expect(status).toMatchObject({
      phase: "starting",
      pending: { reason: "FailedMount", message: expect.stringContaining("mount failed") },
    });
    await runtime.remove(uid);
  });

  it("reports an engine killed for memory, and replaces its pod when started again", async () => {
    const uid = "7c8d9e0f-1a2b-4c3d-8e4f-5a6b7c8d9e0f";
    await runtime.start(faulty(uid, "oom"));
    const status = await until(runtime, uid, (s) => s.phase === "exited");
    expect(status.exit?.cause).toBe("oom");
    expect(status.dataPresent).toBe(true);
    await runtime.start(spec(uid));
    await until(runtime, uid, (s) => s.phase === "ready");
    await runtime.remove(uid);
  });

  it("fails an H2O engine when one node is killed for memory, naming the node", async () => {
    const uid = "8d9e0f1a-2b3c-4d4e-9f5a-6b7c8d9e0f1a";
    await runtime.start({ ...faulty(uid, "oom"), kind: "h2o", nodeCount: 2 });
    const status = await until(runtime, uid, (s) => s.phase === "exited");
    expect(status.exit?.cause).toBe("oom");
    expect(status.exit?.message).toMatch(new RegExp(`^engine-${uid}-[01]: `));
    await runtime.remove(uid);
  });
});
