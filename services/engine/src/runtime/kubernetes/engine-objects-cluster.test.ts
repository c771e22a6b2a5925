// The engine objects applied to a real apiserver, scheduler and garbage collector with kwok nodes.
import { kubernetesSkipReason } from "@aiem/kit/testing";
import type { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type KubernetesFixture, startKubernetesFixture } from "../../testing/kubernetes-cluster.js";
import { daiRunSpec as spec } from "../../testing/run-spec.js";
import type { EngineRunSpec } from "../runtime.js";
import { engineObjects, type KubernetesPlacement } from "./engine-objects.js";
import { engineStatusOf } from "./pod-state.js";

const unavailable = kubernetesSkipReason("engine-objects-cluster.test.ts");

const namespace = "workloads";

describe.skipIf(unavailable !== undefined)("engine objects on a real control plane", () => {
  let k8s: KubernetesFixture;
  let core: CoreV1Api;
  const watchPod: KubernetesFixture["watchPod"] = (name, done) => k8s.watchPod(name, done);

  beforeAll(async () => {
    k8s = await startKubernetesFixture(namespace);
    core = k8s.core;
  }, 180_000);
  afterAll(() => k8s?.stop());

  /** Creates the claim, then the pod and Service owned by it, as the runtime does. */
  async function apply(engine: EngineRunSpec, placement: KubernetesPlacement = {}): Promise<void> {
    const { claim } = engineObjects(engine, namespace, placement);
    const created = await core.createNamespacedPersistentVolumeClaim({ namespace, body: claim });
    const owner = {
      kind: "PersistentVolumeClaim",
      name: created.metadata?.name ?? "",
      uid: created.metadata?.uid ?? "",
    };
    const { pod, service } = engineObjects(engine, namespace, placement, owner);
    await core.createNamespacedService({ namespace, body: service });
    await core.createNamespacedPod({ namespace, body: pod });
  }

  it("runs a DAI engine's pod on a kwok node with the official labels and template", async () => {
    const uid = "9b1d7c52-2f0e-4a43-8d7c-0a1b2c3d4e5f";
    await apply(spec(uid), {
      podTemplate: {
        metadata: { annotations: { "custom-key": "custom-value" } },
        spec: {
          containers: [{ name: "driverless-ai", env: [{ name: "CUSTOM_VAR", value: "CUSTOM_VAL" }] }],
          tolerations: [{ key: "dedicated", operator: "Equal", value: "steam", effect: "NoSchedule" }],
        },
      },
      gpuTolerations: [{ key: "gpu", operator: "Equal", value: "value1", effect: "NoSchedule" }],
    });
    const pod = await watchPod(`engine-${uid}`, (p) => engineStatusOf(p, true).phase === "ready");
    expect(k8s.cluster.nodeNames).toContain(pod?.spec?.nodeName);
    expect(pod?.metadata?.labels?.["app.kubernetes.io/instance"]).toBe(uid);
    expect(pod?.metadata?.labels?.["app.kubernetes.io/managed-by"]).toBe("engine-operator");
    expect(pod?.metadata?.annotations?.["custom-key"]).toBe("custom-value");
    // The template's toleration and the two the apiserver adds (not-ready, unreachable); the GPU
    // toleration is left out without GPUs: three, as the official test counts.
    expect(pod?.spec?.tolerations?.map((t) => t.key).sort()).toEqual([
      "dedicated",
      "node.kubernetes.io/not-ready",
      "node.kubernetes.io/unreachable",
    ]);

    const service = await core.readNamespacedService({ namespace, name: `engine-${uid}` });
    expect(service.spec?.selector).toEqual({ "app.kubernetes.io/instance": uid });
    const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: `engine-${uid}` });
    expect(claim.status?.phase).toBe("Bound");
  });

  it("stays pending with the scheduler's reason when no node has the GPU", async () => {
    const uid = "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9";
    await apply(spec(uid, { gpu: 1 }));
    const pod = await watchPod(`engine-${uid}`, (p) => engineStatusOf(p, true).pending !== undefined);
    const status = engineStatusOf(pod, true);
    expect(status.phase).toBe("starting");
    expect(status.pending?.reason).toBe("Unschedulable");
    expect(status.pending?.message).toMatch(/Insufficient nvidia\.com\/gpu/);
  });

  it("deletes the pod and Service with the claim (owner references, foreground deletion)", async () => {
    const uid = "0a9b8c7d-6e5f-4a3b-9c2d-1e0f9a8b7c6d";
    await apply(spec(uid, { kind: "notebook", version: "python", image: "example.invalid/nb" }));
    await watchPod(`engine-${uid}`, (p) => engineStatusOf(p, true).phase === "ready");
    // Foreground: the pod holds the claim (its protection finalizer) until the pod is gone, so the
    // claim's dependents must go first; in the background the two would wait on each other.
    await core.deleteNamespacedPersistentVolumeClaim({
      namespace,
      name: `engine-${uid}`,
      propagationPolicy: "Foreground",
    });
    // Foreground: the claim goes last, once the garbage collector removed everything it owns.
    await k8s.watchGone("persistentvolumeclaims", `engine-${uid}`);
    await expect(core.readNamespacedPod({ namespace, name: `engine-${uid}` })).rejects.toMatchObject({ code: 404 });
    await expect(core.readNamespacedService({ namespace, name: `engine-${uid}` })).rejects.toMatchObject({
      code: 404,
    });
  });
});
