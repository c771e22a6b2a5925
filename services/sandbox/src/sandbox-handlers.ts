// Every RPC handler of the sandbox service, each map typed by its service, and their registration.
import type { ConnectRouter } from "@connectrpc/connect";
import { createContentUrls } from "@aiem/kit/config";
import type { Logger } from "@aiem/kit/logger";
import { type GuardOptions, registerGuarded, type ServiceDeps } from "@aiem/kit/server";
import type { CatalogueReadModel } from "@aiem/kit/catalogue-view";
import { DriveService } from "@aiem/proto/enginemanager/sandbox/v1/drive_service_pb.js";
import { FilesystemService } from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import { MetricsService } from "@aiem/proto/enginemanager/sandbox/v1/metrics_service_pb.js";
import { PortService } from "@aiem/proto/enginemanager/sandbox/v1/port_service_pb.js";
import { ProcessService } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { SandboxEngineService } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_service_pb.js";
import { SecureStoreService } from "@aiem/proto/enginemanager/sandbox/v1/secure_store_service_pb.js";
import type { SandboxSettings } from "./config.js";
import { createDriveHandlers } from "./drive-handlers.js";
import { createFileStreamHandlers } from "./file-stream-handlers.js";
import { createFilesystemHandlers } from "./filesystem-handlers.js";
import type { PortObjects } from "./kubernetes/pod-sandbox-runtime.js";
import type { ChangeHub, Lifecycle } from "./lifecycle.js";
import { createMetricsHandlers } from "./metrics-handlers.js";
import { createPortHandlers } from "./port-handlers.js";
import { createPortUrls } from "./port-urls.js";
import type { SecretResolver } from "./process-definition.js";
import { createProcessHandlers } from "./process-handlers.js";
import type { LocalSandboxRuntime } from "./runtime/index.js";
import { createSandboxEngineHandlers } from "./sandbox-engine-handlers.js";
import { createSecureStoreHandlers } from "./secure-store-handlers.js";
import type { ServiceContext } from "./service-context.js";

export interface SandboxHandlerDeps {
  readonly context: ServiceContext;
  readonly lifecycle: Lifecycle;
  readonly runtime: LocalSandboxRuntime;
  readonly hub: ChangeHub;
  readonly settings: SandboxSettings;
  readonly config: ServiceDeps["config"];
  readonly secrets: SecretResolver | undefined;
  /** The local copy of the catalogue; undefined until the module started. */
  catalogue(): CatalogueReadModel | undefined;
  /** This service's public base URL, without a trailing slash. */
  publicUrl(): string;
  /** Cuts forwarded connections of a port (the port proxy's). */
  closeConnections(sandboxUid: string, port: number, onlyPublic: boolean): void;
  /** On Kubernetes, each port's Service and HTTPRoute. */
  readonly portObjects?: PortObjects | undefined;
  readonly logger?: Logger | undefined;
}

export type SandboxHandlers = ReturnType<typeof createSandboxHandlers>;

export function createSandboxHandlers(deps: SandboxHandlerDeps) {
  const { context, lifecycle, settings } = deps;
  const access = { context, lifecycle };
  const processes = createProcessHandlers({
    ...access,
    hub: deps.hub,
    secrets: deps.secrets,
    keepAliveMs: settings.keepAliveMs ?? 5_000,
  });
  return {
    sandboxEngines: createSandboxEngineHandlers({
      ...access,
      runtime: deps.runtime,
      hub: deps.hub,
      catalogue: deps.catalogue,
    }),
    filesystem: { ...createFilesystemHandlers(access), ...createFileStreamHandlers(access) },
    processes: processes.service,
    ports: createPortHandlers({
      ...access,
      urls: createPortUrls(createContentUrls(deps.config, deps.publicUrl)),
      closeConnections: deps.closeConnections,
      objects: deps.portObjects,
      logger: deps.logger,
    }),
    drive: createDriveHandlers({ ...access, driveDir: settings.driveDir }),
    secureStore: createSecureStoreHandlers({ ...access, secrets: deps.secrets }),
    metrics: createMetricsHandlers(access),
    /** Follows again the running processes of a sandbox whose agent was adopted. */
    followRunning: processes.followRunning,
  };
}

/** Registers each service with its handlers, every method guarded (the kit's registerGuarded). */
export function registerSandboxHandlers(router: ConnectRouter, handlers: SandboxHandlers, options: GuardOptions): void {
  registerGuarded(router, SandboxEngineService, handlers.sandboxEngines, options);
  registerGuarded(router, FilesystemService, handlers.filesystem, options);
  registerGuarded(router, ProcessService, handlers.processes, options);
  registerGuarded(router, PortService, handlers.ports, options);
  registerGuarded(router, DriveService, handlers.drive, options);
  registerGuarded(router, SecureStoreService, handlers.secureStore, options);
  registerGuarded(router, MetricsService, handlers.metrics, options);
}
