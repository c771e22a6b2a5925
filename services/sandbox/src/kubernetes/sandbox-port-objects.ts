// A sandbox port's objects: its Service, and its HTTPRoute while it is public and the cluster has
// the Gateway API, both owned by the sandbox's Service.
import { createOrRead, ignoreNotFound, type Owner } from "@aiem/kit/kubernetes";
import type { CoreV1Api } from "@kubernetes/client-node";
import type { HttpRoutes } from "./http-routes.js";
import type { ObjectChanges } from "./object-changes.js";
import { type PortRouteOptions, portObjectName, portRoute, portService } from "./sandbox-objects.js";
import type { SandboxInformers } from "./sandbox-informers.js";

export interface SandboxPortObjects {
  /** Makes a port's Service, and its HTTPRoute while `route` is given (public), deleting it otherwise. */
  ensurePort(uid: string, port: number, route: PortRouteOptions | undefined): Promise<void>;
  removePort(uid: string, port: number): Promise<void>;
  /** Whether the port's objects exist: its Service, and its HTTPRoute when it is public. */
  portReady(uid: string, port: number, isPublic: boolean): boolean;
}

export interface SandboxPortObjectsOptions {
  readonly core: CoreV1Api;
  readonly namespace: string;
  /** None when the cluster has no HTTPRoutes: public ports get their Services only. */
  readonly httpRoutes: HttpRoutes | undefined;
  readonly gateway: PortRouteOptions["gateway"];
  readonly informers: SandboxInformers;
  readonly changes: ObjectChanges;
  readonly owningService: (uid: string) => Promise<Owner>;
}

export function createSandboxPortObjects(options: SandboxPortObjectsOptions): SandboxPortObjects {
  const { core, namespace, httpRoutes, informers, changes } = options;
  return {
    async ensurePort(uid, port, route) {
      const name = portObjectName(uid, port);
      const owner = await options.owningService(uid);
      await createOrRead(() =>
        core.createNamespacedService({ namespace, body: portService(uid, port, namespace, owner) }),
      );
      if (!httpRoutes) return;
      if (route) {
        const body = portRoute(uid, port, namespace, { ...route, gateway: options.gateway }, owner);
        await createOrRead(() => httpRoutes.create(body));
        await changes.seen("route", name);
      } else {
        await ignoreNotFound(httpRoutes.delete(name));
        await changes.gone("route", name);
      }
      await changes.seen("service", name);
    },

    async removePort(uid, port) {
      const name = portObjectName(uid, port);
      await ignoreNotFound(core.deleteNamespacedService({ namespace, name }));
      if (httpRoutes) await ignoreNotFound(httpRoutes.delete(name));
      await Promise.all([changes.gone("service", name), changes.gone("route", name)]);
    },

    portReady(uid, port, isPublic) {
      const name = portObjectName(uid, port);
      const service = informers.cached("service", name);
      return service !== undefined && (!isPublic || !httpRoutes || informers.cached("route", name) !== undefined);
    },
  };
}
