// The edge handler of a host: the services of its in-process modules, those of the parts it
// reaches over the network (a replica pool per part), UNIMPLEMENTED for the public services
// nobody provides, and the plain HTTP routes, health and sign-in routes beside them.
import type { FileRegistry } from "@bufbuild/protobuf";
import { createConnectRouter, type ConnectRouter } from "@connectrpc/connect";
import { INTERNAL_PACKAGE_PREFIX } from "@aiem/catalogue";
import type { Logger } from "@aiem/kit/logger";
import { createObservabilityInterceptor, type Metrics } from "@aiem/kit/observability";
import { createAuthInterceptor, type HttpRoute, type ServiceModule } from "@aiem/kit/server";
import { createEdgeHandler } from "../server/edge-handler.js";
import { createInProcessServices } from "../server/in-process.js";
import type { NodeHandler } from "../transcoder/transcoder.js";
import type { EdgeConfig } from "./edge-config.js";
import { createHealthHandler, type HealthCheck } from "./health.js";
import type { HostIdentity } from "./host-identity.js";
import { createHttpRoutesHandler, remoteHttpRoutes } from "./http-routes.js";
import { partOf, publicServices, type PartName } from "./parts.js";
import { createReplicaPool, type ReplicaPool } from "./replica-pool.js";
import { currentRequestTrace } from "./request-log.js";

export interface HostServicesOptions {
  readonly registry: FileRegistry;
  readonly modules: readonly ServiceModule[];
  readonly remotes: Partial<Record<PartName, string>>;
  readonly identity: HostIdentity;
  readonly edge: EdgeConfig;
  readonly metrics: Metrics | undefined;
  readonly logger: Logger;
  /** What answers a path nothing else serves. */
  readonly fallback: NodeHandler;
}

export interface HostServices {
  readonly handler: NodeHandler;
  readonly httpRoutes: readonly HttpRoute[];
  readonly pools: Partial<Record<PartName, ReplicaPool>>;
}

export function createHostServices(options: HostServicesOptions): HostServices {
  const { registry, modules, identity } = options;
  const local = (router: ConnectRouter) => {
    for (const module of modules) module.register(router);
  };
  const probe = createConnectRouter();
  local(probe);
  const served = new Set(probe.handlers.map((h) => h.service.typeName));
  // A part in other processes may have several replicas (comma-separated URLs): one pool each.
  const pools: Partial<Record<PartName, ReplicaPool>> = Object.fromEntries(
    Object.entries(options.remotes).map(([name, base]) => [name, createReplicaPool(base)]),
  );
  const remote = publicServices(registry).flatMap((service) => {
    const pool = pools[partOf(service)];
    if (!pool || served.has(service.typeName)) return [];
    served.add(service.typeName);
    return [{ service, transport: pool.transport }];
  });
  const missing = publicServices(registry).filter((s) => !served.has(s.typeName));
  const unimplemented = (router: ConnectRouter) => {
    for (const service of missing) router.service(service, {});
  };
  const routes = (router: ConnectRouter) => {
    local(router);
    unimplemented(router);
  };
  const all = createInProcessServices(routes, registry);

  const checks: HealthCheck[] = [
    ...modules.map((m) => ({ name: m.name, check: () => m.isReady() })),
    ...Object.entries(pools).map(([name, pool]) => ({ name, check: () => pool.ready() })),
  ];
  const httpRoutes = [...modules.flatMap((m) => m.httpRoutes ?? []), ...remoteHttpRoutes(pools)];
  const handler = createEdgeHandler({
    registry,
    routes,
    services: [...all.services, ...remote],
    // The internal services check the shared internal key themselves, not a user's token.
    // Spans and metrics first, so that calls refused by authentication are counted too.
    interceptors: [
      createObservabilityInterceptor({ metrics: options.metrics, holder: currentRequestTrace }),
      createAuthInterceptor(identity.authenticator, {
        isPublicService: (name) => name.startsWith("grpc.reflection.") || name.startsWith(INTERNAL_PACKAGE_PREFIX),
      }),
    ],
    checkCredentials: async (header) => {
      await identity.authenticator.authenticate(header.get("authorization"));
    },
    cors: { allowedOrigins: options.edge.corsOrigins },
    bodyLimitBytes: options.edge.bodyLimitBytes,
    logger: options.logger,
    fallback: createHealthHandler(
      checks,
      identity.createSignInRoutes(createHttpRoutesHandler(httpRoutes, options.fallback)),
    ),
  });
  return { handler, httpRoutes, pools };
}
