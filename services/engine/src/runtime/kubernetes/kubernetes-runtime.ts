// Engines as Kubernetes objects (docs/adr/0161): a claim, a pod and a Service per engine in one
// namespace. What the cluster holds is read from informers (a list, then a watch), never polled;
// every replica of the service sees the same objects, so nothing is pinned to one of them.
import {
  ApiException,
  CoreV1Api,
  type KubeConfig,
  makeInformer,
  type V1PersistentVolumeClaim,
  type V1Pod,
} from "@kubernetes/client-node";
import type { DiskUsage, EngineEndpoint, EngineRunSpec, EngineRuntime, EngineStatus } from "../runtime.js";
import { engineObjectName, engineObjects, managedBy } from "./engine-objects.js";
import { engineStatusOf } from "./pod-state.js";

export interface KubernetesRuntimeOptions {
  readonly config: KubeConfig;
  /** Where engines' objects live (`AIEM_KUBERNETES_NAMESPACE`). */
  readonly namespace: string;
}

const selector = `app.kubernetes.io/managed-by=${managedBy}`;
const portOf: Record<string, number> = { "dai-engine": 12345, "notebook-engine": 8888 };

/** Starts the informers and resolves once their first list is in, so inspect() sees the cluster. */
export async function createKubernetesRuntime(options: KubernetesRuntimeOptions): Promise<EngineRuntime> {
  const { config, namespace } = options;
  const core = config.makeApiClient(CoreV1Api);
  const pods = makeInformer<V1Pod>(
    config,
    `/api/v1/namespaces/${namespace}/pods`,
    () => core.listNamespacedPod({ namespace, labelSelector: selector }),
    selector,
  );
  const claims = makeInformer<V1PersistentVolumeClaim>(
    config,
    `/api/v1/namespaces/${namespace}/persistentvolumeclaims`,
    () => core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector: selector }),
    selector,
  );
  const listeners = new Set<(uid: string) => void>();
  const notify = (object: V1Pod | V1PersistentVolumeClaim) => {
    const uid = object.metadata?.labels?.["app.kubernetes.io/instance"];
    if (uid) for (const listener of listeners) listener(uid);
  };
  // Callers waiting for an object to be gone (a pod before its successor starts, a claim being
  // deleted), released by the informer's delete event.
  const goneWaiters = new Map<string, (() => void)[]>();
  const release = (kind: string) => (object: V1Pod | V1PersistentVolumeClaim) => {
    const key = `${kind}/${object.metadata?.name ?? ""}`;
    for (const resolve of goneWaiters.get(key) ?? []) resolve();
    goneWaiters.delete(key);
  };
  pods.on("delete", release("pod"));
  claims.on("delete", release("claim"));
  for (const verb of ["add", "update", "delete"] as const) {
    pods.on(verb, notify);
    claims.on(verb, notify);
  }
  await Promise.all([pods.start(), claims.start()]);

  const gone = (kind: "pod" | "claim", name: string): Promise<void> => {
    const cached = kind === "pod" ? pods.get(name, namespace) : claims.get(name, namespace);
    if (!cached) return Promise.resolve();
    const key = `${kind}/${name}`;
    return new Promise((resolve) => goneWaiters.set(key, [...(goneWaiters.get(key) ?? []), resolve]));
  };

  return {
    placement: `kubernetes:${config.getCurrentCluster()?.server ?? "cluster"}/${namespace}`,

    async start(spec: EngineRunSpec) {
      const name = engineObjectName(spec.uid);
      const existing = pods.get(name, namespace);
      if (existing && !existing.metadata?.deletionTimestamp) return;
      const { claim } = engineObjects(spec, namespace, spec.kubernetes);
      const owned = (await createOrRead(
        () => core.createNamespacedPersistentVolumeClaim({ namespace, body: claim }),
        () => core.readNamespacedPersistentVolumeClaim({ namespace, name }),
      )) as V1PersistentVolumeClaim;
      const owner = { kind: "PersistentVolumeClaim", name, uid: owned.metadata?.uid ?? "" };
      const { pod, service } = engineObjects(spec, namespace, spec.kubernetes, owner);
      await createOrRead(() => core.createNamespacedService({ namespace, body: service }));
      await gone("pod", name);
      await createOrRead(() => core.createNamespacedPod({ namespace, body: pod }));
    },

    async inspect(uid): Promise<EngineStatus> {
      const name = engineObjectName(uid);
      return engineStatusOf(pods.get(name, namespace), claims.get(name, namespace) !== undefined);
    },

    async stop(uid) {
      const name = engineObjectName(uid);
      await ignoreNotFound(core.deleteNamespacedPod({ namespace, name }));
      await gone("pod", name);
    },

    async remove(uid) {
      const name = engineObjectName(uid);
      // The claim owns the rest; deleting them too does not wait for the garbage collector.
      await ignoreNotFound(core.deleteNamespacedPod({ namespace, name }));
      await ignoreNotFound(core.deleteNamespacedService({ namespace, name }));
      await ignoreNotFound(
        core.deleteNamespacedPersistentVolumeClaim({ namespace, name, propagationPolicy: "Foreground" }),
      );
      await Promise.all([gone("pod", name), gone("claim", name)]);
    },

    async resizeStorage(uid, bytes) {
      await core.patchNamespacedPersistentVolumeClaim({
        namespace,
        name: engineObjectName(uid),
        body: { spec: { resources: { requests: { storage: bytes.toString() } } } },
      });
    },

    // Disk usage needs a kubelet's volume statistics (the metrics API); none is assumed.
    async diskUsage(): Promise<DiskUsage | undefined> {
      return undefined;
    },

    async logs(uid, maxBytes) {
      try {
        const text = await core.readNamespacedPodLog({ namespace, name: engineObjectName(uid), limitBytes: maxBytes });
        return new TextEncoder().encode(text);
      } catch {
        // No pod, or no kubelet serving its logs: an engine without logs yet.
        return new Uint8Array();
      }
    },

    async endpoint(uid): Promise<EngineEndpoint | undefined> {
      const pod = pods.get(engineObjectName(uid), namespace);
      const port = portOf[pod?.metadata?.labels?.["app.kubernetes.io/name"] ?? ""];
      if (!pod || port === undefined) return undefined;
      return { host: `${engineObjectName(uid)}.${namespace}.svc`, port };
    },

    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async close() {
      listeners.clear();
      await Promise.all([pods.stop(), claims.stop()]);
    },
  };
}

/** Creates an object; when it exists already, reads it instead (or returns undefined). */
async function createOrRead<T>(create: () => Promise<T>, read?: () => Promise<T>): Promise<T | undefined> {
  try {
    return await create();
  } catch (error) {
    if (error instanceof ApiException && error.code === 409) return read?.();
    throw error;
  }
}

async function ignoreNotFound(call: Promise<unknown>): Promise<void> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof ApiException && error.code === 404)) throw error;
  }
}
