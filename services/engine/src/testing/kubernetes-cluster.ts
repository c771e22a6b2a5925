// What the engine service's Kubernetes suites share: a real cluster with a namespace and clients for
// it, and waits on what the cluster or the runtime reports, by watches rather than polling.
import { type NamespaceCluster, startNamespaceCluster, type TestClusterOptions } from "@aiem/kit/testing";
import { type KubernetesObject, type V1ListMeta, type V1Pod, Watch } from "@kubernetes/client-node";
import type { EngineRuntime, EngineStatus } from "../runtime/runtime.js";

export type WatchedKind = "pods" | "services" | "persistentvolumeclaims";

export interface KubernetesFixture extends NamespaceCluster {
  /** Resolves with the pod once `done` holds for it (`undefined`: deleted), by a list and a watch from it. */
  watchPod(name: string, done: (pod: V1Pod | undefined) => boolean): Promise<V1Pod | undefined>;
  /** Resolves once the named object of `kind` is gone (now or later). */
  watchGone(kind: WatchedKind, name: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a test cluster with `namespace` ready for pods. */
export async function startKubernetesFixture(
  namespace: string,
  options: TestClusterOptions = {},
): Promise<KubernetesFixture> {
  const started = await startNamespaceCluster(namespace, options);
  const { config, core } = started;

  async function watchObject<T extends KubernetesObject>(
    kind: WatchedKind,
    name: string,
    done: (object: T | undefined) => boolean,
  ): Promise<T | undefined> {
    const fieldSelector = `metadata.name=${name}`;
    const list = (await listers[kind]({ namespace, fieldSelector })) as { items: T[]; metadata?: V1ListMeta };
    const current = list.items[0];
    if (done(current)) return current;
    let abort: AbortController | undefined;
    const result = new Promise<T | undefined>((resolve, reject) => {
      new Watch(config)
        .watch(
          `/api/v1/namespaces/${namespace}/${kind}`,
          { fieldSelector, resourceVersion: list.metadata?.resourceVersion },
          (type, object: T) => {
            const seen = type === "DELETED" ? undefined : object;
            if (done(seen)) resolve(seen);
          },
          (error) => reject(error ?? new Error("the watch ended")),
        )
        .then((controller) => {
          abort = controller;
        }, reject);
    });
    try {
      return await result;
    } finally {
      abort?.abort();
    }
  }
  const listers: Record<WatchedKind, (query: { namespace: string; fieldSelector: string }) => Promise<unknown>> = {
    pods: (q) => core.listNamespacedPod(q),
    services: (q) => core.listNamespacedService(q),
    persistentvolumeclaims: (q) => core.listNamespacedPersistentVolumeClaim(q),
  };
  const watchPod = (name: string, done: (pod: V1Pod | undefined) => boolean) => watchObject<V1Pod>("pods", name, done);
  const watchGone = async (kind: WatchedKind, name: string) => {
    await watchObject(kind, name, (object) => object === undefined);
  };

  return { ...started, watchPod, watchGone, stop: () => started.cluster.stop() };
}

/** Resolves once the engine's status satisfies `done`, checked now and on every change the runtime reports. */
export function untilStatus(
  runtime: EngineRuntime,
  uid: string,
  done: (status: EngineStatus) => boolean,
): Promise<EngineStatus> {
  return new Promise((resolve, reject) => {
    let unwatch = () => {};
    let settled = false;
    const check = () =>
      runtime.inspect(uid).then((status) => {
        if (settled || !done(status)) return;
        settled = true;
        unwatch();
        resolve(status);
      }, reject);
    unwatch = runtime.watch((changed) => {
      if (changed === uid) void check();
    });
    void check();
  });
}
