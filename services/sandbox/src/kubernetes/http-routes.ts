// Public ports' HTTPRoutes, through the custom-objects API: the Gateway API's kinds are no part of
// the typed client, and a cluster without its CRDs answers their calls with 404.
import { ApiException, CustomObjectsApi, type KubeConfig, type KubernetesListObject } from "@kubernetes/client-node";
import type { HttpRoute } from "./sandbox-objects.js";

// Written out here, in each call, so that the Role's check (deploy/kubernetes/runtime-api-calls.ts)
// reads the group and resource of every call from this file.
const GATEWAY_GROUP = "gateway.networking.k8s.io";
const HTTPROUTES = "httproutes";

export interface HttpRoutes {
  list(): Promise<KubernetesListObject<HttpRoute>>;
  create(body: HttpRoute): Promise<unknown>;
  delete(name: string): Promise<unknown>;
  /** Whether the cluster knows HTTPRoutes (the Gateway API's CRDs are installed). */
  installed(): Promise<boolean>;
}

/** The HTTPRoutes in `namespace` that `labelSelector` selects. */
export function createHttpRoutes(config: KubeConfig, namespace: string, labelSelector: string): HttpRoutes {
  const custom = config.makeApiClient(CustomObjectsApi);
  const list = () =>
    custom.listNamespacedCustomObject({
      group: GATEWAY_GROUP,
      version: "v1",
      namespace,
      plural: HTTPROUTES,
      labelSelector,
    }) as Promise<KubernetesListObject<HttpRoute>>;
  return {
    list,
    create: (body) =>
      custom.createNamespacedCustomObject({ group: GATEWAY_GROUP, version: "v1", namespace, plural: HTTPROUTES, body }),
    delete: (name) =>
      custom.deleteNamespacedCustomObject({ group: GATEWAY_GROUP, version: "v1", namespace, plural: HTTPROUTES, name }),
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
