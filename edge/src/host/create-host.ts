import type { FileRegistry } from "@bufbuild/protobuf";
import { createPolicy, type Policy } from "@aiem/kit/authz";
import { defaultPublicUrl, type CommonConfig } from "@aiem/kit/config";
import type { EventBus } from "@aiem/kit/events";
import { createLogger, type Logger } from "@aiem/kit/logger";
import {
  createMetrics,
  MetricsPortInUseError,
  startMetricsServer,
  type Metrics,
  type MetricsServer,
} from "@aiem/kit/observability";
import type { ServiceDeps, ServiceModule } from "@aiem/kit/server";
import { loadImageRegistry } from "../registry.js";
import type { NodeHandler } from "../transcoder/transcoder.js";
import type { EdgeConfig } from "./edge-config.js";
import { createHostIdentity } from "./host-identity.js";
import { openModules } from "./host-modules.js";
import { serveHost } from "./host-server.js";
import type { HostSetup, HostState } from "./host-state.js";
import type { PartName } from "./parts.js";

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
  const state: HostState = {
    modules: [],
    bus: undefined,
    server: undefined,
    metricsServer: undefined,
    pools: {},
    url: "",
    listeningPort: undefined,
    stopRequested: false,
  };
  const publicUrl = () => options.edge.publicUrl ?? defaultPublicUrl(config.host, state.listeningPort ?? config.port);
  const setup: HostSetup = {
    options,
    config,
    logger,
    registry,
    policy,
    identity: createHostIdentity(config, policy, publicUrl, logger),
    metrics: options.metrics ? createMetrics({ process: options.processName ?? "aiem" }) : undefined,
    publicUrl,
  };
  let starting: Promise<void> | undefined;
  return {
    get url() {
      return state.url;
    },
    get publicUrl() {
      return publicUrl();
    },
    get issuerUrl() {
      return setup.identity.embeddedIssuer?.issuer();
    },
    get metricsUrl() {
      return state.metricsServer?.url;
    },
    policy,
    modules: state.modules,
    start() {
      starting ??= startHost(setup, state);
      return starting;
    },
    async stop() {
      // A stop while the host starts (a SIGTERM during start-up) waits for the start to settle,
      // which then leaves out what is left of it, and undoes what it did: stopping half-way would
      // leave running what the start went on to open, the server first.
      state.stopRequested = true;
      await starting?.catch(() => undefined);
      await stopHost(setup, state);
    },
  };
}

async function startHost(setup: HostSetup, state: HostState): Promise<void> {
  const { options, metrics } = setup;
  // First: a metrics port another process holds stops the start before anything opened.
  if (metrics && options.metrics)
    state.metricsServer = await startHostMetrics(metrics, options.metrics, setup.config.host, setup.logger);
  if (!(await openModules(setup, state))) return;
  await serveHost(setup, state, notFound);
}

async function stopHost({ options, logger }: HostSetup, state: HostState): Promise<void> {
  await state.server?.close();
  await state.metricsServer?.close();
  for (const pool of Object.values(state.pools)) pool.close();
  for (const module of [...state.modules].reverse()) {
    await module.stop().catch((err: unknown) => logger.error("module stop failed", { module: module.name, err }));
  }
  if (!options.bus) await state.bus?.close();
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
    if (!(err instanceof MetricsPortInUseError) || wanted.required !== false) throw err;
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
