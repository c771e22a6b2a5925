// What the Kubernetes runtime knows of the cluster: informers on engines' pods, claims and
// Services (a list, then a watch; never polled), the latest warning about each pod, and waits for
// an object to be seen or gone, released by the informers' events.
import { type CachedInformer, coreInformer, watchPodWarnings } from "@aiem/kit/kubernetes";
import {
  CoreV1Api,
  type KubeConfig,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1Service,
} from "@kubernetes/client-node";
import type { EnginePending } from "../runtime.js";
import { engineObjectName, managedBy } from "./engine-objects.js";

export const instanceLabel = "app.kubernetes.io/instance";
const selector = `app.kubernetes.io/managed-by=${managedBy}`;

export type ObjectKind = "pod" | "claim" | "service";
type Watched = V1Pod | V1PersistentVolumeClaim | V1Service;

export interface EngineCluster {
  readonly core: CoreV1Api;
  readonly namespace: string;
  readonly pods: CachedInformer<V1Pod>;
  readonly claims: CachedInformer<V1PersistentVolumeClaim>;
  readonly services: CachedInformer<V1Service>;
  /** Called with an engine's uid whenever one of its objects changes. */
  readonly listeners: Set<(uid: string) => void>;
  cached(kind: ObjectKind, name: string): Watched | undefined;
  /** Resolves once the object is gone from the cache (at once when it is not there). */
  gone(kind: ObjectKind, name: string): Promise<void>;
  /** Resolves once the object is in the cache, so that inspect() right after start() finds it. */
  seen(kind: ObjectKind, name: string): Promise<void>;
  podsOf(uid: string): V1Pod[];
  /** The engine's app name (`dai-engine`, `h2o-engine`, `notebook-engine`), from its objects. */
  kindOf(uid: string): string | undefined;
  /** The latest warning about the pod: why a scheduled pod still waits when none of its containers says. */
  warningOf(pod: V1Pod): EnginePending | undefined;
  stop(): Promise<void>;
}

/** Starts the informers and resolves once their first list is in. */
export async function watchEngineCluster(config: KubeConfig, namespace: string): Promise<EngineCluster> {
  const core = config.makeApiClient(CoreV1Api);
  const pods = coreInformer(config, core, namespace, "pods", selector);
  const claims = coreInformer(config, core, namespace, "persistentvolumeclaims", selector);
  const services = coreInformer(config, core, namespace, "services", selector);
  const informers = { pod: pods, claim: claims, service: services } as const;
  const cached = (kind: ObjectKind, name: string): Watched | undefined => informers[kind].get(name, namespace);
  const listeners = new Set<(uid: string) => void>();
  const notify = (object: Watched) => {
    const uid = object.metadata?.labels?.[instanceLabel];
    if (uid) for (const listener of listeners) listener(uid);
  };
  const waitFor = watchObjects(informers, notify);
  const warnings = watchPodWarnings({ config, core, namespace, pods, onWarning: notify });
  await Promise.all([pods.start(), claims.start(), services.start(), warnings.start()]);
  const podsOf = (uid: string): V1Pod[] =>
    pods.list(namespace).filter((p) => p.metadata?.labels?.[instanceLabel] === uid);
  return {
    core,
    namespace,
    pods,
    claims,
    services,
    listeners,
    cached,
    gone: (kind, name) => (cached(kind, name) ? waitFor(`gone/${kind}/${name}`) : Promise.resolve()),
    seen: (kind, name) => (cached(kind, name) ? Promise.resolve() : waitFor(`seen/${kind}/${name}`)),
    podsOf,
    kindOf(uid) {
      const service = cached("service", engineObjectName(uid));
      return (
        service?.metadata?.labels?.["app.kubernetes.io/name"] ??
        podsOf(uid)[0]?.metadata?.labels?.["app.kubernetes.io/name"]
      );
    },
    warningOf: warnings.of,
    async stop() {
      listeners.clear();
      await Promise.all([pods.stop(), claims.stop(), services.stop(), warnings.stop()]);
    },
  };
}

/**
 * Notifies on every change of a watched object, and returns the wait of callers for an object to
 * be gone (a pod before its successor starts, a claim being deleted) or to be seen, keyed
 * `<gone|seen>/<kind>/<name>`.
 */
function watchObjects(
  informers: Readonly<
    Record<ObjectKind, CachedInformer<V1Pod> | CachedInformer<V1PersistentVolumeClaim> | CachedInformer<V1Service>>
  >,
  notify: (object: Watched) => void,
): (key: string) => Promise<void> {
  const waiters = new Map<string, (() => void)[]>();
  const release = (event: "gone" | "seen", kind: ObjectKind) => (object: Watched) => {
    const key = `${event}/${kind}/${object.metadata?.name ?? ""}`;
    for (const resolve of waiters.get(key) ?? []) resolve();
    waiters.delete(key);
  };
  for (const kind of ["pod", "claim", "service"] as const) {
    const informer = informers[kind] as CachedInformer<Watched>;
    informer.on("delete", release("gone", kind));
    informer.on("add", release("seen", kind));
    informer.on("update", release("seen", kind));
    for (const verb of ["add", "update", "delete"] as const) informer.on(verb, notify);
  }
  return (key) => new Promise((resolve) => waiters.set(key, [...(waiters.get(key) ?? []), resolve]));
}
