// The sandbox service as a ServiceModule: sandbox engines and, inside them, files, processes,
// ports, drive and secure-store transfers and metrics, in its own schema `sandbox`; its
// sandboxes run in the local runtime (one bubblewrap-isolated agent each) on this machine, and
// their ports are served under `/sandboxes/` beside the RPCs.
import { createHmac } from "node:crypto";
import * as fs from "node:fs";
import { hostname } from "node:os";
import * as path from "node:path";
import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { sql } from "kysely";
import { createContentUrls, loadSessionKey, replicaUrlOf } from "@aiem/kit/config";
import { acquireDirectoryLock, type Database, type DirectoryLock } from "@aiem/kit/db";
import {
  createReplicaRegistry,
  createServiceCore,
  createStartOnce,
  detachBytesField,
  openServiceStore,
  registerGuarded,
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
import { createDriveHandlers } from "./drive-service.js";
import { createFilesystemHandlers } from "./filesystem-service.js";
import { createChangeHub, createLifecycle, type Lifecycle } from "./lifecycle.js";
import { sandboxMigrations } from "./migrations.js";
import { createFileStreamHandlers } from "./file-streams.js";
import { createFileTransferRoute } from "./file-transfer.js";
import { createPortProxy } from "./port-proxy.js";
import { createPortHandlers, createPortUrls } from "./port-service.js";
import { createProcessHandlers, type SecretResolver } from "./process-service.js";
import { createMetricsHandlers } from "./metrics-service.js";
import { createLocalSandboxRuntime, type LocalSandboxRuntime, type SandboxExit } from "./runtime/index.js";
import { createSandboxEngineHandlers } from "./sandbox-engine-service.js";
import { createPodSandboxRuntime } from "./kubernetes/pod-sandbox-runtime.js";
import type { SandboxKubernetesSettings } from "./config.js";

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
  // Derived, not stored: every replica (sharing AIEM_INTERNAL_KEY) computes the same one.
  const agentToken = async (uid: string) =>
    createHmac("sha256", await internalKey())
      .update(`sandbox-agent:${uid}`)
      .digest("base64url");
  const onExit = (runtimeId: string, exit: SandboxExit) => lifecycle?.agentEnded(runtimeId, exit.reason);
  const kubernetes = !deps.runtime && settings.runtime === "kubernetes" ? settings.kubernetes : undefined;
  const pods = kubernetes
    ? createPodSandboxRuntime(() => connectCluster(kubernetes, settings.outputLimitBytes, agentToken), {
        dataDir: deps.config.dataDir,
        onExit,
        agentToken,
      })
    : undefined;
  const runtime =
    deps.runtime ??
    pods ??
    createLocalSandboxRuntime({
      dataDir: deps.config.dataDir,
      unconfined: settings.unconfined,
      ...(settings.bwrapPath ? { bwrapPath: settings.bwrapPath } : {}),
      cacheDir: settings.agentCacheDir ?? path.join(deps.config.dataDir, "agent-cache"),
      outputLimitBytes: settings.outputLimitBytes,
      keepAliveMs: settings.keepAliveMs ?? 5_000,
      // Confined sandboxes outlive the service and are adopted by its next start; unconfined
      // ones cannot (the runtime ignores the option for them; see docs/adr/0076).
      keepRunning: true,
      ...(settings.maxTotalStorageBytes !== undefined ? { maxTotalStorageBytes: settings.maxTotalStorageBytes } : {}),
      ...(settings.maxTotalProcesses !== undefined ? { maxTotalProcesses: settings.maxTotalProcesses } : {}),
      onExit,
    });
  let followRunning: ((sandboxUid: string) => Promise<void>) | undefined;
  // The runtime's data directory is this host's, so it names the replica (and stays its name
  // across restarts, which is how a replica finds its sandboxes again). On Kubernetes every
  // replica sees every pod: they share one placement, and none is pinned to a replica.
  const replicas = createReplicaRegistry({
    database: () => state.database,
    id: kubernetes ? `kubernetes:${kubernetes.namespace}` : `local:${hostname()}:${runtime.dataDir}`,
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
  const access = { context, lifecycle: life };
  const publicUrl = () => {
    const value = typeof settings.publicUrl === "function" ? settings.publicUrl() : settings.publicUrl;
    return (value ?? `http://${deps.config.host}:${deps.config.port}`).replace(/\/+$/, "");
  };
  const proxy = createPortProxy({
    context,
    lifecycle: life,
    authenticator: deps.authenticator,
    logger,
    sessionKey: internalKey,
  });
  const fileTransfer = createFileTransferRoute({ ...access, authenticator: deps.authenticator, logger });
  const handlers = {
    sandboxEngines: createSandboxEngineHandlers({ context, lifecycle: life, runtime, hub, catalogue: () => catalogue }),
    filesystem: { ...createFilesystemHandlers(access), ...createFileStreamHandlers(access) },
    processes: createProcessHandlers({
      ...access,
      hub,
      secrets: deps.secrets,
      keepAliveMs: settings.keepAliveMs ?? 5_000,
    }),
    ports: createPortHandlers({
      ...access,
      urls: createPortUrls(createContentUrls(deps.config, publicUrl)),
      closeConnections: proxy.closeConnections,
      ...(pods ? { objects: pods.ports } : {}),
      logger,
    }),
    ...createDriveHandlers({ ...access, driveDir: settings.driveDir, secrets: deps.secrets }),
    metrics: createMetricsHandlers(access),
  };
  followRunning = handlers.processes.followRunning;

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
    const opened = (store = await openServiceStore({
      deps,
      schema: SANDBOX_SCHEMA,
      migrations: sandboxMigrations,
      pageTokenKey: settings.pageTokenKey,
      logger,
      outboxPollInterval: deps.outboxPollInterval,
    }));
    const db = opened.database;
    state.tokens = opened.tokens;
    state.afterWrite = () => opened.relay.wake();
    state.database = db;
    catalogue = createCatalogueReadModel({
      name: "sandbox-catalogue-view",
      bus: deps.bus,
      kinds: ["sandboxEngineImages", "sandboxEngineTemplates"],
      logger,
    });
    await catalogue.ready;
    if (kubernetes) {
      // The informers' first lists: the lifecycle's first sweep must see the cluster as it is.
      await runtime.prepare();
    } else if (runtime.capabilities.isolation === "unavailable") {
      logger.warn(
        "sandboxes cannot be created: bubblewrap is missing (install the Debian package bubblewrap, or set AIEM_SANDBOX_UNCONFINED=true to run them without isolation)",
      );
    } else {
      if (runtime.capabilities.isolation === "unconfined")
        logger.warn("sandboxes run UNCONFINED, as plain host processes (AIEM_SANDBOX_UNCONFINED=true)");
      // Bundling the agent takes a moment; do it now rather than in the first create. Whatever
      // then keeps every sandbox from starting is said once, here, and on each sandbox it fails.
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
    await life.start();
    removeGauges = [
      deps.metrics?.gauge({
        name: "aiem_sandboxes",
        help: "Sandbox engines by state (the whole deployment's, as every sandbox replica sees the same database)",
        labelNames: ["state"] as const,
        async collect(set) {
          const r = await sql<{ state: string; n: string | number }>`
            select state, count(*) as n from sandbox_engines group by state`.execute(db.db);
          for (const row of r.rows) set({ state: row.state }, Number(row.n));
        },
      }),
      deps.metrics?.gauge({
        name: "aiem_sandbox_warm_pool",
        help: "Warm sandboxes of this process: ready to be claimed, or starting",
        labelNames: ["status"] as const,
        collect(set) {
          const { ready, filling } = life.warmPool();
          set({ status: "ready" }, ready);
          set({ status: "starting" }, filling);
        },
      }),
      deps.metrics?.gauge({
        name: "aiem_sandbox_reconciler_queued",
        help: "Sandboxes of this process with a reconcile pass queued or under way",
        collect: (set) => set({}, life.reconciling),
      }),
    ];
    // Known to the other replicas once its sandboxes run again (until then they answer UNAVAILABLE).
    await replicas.start();
    ready = true;
    logger.info("sandbox service started", { schema: db.schema, isolation: runtime.capabilities.isolation });
  }

  const once = createStartOnce(start);
  const services: Array<[DescService, Record<string, unknown>]> = [
    [SandboxEngineService, handlers.sandboxEngines],
    [FilesystemService, handlers.filesystem],
    [ProcessService, handlers.processes],
    [PortService, handlers.ports],
    [DriveService, handlers.drive],
    [SecureStoreService, handlers.secureStore],
    [MetricsService, handlers.metrics],
  ];

  return {
    name: "sandbox",
    services: SANDBOX_SERVICES,
    httpRoutes: [proxy.route, fileTransfer],
    register(router: ConnectRouter) {
      for (const [service, impl] of services) registerGuarded(router, service, impl, { logger, label: "sandbox" });
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

/** The Kubernetes runtime of sandboxes, its client loaded only here: it costs every other process memory. */
async function connectCluster(
  settings: SandboxKubernetesSettings,
  outputLimitBytes: number,
  agentToken: (uid: string) => Promise<string>,
) {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const { createKubernetesSandboxRuntime } = await import("./kubernetes/kubernetes-sandbox-runtime.js");
  const config = new KubeConfig();
  if (settings.kubeconfigPath) config.loadFromFile(settings.kubeconfigPath);
  else config.loadFromDefault();
  return createKubernetesSandboxRuntime({
    config,
    namespace: settings.namespace,
    agent: {
      image: settings.agentImage,
      imagePullPolicy: settings.agentImagePullPolicy,
      // The agent serves on the pod's port (docs/adr/0245); its processes run as the pod's user.
      config: JSON.stringify({ listen: ":50051", outputLimitBytes }),
    },
    gateway: settings.gateway,
    agentToken,
  });
}
