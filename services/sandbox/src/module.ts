// The sandbox service as a ServiceModule: sandbox engines and, inside them, files, processes,
// ports, drive and secure-store transfers and metrics, in its own schema `sandbox`; its
// sandboxes run in the local runtime (one bubblewrap-isolated agent each) on this machine, or as
// pods in a cluster, and their ports are served under `/sandboxes/` beside the RPCs.
import * as fs from "node:fs";
import * as path from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { loadSessionKey, replicaUrlOf } from "@aiem/kit/config";
import { acquireDirectoryLock, type Database, type DirectoryLock } from "@aiem/kit/db";
import type { Logger } from "@aiem/kit/logger";
import {
  createReplicaRegistry,
  createServiceCore,
  createStartOnce,
  detachBytesField,
  openServiceStore,
  type ServiceCoreState,
  type ServiceDeps,
  type ServiceModule,
  type ServiceStore,
} from "@aiem/kit/server";
import { createCatalogueReadModel, type CatalogueReadModel } from "@aiem/kit/catalogue-view";
import { DriveService } from "@aiem/proto/enginemanager/sandbox/v1/drive_service_pb.js";
import {
  FilesystemService,
  ReadFileResponseSchema,
  ReadFileStreamResponseSchema,
} from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import { MetricsService } from "@aiem/proto/enginemanager/sandbox/v1/metrics_service_pb.js";
import { PortService } from "@aiem/proto/enginemanager/sandbox/v1/port_service_pb.js";
import { ProcessService } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { SandboxEngineService } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_service_pb.js";
import { SecureStoreService } from "@aiem/proto/enginemanager/sandbox/v1/secure_store_service_pb.js";
import type { SandboxSettings } from "./config.js";
import { createFileTransferRoute } from "./file-transfer.js";
import { createChangeHub, createLifecycle, type Lifecycle } from "./lifecycle.js";
import { sandboxMigrations } from "./migrations.js";
import { createPortProxy } from "./port-proxy.js";
import type { SecretResolver } from "./process-definition.js";
import type { LocalSandboxRuntime } from "./runtime/index.js";
import { addSandboxGauges } from "./sandbox-gauges.js";
import { createSandboxHandlers, registerSandboxHandlers } from "./sandbox-handlers.js";
import { chooseSandboxRuntime } from "./sandbox-runtime-choice.js";

export const SANDBOX_SCHEMA = "sandbox";

export const SANDBOX_SERVICES: readonly DescService[] = [
  SandboxEngineService,
  FilesystemService,
  ProcessService,
  PortService,
  DriveService,
  SecureStoreService,
  MetricsService,
];

export interface SandboxModuleDeps extends ServiceDeps {
  readonly sandboxConfig: SandboxSettings;
  /**
   * Resolves secret values for secret environment variables and RevealSecretToFile: the
   * catalogue module's `resolveSecretValue` when the catalogue runs in this process, else its
   * internal API (the host wires either). Without it those calls fail with FAILED_PRECONDITION.
   */
  readonly secrets?: SecretResolver;
  /** Outbox poll interval in ms (default 250); tests use less. */
  readonly outboxPollInterval?: number;
  /**
   * A runtime made by the caller (tests); otherwise, by `sandboxConfig.runtime`, pods in a cluster
   * or the local runtime under the data directory.
   */
  readonly runtime?: LocalSandboxRuntime;
}

export interface SandboxModule extends ServiceModule {
  /** The database once started (for hosts' health checks and tests). */
  readonly database: Database | undefined;
  /** The runtime running this module's sandboxes. */
  readonly runtime: LocalSandboxRuntime;
  /** The local copy of the catalogue once started. */
  readonly catalogue: CatalogueReadModel | undefined;
  /** Reconciles a sandbox (by uid) now; resolves when that pass is done. For tests and tools. */
  reconcile(uid: string): Promise<void>;
  /** Publishes every pending outbox event now; for tests and orderly shutdowns. */
  flushEvents(): Promise<number>;
}

export function createSandboxModule(deps: SandboxModuleDeps): SandboxModule {
  const settings = deps.sandboxConfig;
  const logger = deps.logger.child({ service: "sandbox" });
  const state: ServiceCoreState = {};
  const context = createServiceCore({ label: "sandbox service", policy: deps.policy, logger, state });
  const hub = createChangeHub();
  let lifecycle: Lifecycle | undefined;
  let sessionKey: Promise<Uint8Array> | undefined;
  const internalKey = () => (sessionKey ??= loadSessionKey(deps.config.dataDir, settings.internalKey));
  const chosen = chooseSandboxRuntime(deps, (id, exit) => lifecycle?.agentEnded(id, exit.reason), internalKey);
  const { runtime, kubernetes } = chosen;
  let followRunning: ((sandboxUid: string) => Promise<void>) | undefined;
  const replicas = createReplicaRegistry({
    database: () => state.database,
    id: chosen.placement,
    url: () => replicaUrlOf(deps.config),
    logger,
  });
  const life = createLifecycle({
    context,
    runtime,
    logger,
    hub,
    replicas,
    intervalMs: settings.reconcileIntervalMs ?? 1_000,
    // A warm pod would need its image before the create names it.
    warmPoolSize: kubernetes ? 0 : settings.warmPoolSize,
    earlyStart: !kubernetes,
    stopSandboxesOnStop: settings.stopWithService === true,
    onAdopted: (uid) => followRunning?.(uid),
  });
  lifecycle = life;
  let catalogue: CatalogueReadModel | undefined;
  const proxy = createPortProxy({
    context,
    lifecycle: life,
    authenticator: deps.authenticator,
    logger,
    sessionKey: internalKey,
  });
  const fileTransfer = createFileTransferRoute({ context, lifecycle: life, authenticator: deps.authenticator, logger });
  const handlers = createSandboxHandlers({
    context,
    lifecycle: life,
    runtime,
    hub,
    settings,
    config: deps.config,
    secrets: deps.secrets,
    catalogue: () => catalogue,
    publicUrl: () => publicUrlOf(deps),
    closeConnections: proxy.closeConnections,
    portObjects: chosen.portObjects,
    logger,
  });
  followRunning = handlers.followRunning;

  let store: ServiceStore | undefined;
  let ready = false;
  let placementLock: DirectoryLock | undefined;
  let removeGauges: Array<(() => void) | undefined> = [];

  async function start(): Promise<void> {
    // Two replicas in one data directory would be one placement: each would take the other's
    // sandboxes for its own. The second stops with a clear error instead. (Pods keep nothing here.)
    if (!kubernetes) {
      await fs.promises.mkdir(runtime.dataDir, { recursive: true });
      placementLock = acquireDirectoryLock(path.join(runtime.dataDir, "sandboxes"), "the sandboxes of this directory");
    }
    store = await openSandboxStore(deps, state, logger);
    const db = store.database;
    catalogue = createCatalogueView(deps, logger);
    await catalogue.ready;
    // On Kubernetes, the informers' first lists: the lifecycle's first sweep must see the cluster as it is.
    if (kubernetes) await runtime.prepare();
    else prepareRuntime(runtime, logger);
    await life.start();
    removeGauges = addSandboxGauges(deps.metrics, db, life);
    // Known to the other replicas once its sandboxes run again (until then they answer UNAVAILABLE).
    await replicas.start();
    ready = true;
    logger.info("sandbox service started", { schema: db.schema, isolation: runtime.capabilities.isolation });
  }

  const once = createStartOnce(start);
  return {
    name: "sandbox",
    services: SANDBOX_SERVICES,
    httpRoutes: [proxy.route, fileTransfer],
    register(router: ConnectRouter) {
      registerSandboxHandlers(router, handlers, { logger, label: "sandbox" });
      // File contents go out as they are over binary framings (kit/server/detached-bytes.ts).
      detachBytesField(router, FilesystemService.method.readFile, ReadFileResponseSchema.field.content);
      detachBytesField(router, FilesystemService.method.readFileStream, ReadFileStreamResponseSchema.field.data);
    },
    start: once.start,
    async stop() {
      ready = false;
      for (const remove of removeGauges) remove?.();
      removeGauges = [];
      await life.stop();
      await replicas.stop();
      placementLock?.release();
      placementLock = undefined;
      state.database = undefined;
      state.afterWrite = undefined;
      await catalogue?.stop();
      catalogue = undefined;
      once.reset();
      const closing = store;
      store = undefined;
      await closing?.close();
    },
    isReady: () => ready,
    get database() {
      return state.database;
    },
    runtime,
    get catalogue() {
      return catalogue;
    },
    reconcile: (uid) => life.kick(uid),
    async flushEvents() {
      return store ? store.relay.flush() : 0;
    },
  };
}

/** Opens the module's schema and outbox, and hands them to the service core (`state`). */
async function openSandboxStore(
  deps: SandboxModuleDeps,
  state: ServiceCoreState,
  logger: Logger,
): Promise<ServiceStore> {
  const opened = await openServiceStore({
    deps,
    schema: SANDBOX_SCHEMA,
    migrations: sandboxMigrations,
    pageTokenKey: deps.sandboxConfig.pageTokenKey,
    logger,
    outboxPollInterval: deps.outboxPollInterval,
  });
  state.tokens = opened.tokens;
  state.afterWrite = () => opened.relay.wake();
  state.database = opened.database;
  return opened;
}

/** The local copy of the catalogue's sandbox images and templates (`ready` once it caught up). */
function createCatalogueView(deps: SandboxModuleDeps, logger: Logger): CatalogueReadModel {
  return createCatalogueReadModel({
    name: "sandbox-catalogue-view",
    bus: deps.bus,
    kinds: ["sandboxEngineImages", "sandboxEngineTemplates"],
    logger,
  });
}

/**
 * Says what keeps sandboxes from being created or isolated, and bundles the agent now rather
 * than in the first create. Whatever then keeps every sandbox from starting is said once, here,
 * and on each sandbox it fails.
 */
function prepareRuntime(runtime: LocalSandboxRuntime, logger: Logger): void {
  if (runtime.capabilities.isolation === "unavailable") {
    logger.warn(
      "sandboxes cannot be created: bubblewrap is missing (install the Debian package bubblewrap, or set AIEM_SANDBOX_UNCONFINED=true to run them without isolation)",
    );
    return;
  }
  if (runtime.capabilities.isolation === "unconfined")
    logger.warn("sandboxes run UNCONFINED, as plain host processes (AIEM_SANDBOX_UNCONFINED=true)");
  runtime.prepare().then(
    () => {
      const blocker = runtime.startBlocker();
      if (blocker) logger.warn(`sandboxes cannot start: ${blocker}`);
    },
    (err: unknown) =>
      logger.error("could not prepare the sandbox agent", {
        error: err instanceof Error ? err.message : String(err),
      }),
  );
}

/** The service's public base URL (without a trailing slash): the configured one, or its own address. */
function publicUrlOf(deps: SandboxModuleDeps): string {
  const settings = deps.sandboxConfig;
  const value = typeof settings.publicUrl === "function" ? settings.publicUrl() : settings.publicUrl;
  return (value ?? `http://${deps.config.host}:${deps.config.port}`).replace(/\/+$/, "");
}
