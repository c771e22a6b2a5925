// Starting and stopping an engine's pods: one pod with its claim and Service for DAI and notebook
// engines, a pod per node behind a headless Service for an H2O engine.
import { createOrRead, createOwner, ignoreNotFound } from "@aiem/kit/kubernetes";
import type { V1Pod } from "@kubernetes/client-node";
import type { EngineRunSpec } from "../runtime.js";
import { instanceLabel, type EngineCluster } from "./engine-cluster.js";
import { engineObjectName, engineObjects } from "./engine-objects.js";
import { h2oObjects } from "./h2o-objects.js";

const replaceable = (pod: V1Pod | undefined) =>
  pod === undefined ||
  pod.metadata?.deletionTimestamp !== undefined ||
  pod.status?.phase === "Failed" ||
  pod.status?.phase === "Succeeded";

/** Deletes every pod of the engine and waits until they are gone. */
export async function deletePods(cluster: EngineCluster, uid: string): Promise<void> {
  const names = cluster.podsOf(uid).map((p) => p.metadata?.name ?? "");
  await cluster.core.deleteCollectionNamespacedPod({
    namespace: cluster.namespace,
    labelSelector: `${instanceLabel}=${uid}`,
  });
  await Promise.all(names.map((name) => cluster.gone("pod", name)));
}

export async function startSinglePod(cluster: EngineCluster, spec: EngineRunSpec): Promise<void> {
  const { core, namespace } = cluster;
  const name = engineObjectName(spec.uid);
  const existing = cluster.pods.get(name, namespace);
  if (!replaceable(existing)) return;
  const { claim } = engineObjects(spec, namespace, spec.kubernetes);
  const owner = await createOwner(
    "PersistentVolumeClaim",
    name,
    () => core.createNamespacedPersistentVolumeClaim({ namespace, body: claim }),
    () => core.readNamespacedPersistentVolumeClaim({ namespace, name }),
  );
  const { pod, service } = engineObjects(spec, namespace, spec.kubernetes, owner);
  await createOrRead(() => core.createNamespacedService({ namespace, body: service }));
  // One that ended (a failed engine started again) makes way for its successor.
  if (existing && !existing.metadata?.deletionTimestamp)
    await ignoreNotFound(core.deleteNamespacedPod({ namespace, name }));
  await cluster.gone("pod", name);
  await createOrRead(() => core.createNamespacedPod({ namespace, body: pod }));
  await cluster.seen("pod", name);
}

export async function startH2O(cluster: EngineCluster, spec: EngineRunSpec): Promise<void> {
  const { core, namespace } = cluster;
  const name = engineObjectName(spec.uid);
  const { service } = h2oObjects(spec, namespace, spec.kubernetes);
  const owner = await createOwner(
    "Service",
    name,
    () => core.createNamespacedService({ namespace, body: service }),
    () => core.readNamespacedService({ namespace, name }),
  );
  const wanted = h2oObjects(spec, namespace, spec.kubernetes, owner).pods;
  // The cluster's word, not the cache's: a cloud is left alone only when every node is there.
  const current = (await core.listNamespacedPod({ namespace, labelSelector: `${instanceLabel}=${spec.uid}` })).items;
  const names = new Set(wanted.map((p) => p.metadata?.name));
  const whole =
    current.length === wanted.length && current.every((p) => names.has(p.metadata?.name) && !replaceable(p));
  if (whole) return;
  // An H2O cloud does not take a node back: what is left of it goes, and it forms anew.
  if (current.length > 0) await deletePods(cluster, spec.uid);
  for (const pod of wanted) await createOrRead(() => core.createNamespacedPod({ namespace, body: pod }));
  await Promise.all(wanted.map((p) => cluster.seen("pod", p.metadata?.name ?? "")));
}

/** The tail of the engine's log: every node of an H2O cloud, each under its pod's name; the one pod of the other kinds. */
export async function podLogs(cluster: EngineCluster, uid: string, maxBytes: number): Promise<Uint8Array> {
  const names = cluster
    .podsOf(uid)
    .map((p) => p.metadata?.name ?? "")
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  const parts: string[] = [];
  for (const name of names) {
    try {
      const text = await cluster.core.readNamespacedPodLog({
        namespace: cluster.namespace,
        name,
        limitBytes: maxBytes,
      });
      parts.push(names.length > 1 ? `==> ${name} <==\n${text}` : text);
    } catch {
      // No kubelet serving its logs (or the pod just went): no logs from it yet.
    }
  }
  const bytes = new TextEncoder().encode(parts.join("\n"));
  return bytes.length > maxBytes ? bytes.slice(bytes.length - maxBytes) : bytes;
}
