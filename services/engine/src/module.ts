// The engine service as a ServiceModule: DAI, H2O and notebook engines and the mixed Engine list
// in its own schema `engine`, the catalogue read model it validates against, the reconciler and
// runtime that run the engines, and the `/engines/<uid>/` HTTP route to their web servers.
import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import type { Database } from "@aiem/kit/db";
import { createStartOnce, registerGuarded, type ServiceDeps, type ServiceModule } from "@aiem/kit/server";
import type { CatalogueReadModel } from "@aiem/kit/catalogue-view";
import { DAILicenseService } from "@aiem/proto/enginemanager/v1/dai_license_service_pb.js";
import { EngineService } from "@aiem/proto/enginemanager/v1/engine_service_pb.js";
import { createActivityTracker } from "./activity.js";
import type { EngineSettings } from "./config.js";
import { createServiceContext, type ServiceContext, type ServiceState } from "./context.js";
import { createDAIEngineHandlers } from "./dai-engine-handlers.js";
import { createDAILicenseHandlers } from "./dai-license-handlers.js";
import { createEngineHttpRoutes } from "./engine-http-routes.js";
import { startEngineModule, stopEngineModule, type EngineModuleParts } from "./engine-module-lifecycle.js";
import { createEngineListHandlers } from "./engine-list-handlers.js";
import { createH2OEngineHandlers } from "./h2o-engine-handlers.js";
import { DAI, ENGINE_KINDS, H2O, NOTEBOOK } from "./kinds.js";
import { createNotebookEngineHandlers } from "./notebook-engine-handlers.js";
import type { EngineHttpRoute } from "./proxy.js";
import type { EngineRuntime } from "./runtime/runtime.js";

export { ENGINE_SCHEMA } from "./engine-module-lifecycle.js";

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
  const context = createServiceContext({
    policy: deps.policy,
    logger,
    settings,
    activity,
    state,
    defaultPublicUrl: defaultPublicUrl(deps.config.host, deps.config.port),
    content: deps.config,
  });
  const parts: EngineModuleParts = { deps, settings, logger, context, state, activity, removeGauges: [], ready: false };
  const once = createStartOnce(() => startEngineModule(parts));
  return {
    name: "engine",
    services: ENGINE_SERVICES,
    httpRoutes: createEngineHttpRoutes({ deps, settings, context, state, activity, logger }),
    register: (router) => registerEngineHandlers(router, context, logger),
    start: once.start,
    async stop() {
      await stopEngineModule(parts);
      once.reset();
    },
    isReady: () => parts.ready,
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
      return parts.store ? parts.store.relay.flush() : 0;
    },
    flushActivity: () => activity.flush(),
    reconcileNow() {
      parts.reconciler?.wake();
    },
  };
}

function registerEngineHandlers(router: ConnectRouter, context: ServiceContext, logger: ServiceDeps["logger"]): void {
  const options = { logger, label: "engine" };
  registerGuarded(router, DAI.service, createDAIEngineHandlers(context), options);
  registerGuarded(router, H2O.service, createH2OEngineHandlers(context), options);
  registerGuarded(router, NOTEBOOK.service, createNotebookEngineHandlers(context), options);
  registerGuarded(router, EngineService, createEngineListHandlers(context), options);
  registerGuarded(router, DAILicenseService, createDAILicenseHandlers(), options);
}
