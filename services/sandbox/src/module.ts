// The sandbox service as a ServiceModule: sandbox engines and, inside them, files, processes,
// ports, drive and secure-store transfers and metrics, in its own schema `sandbox`; its
// sandboxes run in the local runtime (one bubblewrap-isolated agent each) on this machine, or as
// pods in a cluster, and their ports are served under `/sandboxes/` beside the RPCs.
import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { loadSessionKey, replicaUrlOf } from "@aiem/kit/config";
import type { Database } from "@aiem/kit/db";
import type { Logger } from "@aiem/kit/logger";
import {
  createReplicaRegistry,
  createServiceCore,
  detachBytesField,
  openServiceStore,
  type ServiceCoreState,
  type ServiceDeps,
  type ServiceModule,
  type ServiceStore,
} from "@aiem/kit/server";
import type { CatalogueReadModel } from "@aiem/kit/catalogue-view";
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
import { createModuleRun } from "./module-run.js";
import { createPortProxy } from "./port-proxy.js";
import type { SecretResolver } from "./process-definition.js";
import type { LocalSandboxRuntime } from "./runtime/index.js";
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
    sharedPlacement: kubernetes !== undefined,
    stopSandboxesOnStop: settings.stopWithService === true,
    onAdopted: (uid) => followRunning?.(uid),
  });
  lifecycle = life;
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
    catalogue: () => run.catalogue,
    publicUrl: () => publicUrlOf(deps),
    closeConnections: proxy.closeConnections,
    portObjects: chosen.portObjects,
    logger,
  });
  followRunning = handlers.followRunning;

  const run = createModuleRun({
    deps,
    state,
    logger,
    runtime,
    kubernetes: kubernetes !== undefined,
    life,
    replicas,
    openStore: () => openSandboxStore(deps, state, logger),
  });
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
    start: run.start,
    stop: run.stop,
    isReady: () => run.ready,
    get database() {
      return state.database;
    },
    runtime,
    get catalogue() {
      return run.catalogue;
    },
    reconcile: (uid) => life.kick(uid),
    async flushEvents() {
      return run.store ? run.store.relay.flush() : 0;
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

/** The service's public base URL (without a trailing slash): the configured one, or its own address. */
function publicUrlOf(deps: SandboxModuleDeps): string {
  const settings = deps.sandboxConfig;
  const value = typeof settings.publicUrl === "function" ? settings.publicUrl() : settings.publicUrl;
  return (value ?? `http://${deps.config.host}:${deps.config.port}`).replace(/\/+$/, "");
}
