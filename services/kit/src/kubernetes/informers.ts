// Informers on a namespace's objects: a list, then a watch from it, so that what the cluster holds
// is read from a cache that the watch keeps current, never polled.
import {
  type CoreV1Api,
  type CoreV1Event,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  makeInformer,
  type V1PersistentVolumeClaim,
  type V1Pod,
  type V1Service,
} from "@kubernetes/client-node";

export type CachedInformer<T extends KubernetesObject> = ReturnType<typeof makeInformer<T>>;

/** The core resources informed on, by their plural in the API's paths. */
export interface CoreObjects {
  readonly pods: V1Pod;
  readonly services: V1Service;
  readonly persistentvolumeclaims: V1PersistentVolumeClaim;
  readonly events: CoreV1Event;
}

type Query = { namespace: string; labelSelector?: string };
const lists: {
  [R in keyof CoreObjects]: (core: CoreV1Api, query: Query) => Promise<KubernetesListObject<CoreObjects[R]>>;
} = {
  pods: (core, query) => core.listNamespacedPod(query),
  services: (core, query) => core.listNamespacedService(query),
  persistentvolumeclaims: (core, query) => core.listNamespacedPersistentVolumeClaim(query),
  events: (core, query) => core.listNamespacedEvent(query),
};

/** An informer on the namespace's `resource`, only those objects `labelSelector` selects when it is given. */
export function coreInformer<R extends keyof CoreObjects>(
  config: KubeConfig,
  core: CoreV1Api,
  namespace: string,
  resource: R,
  labelSelector?: string,
): CachedInformer<CoreObjects[R]> {
  return makeInformer<CoreObjects[R]>(
    config,
    `/api/v1/namespaces/${namespace}/${resource}`,
    () => lists[resource](core, { namespace, labelSelector }),
    labelSelector,
  );
}
