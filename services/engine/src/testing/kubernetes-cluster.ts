// What every Kubernetes suite of the engine service shares: whether the control plane is built
// (the suites skip, saying why, where it is not), a real cluster with a namespace and clients for
// it, and waits on what the cluster or the runtime reports, by watches rather than polling.
import { kubernetesUnavailable, startTestCluster, type TestCluster, type TestClusterOptions } from "@aiem/kit/testing";
import {
  CoreV1Api,
  KubeConfig,
  type KubernetesObject,
  type V1ListMeta,
  type V1Pod,
  Watch,
} from "@kubernetes/client-node";
import type { EngineRuntime, EngineStatus } from "../runtime/runtime.js";

/** Why the Kubernetes suites cannot run here (logged once per file), or undefined when they can. */
export function kubernetesSkipReason(suite: string): string | undefined {
  const reason = kubernetesUnavailable();
  if (reason) console.warn(`${suite}: skipped, ${reason}`);
  return reason;
}

export type WatchedKind = "pods" | "services" | "persistentvolumeclaims";

export interface KubernetesFixture {
  readonly cluster: TestCluster;
  /** The admin kubeconfig, loaded. */
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly namespace: string;
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
  const cluster = await startTestCluster(options);
  try {
    await cluster.createNamespace(namespace);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  const config = new KubeConfig();
  config.loadFromFile(cluster.kubeconfigPath);
  const core = config.makeApiClient(CoreV1Api);

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

  return { cluster, config, core, namespace, watchPod, watchGone, stop: () => cluster.stop() };
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
