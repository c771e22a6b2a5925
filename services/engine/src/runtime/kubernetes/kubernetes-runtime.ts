// Engines as Kubernetes objects (docs/adr/0161, 0195): a claim, a pod and a Service per DAI or
// notebook engine, a headless Service and a pod per node for an H2O engine, in one namespace. What the cluster holds is read from informers (a list, then a watch), never polled;
// every replica of the service sees the same objects, so nothing is pinned to one of them.
import { createOrRead, ignoreNotFound } from "@aiem/kit/kubernetes";
import {
  type CoreV1Event,
  CoreV1Api,
  type KubeConfig,
  makeInformer,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1Service,
} from "@kubernetes/client-node";
import type {
  DiskUsage,
  EngineEndpoint,
  EnginePending,
  EngineRunSpec,
  EngineRuntime,
  EngineStatus,
} from "../runtime.js";
import { appNames, engineObjectName, engineObjects, managedBy } from "./engine-objects.js";
import { h2oNodeHost, h2oObjects, h2oPort, nodeCountAnnotation } from "./h2o-objects.js";
import { engineStatusOf, h2oStatusOf } from "./pod-state.js";

export interface KubernetesRuntimeOptions {
  readonly config: KubeConfig;
  /** Where engines' objects live (`AIEM_KUBERNETES_NAMESPACE`). */
  readonly namespace: string;
}

const selector = `app.kubernetes.io/managed-by=${managedBy}`;
const instanceLabel = "app.kubernetes.io/instance";
const portOf: Record<string, number> = { "dai-engine": 12345, "notebook-engine": 8888, "h2o-engine": h2oPort };

type Kind = "pod" | "claim" | "service";
type Watched = V1Pod | V1PersistentVolumeClaim | V1Service;

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
  const services = makeInformer<V1Service>(
    config,
    `/api/v1/namespaces/${namespace}/services`,
    () => core.listNamespacedService({ namespace, labelSelector: selector }),
    selector,
  );
  const informers = { pod: pods, claim: claims, service: services } as const;
  const cached = (kind: Kind, name: string): Watched | undefined => informers[kind].get(name, namespace);

  const listeners = new Set<(uid: string) => void>();
  const notify = (object: Watched) => {
    const uid = object.metadata?.labels?.[instanceLabel];
    if (uid) for (const listener of listeners) listener(uid);
  };
  // Callers waiting for an object to be gone (a pod before its successor starts, a claim being
  // deleted) or to be seen (so that inspect() right after start() finds what start() made),
  // released by the informers' events.
  const waiters = new Map<string, (() => void)[]>();
  const release = (event: "gone" | "seen", kind: Kind) => (object: Watched) => {
    const key = `${event}/${kind}/${object.metadata?.name ?? ""}`;
    for (const resolve of waiters.get(key) ?? []) resolve();
    waiters.delete(key);
  };
  const waitFor = (key: string): Promise<void> =>
    new Promise((resolve) => waiters.set(key, [...(waiters.get(key) ?? []), resolve]));
  for (const kind of ["pod", "claim", "service"] as const) {
    const informer = informers[kind] as ReturnType<typeof makeInformer<Watched>>;
    informer.on("delete", release("gone", kind));
    informer.on("add", release("seen", kind));
    informer.on("update", release("seen", kind));
    for (const verb of ["add", "update", "delete"] as const) informer.on(verb, notify);
  }
  // Warnings about pods (a kubelet's FailedMount, FailedCreatePodSandBox...), the latest per pod:
  // why a scheduled pod still waits when none of its containers says. The scheduler's own
  // FailedScheduling is read from the pod's condition instead.
  const events = makeInformer<CoreV1Event>(config, `/api/v1/namespaces/${namespace}/events`, () =>
    core.listNamespacedEvent({ namespace }),
  );
  const warnings = new Map<string, EnginePending>();
  const onEvent = (event: CoreV1Event) => {
    const { uid, name } = event.involvedObject;
    if (event.involvedObject.kind !== "Pod" || event.type !== "Warning" || !uid || !event.reason) return;
    if (event.reason === "FailedScheduling") return;
    warnings.set(uid, { reason: event.reason, message: event.message ?? "" });
    const pod = name ? pods.get(name, namespace) : undefined;
    if (pod?.metadata?.uid === uid) notify(pod);
  };
  events.on("add", onEvent);
  events.on("update", onEvent);
  pods.on("delete", (pod) => warnings.delete(pod.metadata?.uid ?? ""));
  const warningOf = (pod: V1Pod) => warnings.get(pod.metadata?.uid ?? "");
  await Promise.all([pods.start(), claims.start(), services.start(), events.start()]);

  const gone = (kind: Kind, name: string): Promise<void> =>
    cached(kind, name) ? waitFor(`gone/${kind}/${name}`) : Promise.resolve();
  const seen = (kind: Kind, name: string): Promise<void> =>
    cached(kind, name) ? Promise.resolve() : waitFor(`seen/${kind}/${name}`);
  const podsOf = (uid: string): V1Pod[] =>
    pods.list(namespace).filter((p) => p.metadata?.labels?.[instanceLabel] === uid);
  const kindOf = (uid: string): string | undefined => {
    const service = cached("service", engineObjectName(uid));
    return (
      service?.metadata?.labels?.["app.kubernetes.io/name"] ??
      podsOf(uid)[0]?.metadata?.labels?.["app.kubernetes.io/name"]
    );
  };
  const replaceable = (pod: V1Pod | undefined) =>
    pod === undefined ||
    pod.metadata?.deletionTimestamp !== undefined ||
    pod.status?.phase === "Failed" ||
    pod.status?.phase === "Succeeded";

  /** Deletes every pod of the engine and waits until they are gone. */
  async function deletePods(uid: string): Promise<void> {
    const names = podsOf(uid).map((p) => p.metadata?.name ?? "");
    await core.deleteCollectionNamespacedPod({ namespace, labelSelector: `${instanceLabel}=${uid}` });
    await Promise.all(names.map((name) => gone("pod", name)));
  }

  async function startSinglePod(spec: EngineRunSpec): Promise<void> {
    const name = engineObjectName(spec.uid);
    const existing = pods.get(name, namespace);
    if (!replaceable(existing)) return;
    const { claim } = engineObjects(spec, namespace, spec.kubernetes);
    const owned = (await createOrRead(
      () => core.createNamespacedPersistentVolumeClaim({ namespace, body: claim }),
      () => core.readNamespacedPersistentVolumeClaim({ namespace, name }),
    )) as V1PersistentVolumeClaim;
    const owner = { kind: "PersistentVolumeClaim", name, uid: owned.metadata?.uid ?? "" };
    const { pod, service } = engineObjects(spec, namespace, spec.kubernetes, owner);
    await createOrRead(() => core.createNamespacedService({ namespace, body: service }));
    // One that ended (a failed engine started again) makes way for its successor.
    if (existing && !existing.metadata?.deletionTimestamp)
      await ignoreNotFound(core.deleteNamespacedPod({ namespace, name }));
    await gone("pod", name);
    await createOrRead(() => core.createNamespacedPod({ namespace, body: pod }));
    await seen("pod", name);
  }

  async function startH2O(spec: EngineRunSpec): Promise<void> {
    const name = engineObjectName(spec.uid);
    const { service } = h2oObjects(spec, namespace, spec.kubernetes);
    const owned = (await createOrRead(
      () => core.createNamespacedService({ namespace, body: service }),
      () => core.readNamespacedService({ namespace, name }),
    )) as V1Service;
    const owner = { kind: "Service", name, uid: owned.metadata?.uid ?? "" };
    const wanted = h2oObjects(spec, namespace, spec.kubernetes, owner).pods;
    // The cluster's word, not the cache's: a cloud is left alone only when every node is there.
    const current = (await core.listNamespacedPod({ namespace, labelSelector: `${instanceLabel}=${spec.uid}` })).items;
    const names = new Set(wanted.map((p) => p.metadata?.name));
    const whole =
      current.length === wanted.length && current.every((p) => names.has(p.metadata?.name) && !replaceable(p));
    if (whole) return;
    // An H2O cloud does not take a node back: what is left of it goes, and it forms anew.
    if (current.length > 0) await deletePods(spec.uid);
    for (const pod of wanted) await createOrRead(() => core.createNamespacedPod({ namespace, body: pod }));
    await Promise.all(wanted.map((p) => seen("pod", p.metadata?.name ?? "")));
  }

  return {
    placement: `kubernetes:${config.getCurrentCluster()?.server ?? "cluster"}/${namespace}`,
    shared: true,

    start: (spec) => (spec.kind === "h2o" ? startH2O(spec) : startSinglePod(spec)),

    async inspect(uid): Promise<EngineStatus> {
      const name = engineObjectName(uid);
      if (kindOf(uid) === appNames.h2o) {
        const service = cached("service", name);
        const count =
          service?.metadata?.annotations?.[nodeCountAnnotation] ??
          podsOf(uid)[0]?.metadata?.annotations?.[nodeCountAnnotation];
        return h2oStatusOf(podsOf(uid), Number(count ?? 1), service !== undefined, warningOf);
      }
      return engineStatusOf(pods.get(name, namespace), claims.get(name, namespace) !== undefined, warningOf);
    },

    async stop(uid) {
      await deletePods(uid);
    },

    async remove(uid) {
      const name = engineObjectName(uid);
      // The claim (or an H2O engine's Service) owns the rest; deleting them too does not wait for
      // the garbage collector. Foreground: in the background a claim's protection finalizer and
      // the pod using it would wait on each other.
      await deletePods(uid);
      await ignoreNotFound(core.deleteNamespacedService({ namespace, name, propagationPolicy: "Foreground" }));
      await ignoreNotFound(
        core.deleteNamespacedPersistentVolumeClaim({ namespace, name, propagationPolicy: "Foreground" }),
      );
      await Promise.all([gone("service", name), gone("claim", name)]);
    },

    async resizeStorage(uid, bytes) {
      await core.patchNamespacedPersistentVolumeClaim({
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

    async logs(uid, maxBytes) {
      // Every node of an H2O cloud, each under its pod's name; the one pod of the other kinds.
      const names = podsOf(uid)
        .map((p) => p.metadata?.name ?? "")
        .sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
      const parts: string[] = [];
      for (const name of names) {
        try {
          const text = await core.readNamespacedPodLog({ namespace, name, limitBytes: maxBytes });
          parts.push(names.length > 1 ? `==> ${name} <==\n${text}` : text);
        } catch {
          // No kubelet serving its logs (or the pod just went): no logs from it yet.
        }
      }
      const bytes = new TextEncoder().encode(parts.join("\n"));
      return bytes.length > maxBytes ? bytes.slice(bytes.length - maxBytes) : bytes;
    },

    async endpoint(uid): Promise<EngineEndpoint | undefined> {
      const kind = kindOf(uid) ?? "";
      const port = portOf[kind];
      if (port === undefined || podsOf(uid).length === 0) return undefined;
      // Any node of an H2O cloud answers for all of it; the first is always there.
      const host = kind === appNames.h2o ? h2oNodeHost(uid, 0, namespace) : `${engineObjectName(uid)}.${namespace}.svc`;
      return { host, port };
    },

    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async close() {
      listeners.clear();
      await Promise.all([pods.stop(), claims.stop(), services.stop(), events.stop()]);
    },
  };
}
