import type { FileRegistry } from "@bufbuild/protobuf";
import { createConnectRouter, type ConnectRouter } from "@connectrpc/connect";
import { INTERNAL_PACKAGE_PREFIX } from "@aiem/catalogue";
import { createPolicy, type Policy } from "@aiem/kit/authz";
import {
  contentDomain,
  createTicketLedger,
  defaultPublicUrl,
  loadTicketKey,
  type CommonConfig,
} from "@aiem/kit/config";
import { createDatabase } from "@aiem/kit/db";
import { createEventBus, type EventBus } from "@aiem/kit/events";
import {
  createAuthenticator,
  createEmbeddedIssuer,
  embeddedIssuerUrl,
  ISSUED_ACCESS_TOKEN_TTL_SECONDS,
} from "@aiem/kit/identity";
import { createLogger, type Logger } from "@aiem/kit/logger";
import {
  createMetrics,
  createObservabilityInterceptor,
  instrumentEventBus,
  MetricsPortInUse,
  startMetricsServer,
  type Metrics,
  type MetricsServer,
} from "@aiem/kit/observability";
import { createAuthInterceptor, type ServiceDeps, type ServiceModule } from "@aiem/kit/server";
import { loadImageRegistry } from "../registry.js";
import { createEdgeHandler } from "../server/edge-handler.js";
import { createEdgeServer, type EdgeServer } from "../server/front-door.js";
import { createInProcessServices } from "../server/in-process.js";
import type { NodeHandler } from "../transcoder/transcoder.js";
import { createCloudDiscoveryHandler, PLATFORM_CLIENT_ID } from "./cloud-discovery.js";
import type { EdgeConfig } from "./edge-config.js";
import { createContentOriginHandler, createContentOriginUpgrade, createPathUpgrade } from "./content-origins.js";
import { createHealthHandler, type HealthCheck } from "./health.js";
import { createHttpRoutesHandler, remoteHttpRoutes } from "./http-routes.js";
import { createReplicaPool, type ReplicaPool } from "./replica-pool.js";
import { createOidcIssuerHandler } from "./oidc-issuer.js";
import { partOf, publicServices, type PartName } from "./parts.js";
import { currentRequestTrace, withRequestLog } from "./request-log.js";
import { createOpenApiHandler } from "./openapi-route.js";
import { createVersionHandler, productVersion } from "./version-route.js";

export interface ModuleFactory {
  readonly name: PartName;
  create(deps: ServiceDeps): ServiceModule | Promise<ServiceModule>;
}

export interface HostOptions {
  readonly config: CommonConfig;
  readonly edge: EdgeConfig;
  /** Parts that run in this process. */
  readonly modules: readonly ModuleFactory[];
  /**
   * Parts served by other processes, by their base URL (gRPC over HTTP/2); several replicas of a
   * part as their URLs comma-separated.
   */
  readonly remotes?: Partial<Record<PartName, string>>;
  readonly logger?: Logger;
  /** Paths that are neither RPCs, REST routes nor health (the docs site). */
  readonly fallback?: NodeHandler;
  readonly registry?: FileRegistry;
  /** Appended to every module's schema name (AIEM_DB_SCHEMA_SUFFIX; tests use unique ones). */
  readonly schemaSuffix?: string;
  /** Prefix of the event streams and subjects (AIEM_EVENTS_PREFIX; tests use unique ones). */
  readonly eventsPrefix?: string;
  /** A bus owned by the caller (tests); the host then neither creates nor closes one. */
  readonly bus?: EventBus;
  /**
   * Whether users reach this process: it then serves content origins by Host and keeps user
   * content off the API's origin. A service part behind the edge (`start:service engine`)
   * is not: it serves the path routes the edge forwards to it. Default true.
   */
  readonly front?: boolean;
  /**
   * Serve Prometheus metrics at `/metrics` on this port of their own (0: any free port, see
   * `metricsUrl`). Without it the process keeps no metrics. The launchers pass AIEM_METRICS_PORT.
   */
  readonly metrics?: { readonly port: number; readonly host?: string; readonly required?: boolean };
  /** Names the process in the metrics' `process` label (`all-in-one`, `catalogue`, ...). */
  readonly processName?: string;
}

export interface Host {
  /** `http://host:port`, known once started. */
  readonly url: string;
  /** AIEM_PUBLIC_URL, else `http://AIEM_HOST:<port>`; known once started. */
  readonly publicUrl: string;
  /** The embedded token issuer's URL (`<public URL>/oidc`); undefined with AIEM_OIDC_ISSUER. */
  readonly issuerUrl: string | undefined;
  /** `http://host:port/metrics` once started, when metrics are served. */
  readonly metricsUrl: string | undefined;
  readonly policy: Policy;
  readonly modules: readonly ServiceModule[];
  start(): Promise<void>;
  /** Stops accepting, lets in-flight requests finish, then stops the modules. */
  stop(): Promise<void>;
}

/**
 * One process of the product: the edge in front of the parts it hosts in-process and the parts
 * it reaches over the network. `npm start` hosts every part; `start:service` hosts one.
 * Public services that nobody provides answer UNIMPLEMENTED (501 over REST).
 */
export async function createHost(options: HostOptions): Promise<Host> {
  const { config } = options;
  const logger = options.logger ?? createLogger();
  const registry = options.registry ?? loadImageRegistry();
  const policy = await createPolicy(config.policyFile);
  let listeningPort: number | undefined;
  // With AIEM_PORT=0 the URL is known once listening; nothing asks for it before.
  const publicUrl = () => options.edge.publicUrl ?? defaultPublicUrl(config.host, listeningPort ?? config.port);
  // Without an outside issuer, this process is one: tokens it issues carry `<public URL>/oidc`.
  const embeddedIssuer = config.oidcIssuer
    ? undefined
    : createEmbeddedIssuer({
        dataDir: config.dataDir,
        issuer: () => embeddedIssuerUrl(publicUrl()),
        // Its access tokens must pass this authenticator.
        accessTokenTtlSeconds: Math.min(ISSUED_ACCESS_TOKEN_TTL_SECONDS, config.tokenMaxLifetimeSeconds),
      });
  const authenticator = createAuthenticator({
    dataDir: config.dataDir,
    embeddedIssuer: embeddedIssuer?.issuer,
    oidcIssuer: config.oidcIssuer,
    oidcAudience: config.oidcAudience,
    rolesClaim: config.oidcRolesClaim,
    admins: policy.admins,
    maxTokenLifetimeSeconds: config.tokenMaxLifetimeSeconds,
  });

  // What the official Python client's login functions read, all without a token: `/version`,
  // the H2O Cloud discovery records and (embedded identity) the token issuer; and the OpenAPI
  // document.
  const version = productVersion();
  const createSignInRoutes = (next: NodeHandler): NodeHandler => {
    const issuerRoutes = embeddedIssuer
      ? createOidcIssuerHandler(embeddedIssuer, logger.child({ component: "issuer" }), next)
      : next;
    const discovery = createCloudDiscoveryHandler(
      {
        publicUrl,
        issuerUrl: () => embeddedIssuer?.issuer() ?? config.oidcIssuer ?? "",
        // An outside issuer's client ids are not ours to know.
        platformClientId: embeddedIssuer ? PLATFORM_CLIENT_ID : undefined,
        version,
      },
      issuerRoutes,
    );
    return createOpenApiHandler(createVersionHandler(version, discovery));
  };

  let bus: EventBus | undefined;
  let server: EdgeServer | undefined;
  let metricsServer: MetricsServer | undefined;
  const metrics: Metrics | undefined = options.metrics
    ? createMetrics({ process: options.processName ?? "aiem" })
    : undefined;
  let pools: Partial<Record<PartName, ReplicaPool>> = {};
  let url = "";
  const modules: ServiceModule[] = [];

  let starting: Promise<void> | undefined;
  let stopRequested = false;

  async function startHost(): Promise<void> {
    // First: a metrics port another process holds stops the start before anything opened.
    if (metrics && options.metrics) {
      try {
        metricsServer = await startMetricsServer({
          metrics,
          port: options.metrics.port,
          host: options.metrics.host ?? config.host,
        });
      } catch (err) {
        if (!(err instanceof MetricsPortInUse) || options.metrics.required !== false) throw err;
        logger.warn(
          "metrics are off in this process: the default metrics port is taken by another; set AIEM_METRICS_PORT to a port of its own",
          {
            port: options.metrics.port,
          },
        );
      }
    }
    bus =
      options.bus ??
      (await createEventBus({
        natsUrl: config.natsUrl,
        prefix: options.eventsPrefix,
        logger: logger.child({ component: "events" }),
      }));
    // What modules publish and consume gets spans and counts; the bus itself stays the caller's.
    const modulesBus = instrumentEventBus(bus, { metrics });
    const openDatabase = (schema: string) =>
      createDatabase({
        url: config.databaseUrl,
        dataDir: config.dataDir,
        schema: `${schema}${options.schemaSuffix ?? ""}`,
      });
    for (const factory of options.modules) {
      if (stopRequested) return;
      const deps: ServiceDeps = {
        config,
        bus: modulesBus,
        policy,
        authenticator,
        logger: logger.child({ service: factory.name }),
        openDatabase,
        ...(metrics ? { metrics } : {}),
      };
      modules.push(await factory.create(deps));
    }
    for (const module of modules) {
      if (stopRequested) return;
      await module.start();
    }

    const local = (router: ConnectRouter) => {
      for (const module of modules) module.register(router);
    };
    const probe = createConnectRouter();
    local(probe);
    const served = new Set(probe.handlers.map((h) => h.service.typeName));
    // A part in other processes may have several replicas (comma-separated URLs): one pool each.
    pools = Object.fromEntries(
      Object.entries(options.remotes ?? {}).map(([name, base]) => [name, createReplicaPool(base)]),
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
        createObservabilityInterceptor({ metrics, holder: currentRequestTrace }),
        createAuthInterceptor(authenticator, {
          isPublicService: (name) => name.startsWith("grpc.reflection.") || name.startsWith(INTERNAL_PACKAGE_PREFIX),
        }),
      ],
      checkCredentials: async (header) => {
        await authenticator.authenticate(header.get("authorization"));
      },
      cors: { allowedOrigins: options.edge.corsOrigins },
      bodyLimitBytes: options.edge.bodyLimitBytes,
      logger,
      fallback: createHealthHandler(
        checks,
        createSignInRoutes(createHttpRoutesHandler(httpRoutes, options.fallback ?? notFound)),
      ),
    });
    const front = options.front ?? true;
    const ticketKey = front ? await loadTicketKey(config.dataDir, options.edge.internalKey) : undefined;
    const content = {
      domain: () => contentDomain(config, publicUrl()),
      pathUrls: config.pathUrls ?? false,
      routes: httpRoutes,
      tickets: { key: () => ticketKey, ledger: createTicketLedger() },
    };
    if (front && content.pathUrls) {
      logger.warn(
        "AIEM_PATH_URLS is set: engine UIs and sandbox ports are also served at paths of the API's origin, where a page they serve runs with that origin's rights",
      );
    }
    if (stopRequested) return;
    // A part behind the edge takes the paths as they come: the edge has applied the origin rules.
    server = createEdgeServer(
      withRequestLog(
        front ? createContentOriginHandler(content, handler) : handler,
        logger.child({ component: "edge" }),
      ),
    );
    server.http1.on("upgrade", front ? createContentOriginUpgrade(content) : createPathUpgrade(httpRoutes));
    const address = await server.listen(config.port, config.host);
    listeningPort = address.port;
    const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
    url = `http://${shownHost}:${address.port}`;
    logger.info("listening", {
      url,
      modules: modules.map((m) => m.name),
      remotes: options.remotes ?? {},
      ...(metricsServer ? { metrics: metricsServer.url } : {}),
    });
  }

  const host: Host = {
    get url() {
      return url;
    },
    get publicUrl() {
      return publicUrl();
    },
    get issuerUrl() {
      return embeddedIssuer?.issuer();
    },
    get metricsUrl() {
      return metricsServer?.url;
    },
    policy,
    modules,
    start() {
      starting ??= startHost();
      return starting;
    },
    async stop() {
      // A stop while the host starts (a SIGTERM during start-up) waits for the start to settle,
      // which then leaves out what is left of it, and undoes what it did: stopping half-way would
      // leave running what the start went on to open, the server first.
      stopRequested = true;
      await starting?.catch(() => undefined);
      await server?.close();
      await metricsServer?.close();
      for (const pool of Object.values(pools)) pool.close();
      for (const module of [...modules].reverse()) {
        await module.stop().catch((err: unknown) => logger.error("module stop failed", { module: module.name, err }));
      }
      if (!options.bus) await bus?.close();
    },
  };
  return host;
}

/** The answer for a path that nothing serves: a google.rpc.Status NOT_FOUND. */
export const notFound: NodeHandler = (_req, res) => {
  res.writeHead(404, { "content-type": "application/json" });
  res.end(JSON.stringify({ code: 5, message: "not found", details: [] }));
};
