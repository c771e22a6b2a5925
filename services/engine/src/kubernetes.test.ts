// The engine service on the Kubernetes runtime against a real control plane with kwok nodes:
// engines made through the API become pods, claims and Services in the cluster, and pause,
// resume and delete act on them. Skipped, saying why, where the binaries are not built.
import { kubeletFaultAnnotation, kubernetesSkipReason } from "@aiem/kit/testing";
import type { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubernetesRuntime } from "./runtime/kubernetes/kubernetes-runtime.js";
import { type KubernetesFixture, startKubernetesFixture } from "./testing/kubernetes-cluster.js";
import { catalogueFixture, startEngineTestHost, type EngineTestHost } from "./testing/index.js";

const unavailable = kubernetesSkipReason("kubernetes.test.ts");

const namespace = "workloads";
const notebook = {
  profile: "workspaces/global/notebookEngineProfiles/nb",
  notebookImage: "workspaces/global/notebookEngineImages/jupyter",
};

describe.skipIf(unavailable !== undefined)("engines on the Kubernetes runtime", () => {
  let k8s: KubernetesFixture;
  let core: CoreV1Api;
  let h: EngineTestHost;

  beforeAll(async () => {
    k8s = await startKubernetesFixture(namespace);
    core = k8s.core;
    h = await startEngineTestHost({
      runtime: await createKubernetesRuntime({ config: k8s.config, namespace }),
      // Engines that cannot start fail soon, with what they waited for.
      settings: { startTimeoutMs: 15_000 },
    });
    await catalogueFixture(h, "notebookEngineProfiles", "nb", { enabled: true });
    await catalogueFixture(h, "notebookEngineImages", "jupyter", {
      image: "example.invalid/jupyter:1",
      enabled: true,
    });
    await catalogueFixture(h, "h2oEngineProfiles", "h2o", {
      enabled: true,
      nodeCountConstraint: { min: "1", max: "3", default: "1" },
      gpuConstraint: { min: "0", max: "1", default: "0" },
      memoryBytesConstraint: { min: "1", max: String(8n << 30n), default: String(1n << 30n) },
    });
    // Profiles whose pods the test cluster's kwok fails as a kubelet would.
    const fault = (kind: string) => `metadata:\n  annotations:\n    ${kubeletFaultAnnotation}: ${kind}\n`;
    await catalogueFixture(h, "h2oEngineProfiles", "h2o-pull", {
      enabled: true,
      yamlPodTemplateSpec: fault("image-pull-error"),
    });
    await catalogueFixture(h, "notebookEngineProfiles", "nb-oom", { enabled: true, yamlPodTemplateSpec: fault("oom") });
    await catalogueFixture(h, "h2oEngineVersions", "3.46.0", { image: "example.invalid/h2o:3.46.0" });
  }, 180_000);
  afterAll(async () => {
    await h?.stop();
    await k8s?.stop();
  });

  it("runs a notebook engine as a pod, pauses it keeping its claim, resumes and deletes it", {
    timeout: 120_000,
  }, async () => {
    const name = await h.create("notebookEngines", "k8s", notebook);
    const engine = await h.waitForState(name, "STATE_RUNNING", 60_000);
    const objectName = `engine-${engine.uid}`;
    const pod = await core.readNamespacedPod({ namespace, name: objectName });
    expect(k8s.cluster.nodeNames).toContain(pod.spec?.nodeName);
    expect(pod.metadata?.labels).toMatchObject({
      "app.kubernetes.io/name": "notebook-engine",
      "app.kubernetes.io/instance": engine.uid,
      "app.kubernetes.io/managed-by": "engine-operator",
    });
    expect(pod.spec?.containers[0]?.image).toBe("example.invalid/jupyter:1");
    expect(pod.metadata?.annotations?.["engine.h2o.ai/name"]).toBe(name);

    // Storage grows by the claim's request.
    const bigger = String(BigInt(engine.storageBytes) * 2n);
    const resized = await h.rest("POST", `/v1/${name}:resizeStorage`, {
      who: "alice",
      body: { newStorageBytes: bigger },
    });
    expect(resized.status, resized.text).toBe(200);
    await expect
      .poll(async () => (await h.rest("GET", `/v1/${name}`, { who: "alice" })).body.notebookEngine?.storageResizing, {
        timeout: 30_000,
      })
      .toBe(false);
    const claim = await core.readNamespacedPersistentVolumeClaim({ namespace, name: objectName });
    expect(claim.spec?.resources?.requests?.storage).toBe(bigger);

    expect((await h.rest("POST", `/v1/${name}:pause`, { who: "alice" })).status).toBe(200);
    await h.waitForState(name, "STATE_PAUSED", 60_000);
    await expect(core.readNamespacedPod({ namespace, name: objectName })).rejects.toMatchObject({ code: 404 });
    await core.readNamespacedPersistentVolumeClaim({ namespace, name: objectName });

    expect((await h.rest("POST", `/v1/${name}:resume`, { who: "alice" })).status).toBe(200);
    await h.waitForState(name, "STATE_RUNNING", 60_000);
    await core.readNamespacedPod({ namespace, name: objectName });

    expect((await h.rest("DELETE", `/v1/${name}`, { who: "alice" })).status).toBe(200);
    await h.waitForGone(name, 60_000);
    await expect(core.readNamespacedPersistentVolumeClaim({ namespace, name: objectName })).rejects.toMatchObject({
      code: 404,
    });
  });

  it("starts a running notebook engine again whose pod someone else deleted", { timeout: 120_000 }, async () => {
    const name = await h.create("notebookEngines", "lost", notebook);
    const engine = await h.waitForState(name, "STATE_RUNNING", 60_000);
    const objectName = `engine-${engine.uid}`;
    const first = await core.readNamespacedPod({ namespace, name: objectName });
    await core.deleteNamespacedPod({ namespace, name: objectName });
    const next = await k8s.watchPod(
      objectName,
      (p) => p !== undefined && p.metadata?.uid !== first.metadata?.uid && p.status?.phase === "Running",
    );
    expect(next?.metadata?.uid).not.toBe(first.metadata?.uid);
    const again = await h.waitForState(name, "STATE_RUNNING", 60_000);
    expect(again.failureMessage ?? "").toBe("");

    expect((await h.rest("DELETE", `/v1/${name}`, { who: "alice" })).status).toBe(200);
    await h.waitForGone(name, 60_000);
  });

  it("runs a 2-node H2O engine as two pods of one cloud; terminate removes them, delete the rest", {
    timeout: 120_000,
  }, async () => {
    const name = await h.create("h2oEngines", "cloud", {
      profile: "workspaces/global/h2oEngineProfiles/h2o",
      h2oEngineVersion: "workspaces/global/h2oEngineVersions/3.46.0",
      nodeCount: 2,
    });
    const engine = await h.waitForState(name, "STATE_RUNNING", 60_000);
    const selector = `app.kubernetes.io/instance=${engine.uid}`;
    const pods = (await core.listNamespacedPod({ namespace, labelSelector: selector })).items;
    expect(pods.map((p) => p.metadata?.name).sort()).toEqual([`engine-${engine.uid}-0`, `engine-${engine.uid}-1`]);
    for (const pod of pods) {
      expect(pod.metadata?.labels?.["app.kubernetes.io/name"]).toBe("h2o-engine");
      expect(pod.spec?.containers[0]?.image).toBe("example.invalid/h2o:3.46.0");
      expect(pod.metadata?.annotations?.["engine.h2o.ai/name"]).toBe(name);
    }
    const service = await core.readNamespacedService({ namespace, name: `engine-${engine.uid}` });
    expect(service.spec?.clusterIP).toBe("None");

    expect((await h.rest("POST", `/v1/${name}:terminate`, { who: "alice" })).status).toBe(200);
    await h.waitForState(name, "STATE_TERMINATED", 60_000);
    expect((await core.listNamespacedPod({ namespace, labelSelector: selector })).items).toEqual([]);

    expect((await h.rest("DELETE", `/v1/${name}`, { who: "alice" })).status).toBe(200);
    await h.waitForGone(name, 60_000);
    await expect(core.readNamespacedService({ namespace, name: `engine-${engine.uid}` })).rejects.toMatchObject({
      code: 404,
    });
  });

  it("fails engines with the reason the cluster gives: memory, an image pull, no node with the GPU", {
    timeout: 120_000,
  }, async () => {
    const version = "workspaces/global/h2oEngineVersions/3.46.0";
    const [oom, pull, gpu] = await Promise.all([
      h.create("notebookEngines", "oom", { ...notebook, profile: "workspaces/global/notebookEngineProfiles/nb-oom" }),
      h.create("h2oEngines", "pull", {
        profile: "workspaces/global/h2oEngineProfiles/h2o-pull",
        h2oEngineVersion: version,
      }),
      h.create("h2oEngines", "gpu", {
        profile: "workspaces/global/h2oEngineProfiles/h2o",
        h2oEngineVersion: version,
        gpu: 1,
      }),
    ]);
    const [oomFailed, pullFailed, gpuFailed] = await Promise.all(
      [oom, pull, gpu].map((name) => h.waitForState(name, "STATE_FAILED", 60_000)),
    );
    expect(oomFailed.failureReason).toBe("FAILURE_REASON_OOM_KILLED");
    expect(oomFailed.failureMessage).toMatch(/killed for using more memory/);
    expect(pullFailed.failureMessage).toMatch(/ErrImagePull: .*example\.invalid\/h2o:3\.46\.0/);
    expect(gpuFailed.failureMessage).toMatch(/Unschedulable: .*Insufficient nvidia\.com\/gpu/);
    // Failed engines keep no pods that could hold a node.
    for (const failed of [pullFailed, gpuFailed]) {
      const left = await core.listNamespacedPod({
        namespace,
        labelSelector: `app.kubernetes.io/instance=${failed.uid}`,
      });
      expect(left.items).toEqual([]);
    }
    for (const name of [oom, pull, gpu])
      expect((await h.rest("DELETE", `/v1/${name}`, { who: "alice" })).status).toBe(200);
    for (const name of [oom, pull, gpu]) await h.waitForGone(name, 60_000);
  });
});
