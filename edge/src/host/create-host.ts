import type { FileRegistry } from "@bufbuild/protobuf";
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
import { createLogger, type Logger } from "@aiem/kit/logger";
import {
  createMetrics,
  instrumentEventBus,
  MetricsPortInUse,
  startMetricsServer,
  type Metrics,
  type MetricsServer,
} from "@aiem/kit/observability";
import type { ServiceDeps, ServiceModule } from "@aiem/kit/server";
import { loadImageRegistry } from "../registry.js";
import { createEdgeServer, type EdgeServer } from "../server/front-door.js";
import type { NodeHandler } from "../transcoder/transcoder.js";
import type { EdgeConfig } from "./edge-config.js";
import { createContentOriginHandler, createContentOriginUpgrade, createPathUpgrade } from "./content-origins.js";
import { createHostIdentity } from "./host-identity.js";
import { createHostServices } from "./host-services.js";
import type { ReplicaPool } from "./replica-pool.js";
import type { PartName } from "./parts.js";
import { withRequestLog } from "./request-log.js";

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
  const identity = createHostIdentity(config, policy, publicUrl, logger);
  const { embeddedIssuer } = identity;

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
    if (metrics && options.metrics)
      metricsServer = await startHostMetrics(metrics, options.metrics, config.host, logger);
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
        authenticator: identity.authenticator,
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

    const services = createHostServices({
      registry,
      modules,
      remotes: options.remotes ?? {},
      identity,
      edge: options.edge,
      metrics,
      logger,
      fallback: options.fallback ?? notFound,
    });
    pools = services.pools;
    const { handler, httpRoutes } = services;
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

/**
 * Serves Prometheus metrics on a port of their own, or (when the port is the default one, taken by
 * another process, and metrics are not required) none.
 */
async function startHostMetrics(
  metrics: Metrics,
  wanted: NonNullable<HostOptions["metrics"]>,
  defaultHost: string,
  logger: Logger,
): Promise<MetricsServer | undefined> {
  try {
    return await startMetricsServer({ metrics, port: wanted.port, host: wanted.host ?? defaultHost });
  } catch (err) {
    if (!(err instanceof MetricsPortInUse) || wanted.required !== false) throw err;
    logger.warn(
      "metrics are off in this process: the default metrics port is taken by another; set AIEM_METRICS_PORT to a port of its own",
      {
        port: wanted.port,
      },
    );
    return undefined;
  }
}

/** The answer for a path that nothing serves: a google.rpc.Status NOT_FOUND. */
export const notFound: NodeHandler = (_req, res) => {
  res.writeHead(404, { "content-type": "application/json" });
  res.end(JSON.stringify({ code: 5, message: "not found", details: [] }));
};
