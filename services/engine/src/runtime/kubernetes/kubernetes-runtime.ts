// Engines as Kubernetes objects (docs/adr/0161, 0195): a claim, a pod and a Service per DAI or
// notebook engine, a headless Service and a pod per node for an H2O engine, in one namespace. What the cluster holds is read from informers
// (engine-cluster.ts); every replica of the service sees the same objects, so nothing is pinned to
// one of them.
import { ignoreNotFound } from "@aiem/kit/kubernetes";
import type { KubeConfig } from "@kubernetes/client-node";
import type { DiskUsage, EngineEndpoint, EngineRuntime, EngineStatus } from "../runtime.js";
import { watchEngineCluster, type EngineCluster } from "./engine-cluster.js";
import { appNames, engineObjectName } from "./engine-objects.js";
import { deletePods, podLogs, startH2O, startSinglePod } from "./engine-pods.js";
import { h2oNodeHost, h2oPort, nodeCountAnnotation } from "./h2o-objects.js";
import { engineStatusOf, h2oStatusOf } from "./pod-state.js";

export interface KubernetesRuntimeOptions {
  readonly config: KubeConfig;
  /** Where engines' objects live (`AIEM_KUBERNETES_NAMESPACE`). */
  readonly namespace: string;
}

const portOf: Record<string, number> = { "dai-engine": 12345, "notebook-engine": 8888, "h2o-engine": h2oPort };

/** Starts the informers and resolves once their first list is in, so inspect() sees the cluster. */
export async function createKubernetesRuntime(options: KubernetesRuntimeOptions): Promise<EngineRuntime> {
  const { config, namespace } = options;
  const cluster = await watchEngineCluster(config, namespace);
  return {
    placement: `kubernetes:${config.getCurrentCluster()?.server ?? "cluster"}/${namespace}`,
    shared: true,
    start: (spec) => (spec.kind === "h2o" ? startH2O(cluster, spec) : startSinglePod(cluster, spec)),
    inspect: async (uid) => inspect(cluster, uid),
    stop: (uid) => deletePods(cluster, uid),
    remove: (uid) => remove(cluster, uid),
    async resizeStorage(uid, bytes) {
      await cluster.core.patchNamespacedPersistentVolumeClaim({
        namespace,
        name: engineObjectName(uid),
        // The client sends patches as JSON Patch (RFC 6902).
        body: [{ op: "replace", path: "/spec/resources/requests/storage", value: bytes.toString() }],
      });
    },
    // Disk usage needs a kubelet's volume statistics (the metrics API); none is assumed.
    async diskUsage(): Promise<DiskUsage | undefined> {
      return undefined;
    },
    logs: (uid, maxBytes) => podLogs(cluster, uid, maxBytes),
    async endpoint(uid): Promise<EngineEndpoint | undefined> {
      const kind = cluster.kindOf(uid) ?? "";
      const port = portOf[kind];
      if (port === undefined || cluster.podsOf(uid).length === 0) return undefined;
      // Any node of an H2O cloud answers for all of it; the first is always there.
      const host = kind === appNames.h2o ? h2oNodeHost(uid, 0, namespace) : `${engineObjectName(uid)}.${namespace}.svc`;
      return { host, port };
    },
    watch(listener) {
      cluster.listeners.add(listener);
      return () => cluster.listeners.delete(listener);
    },
    close: () => cluster.stop(),
  };
}

function inspect(cluster: EngineCluster, uid: string): EngineStatus {
  const name = engineObjectName(uid);
  if (cluster.kindOf(uid) === appNames.h2o) {
    const service = cluster.cached("service", name);
    const count =
      service?.metadata?.annotations?.[nodeCountAnnotation] ??
      cluster.podsOf(uid)[0]?.metadata?.annotations?.[nodeCountAnnotation];
    return h2oStatusOf(cluster.podsOf(uid), Number(count ?? 1), service !== undefined, cluster.warningOf);
  }
  const claimed = cluster.claims.get(name, cluster.namespace) !== undefined;
  return engineStatusOf(cluster.pods.get(name, cluster.namespace), claimed, cluster.warningOf);
}

async function remove(cluster: EngineCluster, uid: string): Promise<void> {
  const { core, namespace } = cluster;
  const name = engineObjectName(uid);
  // The claim (or an H2O engine's Service) owns the rest; deleting them too does not wait for the
  // garbage collector. Foreground: in the background a claim's protection finalizer and the pod
  // using it would wait on each other.
  await deletePods(cluster, uid);
  await ignoreNotFound(core.deleteNamespacedService({ namespace, name, propagationPolicy: "Foreground" }));
  await ignoreNotFound(
    core.deleteNamespacedPersistentVolumeClaim({ namespace, name, propagationPolicy: "Foreground" }),
  );
  await Promise.all([cluster.gone("service", name), cluster.gone("claim", name)]);
}
