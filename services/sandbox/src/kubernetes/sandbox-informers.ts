// The informers over sandboxes' objects (docs/adr/0245): the pods, Services and HTTPRoutes we manage
// in the namespace, each a list then a watch, so that what the cluster holds is read, never polled.
import { type CachedInformer, coreInformer, managedBy } from "@aiem/kit/kubernetes";
import { type CoreV1Api, type KubeConfig, makeInformer, type V1Pod, type V1Service } from "@kubernetes/client-node";
import type { HttpRoutes } from "./http-routes.js";
import { appName, type HttpRoute } from "./sandbox-objects.js";

export const sandboxSelector = `app.kubernetes.io/managed-by=${managedBy},app.kubernetes.io/name=${appName}`;
const instanceLabel = "app.kubernetes.io/instance";

export type SandboxObjectKind = "pod" | "service" | "route";
export type SandboxObject = V1Pod | V1Service | HttpRoute;

export interface SandboxInformers {
  readonly pods: CachedInformer<V1Pod>;
  readonly services: CachedInformer<V1Service>;
  /** None when the cluster has no HTTPRoutes. */
  readonly routes: CachedInformer<HttpRoute> | undefined;
  /** Every informer, with the kind of object it holds. */
  readonly all: readonly (readonly [SandboxObjectKind, CachedInformer<SandboxObject>])[];
  cached(kind: SandboxObjectKind, name: string): SandboxObject | undefined;
  /** The kinds and names of the sandbox's objects in the caches. */
  objectsOf(uid: string): [SandboxObjectKind, string][];
  /** Resolves once every informer's first list is in. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The uid of the sandbox an object belongs to. */
export function sandboxUidOf(object: SandboxObject): string | undefined {
  return object.metadata?.labels?.[instanceLabel];
}

export function createSandboxInformers(
  config: KubeConfig,
  namespace: string,
  core: CoreV1Api,
  httpRoutes: HttpRoutes | undefined,
): SandboxInformers {
  const pods = coreInformer(config, core, namespace, "pods", sandboxSelector);
  const services = coreInformer(config, core, namespace, "services", sandboxSelector);
  const routes = httpRoutes
    ? makeInformer<HttpRoute>(
        config,
        `/apis/gateway.networking.k8s.io/v1/namespaces/${namespace}/httproutes`,
        httpRoutes.list,
        sandboxSelector,
      )
    : undefined;
  const all: [SandboxObjectKind, CachedInformer<SandboxObject>][] = [
    ["pod", pods as CachedInformer<SandboxObject>],
    ["service", services as CachedInformer<SandboxObject>],
  ];
  if (routes) all.push(["route", routes as CachedInformer<SandboxObject>]);
  return {
    pods,
    services,
    routes,
    all,
    cached: (kind, name) =>
      kind === "pod"
        ? pods.get(name, namespace)
        : kind === "service"
          ? services.get(name, namespace)
          : routes?.get(name, namespace),
    objectsOf: (uid) =>
      all.flatMap(([kind, informer]) =>
        informer
          .list(namespace)
          .filter((object) => sandboxUidOf(object) === uid)
          .map((object): [SandboxObjectKind, string] => [kind, object.metadata?.name ?? ""]),
      ),
    start: async () => {
      await Promise.all(all.map(([, informer]) => informer.start()));
    },
    stop: async () => {
      await Promise.all(all.map(([, informer]) => informer.stop()));
    },
  };
}
