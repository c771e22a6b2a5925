// The engine service as a ServiceModule: DAI, H2O and notebook engines and the mixed Engine list
// in its own schema `engine`, the catalogue read model it validates against, the reconciler and
// runtime that run the engines, and the `/engines/<uid>/` HTTP route to their web servers.
import * as fs from "node:fs";
import path from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { sql } from "kysely";
import { loadSessionKey, loadTicketKey, replicaUrlOf } from "@aiem/kit/config";
import { acquireDirectoryLock, type Database, type DirectoryLock } from "@aiem/kit/db";
import {
  createReplicaRegistry,
  createStartOnce,
  openServiceStore,
  registerGuarded,
  type ServiceDeps,
  type ServiceModule,
  type ServiceStore,
} from "@aiem/kit/server";
import { createCatalogueReadModel, type CatalogueReadModel } from "@aiem/kit/catalogue-view";
import { DAILicenseService } from "@aiem/proto/enginemanager/v1/dai_license_service_pb.js";
import { EngineService } from "@aiem/proto/enginemanager/v1/engine_service_pb.js";
import { createActivityTracker } from "./activity.js";
import type { EngineSettings } from "./config.js";
import { createServiceContext, type ServiceState } from "./context.js";
import { createDAILicenseHandlers } from "./dai-license.js";
import { createEngineHandlers } from "./engine-service.js";
import { createEngineListHandlers } from "./engines-list.js";
import { DAI, ENGINE_KINDS, H2O, NOTEBOOK } from "./kinds.js";
import { engineMigrations } from "./migrations.js";
import { createLogStreamRoute } from "./log-stream.js";
import { createEngineProxy, createNameRoute, type EngineHttpRoute } from "./proxy.js";
import { createReconciler, type Reconciler } from "./reconciler.js";
import { h2oServerOf } from "./runtime/h2o-server.js";
import { createLocalRuntime, findOnPath } from "./runtime/local-runtime.js";
import type { EngineRuntime } from "./runtime/runtime.js";
import { loadByName, loadByUid } from "./store.js";

export const ENGINE_SCHEMA = "engine";

export const ENGINE_SERVICES: readonly DescService[] = [
  ...ENGINE_KINDS.map((k) => k.service),
  EngineService,
  DAILicenseService,
];

export interface EngineModuleDeps extends ServiceDeps {
  readonly engineConfig: EngineSettings;
  /** Outbox poll interval in ms (default 250); tests use less. */
  readonly outboxPollInterval?: number;
  /** A runtime to use instead of the one the settings name (tests). */
  readonly runtime?: EngineRuntime;
}

export interface EngineModule extends ServiceModule {
  readonly httpRoutes: readonly EngineHttpRoute[];
  /** The database once started (for hosts' health checks and tests). */
  readonly database: Database | undefined;
  readonly runtime: EngineRuntime | undefined;
  readonly catalogue: CatalogueReadModel | undefined;
  /** Publishes every pending outbox event now; for tests and orderly shutdowns. */
  flushEvents(): Promise<number>;
  /** Writes pending activity from engine URLs now. */
  flushActivity(): Promise<void>;
  /** Makes the reconciler look for work now. */
  reconcileNow(): void;
}

/** `http://<host>:<port>` of the process, for engine URLs when AIEM_PUBLIC_URL is unset. */
function defaultPublicUrl(host: string, port: number): string {
  const shown =
    host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

export function createEngineModule(deps: EngineModuleDeps): EngineModule {
  const logger = deps.logger.child({ service: "engine" });
  const settings = deps.engineConfig;
  const state: ServiceState = {};
  const activity = createActivityTracker({ database: () => state.database, flushMs: settings.activityFlushMs, logger });
  const ctx = createServiceContext({
    policy: deps.policy,
    logger,
    settings,
    activity,
    state,
    defaultPublicUrl: defaultPublicUrl(deps.config.host, deps.config.port),
    content: deps.config,
  });
  let sessionKey: Promise<Uint8Array> | undefined;
  const proxy = createEngineProxy({
    authenticator: deps.authenticator,
    policy: deps.policy,
    logger,
    runtime: () => state.runtime,
    activity,
    lookup: async (uid) => (state.database ? loadByUid(state.database.db, uid) : undefined),
    servedAt: (row) => ctx.servedAt(row),
    sessionKey: () => (sessionKey ??= loadSessionKey(deps.config.dataDir, settings.internalKey)),
  });
  const byName = createNameRoute(proxy, async (name) => {
    const row = state.database ? await loadByName(state.database.db, name) : undefined;
    return row?.type === "h2oEngines" || row?.type === "daiEngines" ? row.uid : undefined;
  });
  const logStream = createLogStreamRoute({
    authenticator: deps.authenticator,
    policy: deps.policy,
    logger,
    runtime: () => state.runtime,
    lookup: async (name) => (state.database ? loadByName(state.database.db, name) : undefined),
    servedAt: (row) => ctx.servedAt(row),
  });
  let store: ServiceStore | undefined;
  let reconciler: Reconciler | undefined;
  let removeGauges: Array<(() => void) | undefined> = [];
  let placementLock: DirectoryLock | undefined;
  let ready = false;

  async function start(): Promise<void> {
    store = await openServiceStore({
      deps,
      schema: ENGINE_SCHEMA,
      migrations: engineMigrations,
      pageTokenKey: settings.pageTokenKey,
      logger,
      outboxPollInterval: deps.outboxPollInterval,
    });
    const opened = store;
    const { database: db, relay } = opened;
    const catalogue = createCatalogueReadModel({
      name: "engine-catalogue-view",
      bus: deps.bus,
      kinds: [
        "daiEngineProfiles",
        "h2oEngineProfiles",
        "notebookEngineProfiles",
        "daiEngineVersions",
        "h2oEngineVersions",
        "notebookEngineImages",
      ],
      logger,
    });
    await catalogue.ready;
    let runtime = deps.runtime;
    if (!runtime && settings.runtime === "kubernetes") {
      // Loaded only for this runtime: the client and its dependencies cost every other process memory.
      const { KubeConfig } = await import("@kubernetes/client-node");
      const { createKubernetesRuntime } = await import("./runtime/kubernetes/kubernetes-runtime.js");
      const config = new KubeConfig();
      config.loadFromDefault();
      runtime = await createKubernetesRuntime({ config, namespace: settings.kubernetesNamespace ?? "default" });
    }
    if (!runtime) {
      // One engine service per directory: a second would be the same placement and adopt (or
      // stop) the first one's engines. It stops with a clear error instead.
      await fs.promises.mkdir(deps.config.dataDir, { recursive: true });
      placementLock = acquireDirectoryLock(path.join(deps.config.dataDir, "engines"), "the engines of this directory");
      const jupyter =
        settings.jupyterCommand === "none"
          ? undefined
          : await findOnPath(settings.jupyterCommand ?? "jupyter-notebook");
      if (settings.jupyterCommand && settings.jupyterCommand !== "none" && !jupyter) {
        logger.warn("AIEM_JUPYTER_COMMAND is not an executable; notebook engines run the stand-in server", {
          command: settings.jupyterCommand,
        });
      }
      runtime = createLocalRuntime({
        root: path.join(deps.config.dataDir, "engines"),
        jupyterCommand: jupyter,
        h2o: h2oServerOf(settings),
        startTimeoutMs: settings.startTimeoutMs,
        stopTimeoutMs: settings.stopTimeoutMs,
        logger,
      });
    }
    state.ticketKey = await loadTicketKey(deps.config.dataDir, settings.internalKey);
    state.tokens = opened.tokens;
    state.catalogue = catalogue;
    state.runtime = runtime;
    state.database = db;
    state.replicas = createReplicaRegistry({
      database: () => state.database,
      id: runtime.placement,
      url: () => replicaUrlOf(deps.config),
      logger,
    });
    await state.replicas.start();
    activity.start();
    reconciler = createReconciler({
      database: db,
      runtime,
      logger,
      coreConfig: settings.daiCoreConfig,
      intervalMs: settings.reconcileIntervalMs,
      checkIntervalMs: settings.checkIntervalMs,
      startTimeoutMs: settings.startTimeoutMs,
      context: ctx.presentContext,
      pendingActivity: activity.latest,
      onEvents: () => relay.wake(),
    });
    await reconciler.start();
    const started = reconciler;
    removeGauges = [
      deps.metrics?.gauge({
        name: "aiem_engines",
        help: "Engines by kind and state (the whole deployment's, as every engine replica sees the same database)",
        labelNames: ["kind", "state"] as const,
        async collect(set) {
          const r = await sql<{ type: string; state: string; n: string | number }>`
            select type, state, count(*) as n from engines group by type, state`.execute(db.db);
          for (const row of r.rows) set({ kind: row.type, state: row.state }, Number(row.n));
        },
      }),
      deps.metrics?.gauge({
        name: "aiem_engine_reconciler_due",
        help: "Engines whose next reconcile step is due and not yet taken by a reconciler",
        async collect(set) {
          const r = await sql<{ n: string | number }>`
            select count(*) as n from engines
             where next_reconcile_at <= now() and (lease_until is null or lease_until < now())`.execute(db.db);
          set({}, Number(r.rows[0]?.n ?? 0));
        },
      }),
      deps.metrics?.gauge({
        name: "aiem_engine_reconciler_in_flight",
        help: "Reconcile steps this process is working on",
        collect: (set) => set({}, started.inFlight),
      }),
    ];
    state.afterWrite = () => {
      relay.wake();
      reconciler?.wake();
    };
    ready = true;
    logger.info("engine service started", { schema: db.schema, runtime: runtime.placement });
  }

  function register(router: ConnectRouter): void {
    const options = { logger, label: "engine" };
    registerGuarded(router, DAI.service, createEngineHandlers(ctx, DAI), options);
    registerGuarded(router, H2O.service, createEngineHandlers(ctx, H2O), options);
    registerGuarded(router, NOTEBOOK.service, createEngineHandlers(ctx, NOTEBOOK), options);
    registerGuarded(router, EngineService, createEngineListHandlers(ctx), options);
    registerGuarded(router, DAILicenseService, createDAILicenseHandlers(), options);
  }
  const once = createStartOnce(start);

  return {
    name: "engine",
    services: ENGINE_SERVICES,
    httpRoutes: [proxy, byName, logStream],
    register,
    start: once.start,
    async stop() {
      ready = false;
      for (const remove of removeGauges) remove?.();
      removeGauges = [];
      state.afterWrite = undefined;
      await reconciler?.stop();
      reconciler = undefined;
      await state.replicas?.stop();
      state.replicas = undefined;
      await activity.stop();
      await state.catalogue?.stop();
      state.catalogue = undefined;
      await state.runtime?.close();
      state.runtime = undefined;
      placementLock?.release();
      placementLock = undefined;
      state.database = undefined;
      once.reset();
      const closing = store;
      store = undefined;
      await closing?.close();
    },
    isReady: () => ready,
    get database() {
      return state.database;
    },
    get runtime() {
      return state.runtime;
    },
    get catalogue() {
      return state.catalogue;
    },
    async flushEvents() {
      return store ? store.relay.flush() : 0;
    },
    flushActivity: () => activity.flush(),
    reconcileNow() {
      reconciler?.wake();
    },
  };
}
