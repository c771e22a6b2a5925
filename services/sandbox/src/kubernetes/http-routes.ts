// Public ports' HTTPRoutes, through the custom-objects API: the Gateway API's kinds are no part of
// the typed client, and a cluster without its CRDs answers their calls with 404.
import { ApiException, CustomObjectsApi, type KubeConfig, type KubernetesListObject } from "@kubernetes/client-node";
import { gatewayGroup, type HttpRoute } from "./sandbox-objects.js";

export interface HttpRoutes {
  /** Where an informer lists and watches them. */
  readonly path: string;
  list(): Promise<KubernetesListObject<HttpRoute>>;
  create(body: HttpRoute): Promise<unknown>;
  delete(name: string): Promise<unknown>;
  /** Whether the cluster knows HTTPRoutes (the Gateway API's CRDs are installed). */
  installed(): Promise<boolean>;
}

/** The HTTPRoutes in `namespace` that `labelSelector` selects. */
export function createHttpRoutes(config: KubeConfig, namespace: string, labelSelector: string): HttpRoutes {
  const custom = config.makeApiClient(CustomObjectsApi);
  const where = { group: gatewayGroup, version: "v1", namespace, plural: "httproutes" };
  const list = () =>
    custom.listNamespacedCustomObject({ ...where, labelSelector }) as Promise<KubernetesListObject<HttpRoute>>;
  return {
    path: `/apis/${gatewayGroup}/v1/namespaces/${namespace}/httproutes`,
    list,
    create: (body) => custom.createNamespacedCustomObject({ ...where, body }),
    delete: (name) => custom.deleteNamespacedCustomObject({ ...where, name }),
    installed: () =>
      list().then(
        () => true,
        (error: unknown) => {
          // No Gateway API in this cluster: ports get their Services, and public ones no route.
          if (error instanceof ApiException && error.code === 404) return false;
          throw error;
        },
      ),
  };
}
