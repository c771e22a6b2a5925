// Starting and stopping the engine service: its store, the catalogue read model, the runtime,
// this replica's registration, the activity tracker, the reconciler and the gauges, in that order
// and back.
import { loadTicketKey, replicaUrlOf } from "@aiem/kit/config";
import type { DirectoryLock } from "@aiem/kit/db";
import type { Logger } from "@aiem/kit/logger";
import { createReplicaRegistry, openServiceStore, type ServiceDeps, type ServiceStore } from "@aiem/kit/server";
import { createCatalogueReadModel, type CatalogueReadModel } from "@aiem/kit/catalogue-view";
import type { ActivityTracker } from "./activity.js";
import type { EngineSettings } from "./config.js";
import type { ServiceContext, ServiceState } from "./context.js";
import { registerEngineGauges } from "./engine-gauges.js";
import { engineMigrations } from "./migrations.js";
import { createReconciler, type Reconciler } from "./reconciler.js";
import { openRuntime } from "./runtime/runtime-from-settings.js";
import type { EngineRuntime } from "./runtime/runtime.js";

export const ENGINE_SCHEMA = "engine";

/** What a started engine service holds, beside the handlers' ServiceState. */
export interface EngineModuleParts {
  readonly deps: ServiceDeps & { readonly outboxPollInterval?: number; readonly runtime?: EngineRuntime };
  readonly settings: EngineSettings;
  readonly logger: Logger;
  readonly context: ServiceContext;
  readonly state: ServiceState;
  readonly activity: ActivityTracker;
  store?: ServiceStore | undefined;
  reconciler?: Reconciler | undefined;
  removeGauges: Array<(() => void) | undefined>;
  placementLock?: DirectoryLock | undefined;
  ready: boolean;
}

export async function startEngineModule(parts: EngineModuleParts): Promise<void> {
  const { deps, settings, logger, state } = parts;
  const store = await openServiceStore({
    deps,
    schema: ENGINE_SCHEMA,
    migrations: engineMigrations,
    pageTokenKey: settings.pageTokenKey,
    logger,
    outboxPollInterval: deps.outboxPollInterval,
  });
  parts.store = store;
  const catalogue = await openCatalogue(deps, logger);
  let runtime = deps.runtime;
  if (!runtime) {
    const opened = await openRuntime(settings, deps.config.dataDir, logger);
    runtime = opened.runtime;
    parts.placementLock = opened.lock;
  }
  state.ticketKey = await loadTicketKey(deps.config.dataDir, settings.internalKey);
  state.tokens = store.tokens;
  state.catalogue = catalogue;
  state.runtime = runtime;
  state.database = store.database;
  state.replicas = createReplicaRegistry({
    database: () => state.database,
    id: runtime.placement,
    url: () => replicaUrlOf(deps.config),
    logger,
  });
  await state.replicas.start();
  parts.activity.start();
  const reconciler = createReconciler({
    database: store.database,
    runtime,
    logger,
    coreConfig: settings.daiCoreConfig,
    intervalMs: settings.reconcileIntervalMs,
    checkIntervalMs: settings.checkIntervalMs,
    startTimeoutMs: settings.startTimeoutMs,
    context: parts.context.presentContext,
    pendingActivity: parts.activity.latest,
    onEvents: () => store.relay.wake(),
  });
  parts.reconciler = reconciler;
  await reconciler.start();
  parts.removeGauges = registerEngineGauges(deps.metrics, store.database, reconciler);
  state.afterWrite = () => {
    store.relay.wake();
    parts.reconciler?.wake();
  };
  parts.ready = true;
  logger.info("engine service started", { schema: store.database.schema, runtime: runtime.placement });
}

async function openCatalogue(deps: ServiceDeps, logger: Logger): Promise<CatalogueReadModel> {
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
  return catalogue;
}

export async function stopEngineModule(parts: EngineModuleParts): Promise<void> {
  const { state } = parts;
  parts.ready = false;
  for (const remove of parts.removeGauges) remove?.();
  parts.removeGauges = [];
  state.afterWrite = undefined;
  await parts.reconciler?.stop();
  parts.reconciler = undefined;
  await state.replicas?.stop();
  state.replicas = undefined;
  await parts.activity.stop();
  await state.catalogue?.stop();
  state.catalogue = undefined;
  await state.runtime?.close();
  state.runtime = undefined;
  parts.placementLock?.release();
  parts.placementLock = undefined;
  state.database = undefined;
  const closing = parts.store;
  parts.store = undefined;
  await closing?.close();
}
