// The start and stop of the sandbox module's parts: its placement lock, schema and outbox, the
// catalogue's copy, the runtime, the lifecycle, its gauges and its replica registration.
import * as fs from "node:fs";
import * as path from "node:path";
import { acquireDirectoryLock, type DirectoryLock } from "@aiem/kit/db";
import type { Logger } from "@aiem/kit/logger";
import { createStartOnce, type ServiceCoreState, type ServiceStore } from "@aiem/kit/server";
import { createCatalogueReadModel, type CatalogueReadModel } from "@aiem/kit/catalogue-view";
import type { Lifecycle } from "./lifecycle.js";
import type { SandboxModuleDeps } from "./module.js";
import type { LocalSandboxRuntime } from "./runtime/index.js";
import { addSandboxGauges } from "./sandbox-gauges.js";

export interface ModuleRunDeps {
  readonly deps: SandboxModuleDeps;
  readonly state: ServiceCoreState;
  readonly logger: Logger;
  readonly runtime: LocalSandboxRuntime;
  /** Whether sandboxes run as pods. */
  readonly kubernetes: boolean;
  readonly life: Lifecycle;
  readonly replicas: { start(): Promise<void>; stop(): Promise<void> };
  /** Opens the module's schema and outbox, and hands them to the service core (`state`). */
  readonly openStore: () => Promise<ServiceStore>;
}

export interface ModuleRun {
  /** Starts the parts, once until stop(). */
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly ready: boolean;
  /** The local copy of the catalogue once started. */
  readonly catalogue: CatalogueReadModel | undefined;
  /** The schema and outbox once started. */
  readonly store: ServiceStore | undefined;
}

export function createModuleRun(run: ModuleRunDeps): ModuleRun {
  const { deps, state, logger, runtime, kubernetes, life, replicas } = run;
  let catalogue: CatalogueReadModel | undefined;
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
    store = await run.openStore();
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
    get ready() {
      return ready;
    },
    get catalogue() {
      return catalogue;
    },
    get store() {
      return store;
    },
  };
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
