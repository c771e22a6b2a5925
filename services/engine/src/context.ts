// What every handler of the module shares: the kit's service core, and the engine's own read
// model, runtime, settings, activity tracker and public URL.
import type { Policy } from "@aiem/kit/authz";
import type { CatalogueReadModel } from "@aiem/kit/catalogue-view";
import { createContentUrls, withTicket, type ContentSettings } from "@aiem/kit/config";
import { unavailable } from "@aiem/kit/errors";
import type { Logger } from "@aiem/kit/logger";
import {
  createServiceCore,
  ServedElsewhere,
  type ReplicaRegistry,
  type ServiceCore,
  type ServiceCoreState,
} from "@aiem/kit/server";
import type { ActivityTracker } from "./activity.js";
import type { EngineSettings } from "./config.js";
import type { EngineRuntime } from "./runtime/runtime.js";
import type { PresentContext } from "./store.js";

export interface ServiceState extends ServiceCoreState {
  catalogue?: CatalogueReadModel;
  runtime?: EngineRuntime;
  /** Seals the tickets of URLs handed out to be opened in a browser (loaded at start). */
  ticketKey?: Uint8Array;
  /** This replica among the engine service's replicas (its id is the runtime's placement). */
  replicas?: ReplicaRegistry;
}

/** The kit's service core (whose write() wakes the outbox relay and the reconciler) and the engine's own parts. */
export interface ServiceContext extends ServiceCore {
  readonly settings: EngineSettings;
  readonly activity: ActivityTracker;
  catalogue(): CatalogueReadModel;
  runtime(): EngineRuntime;
  publicUrl(): string;
  presentContext(): PresentContext;
  /**
   * The engine's URL for the caller to open in a browser now: at the engine's origin, with a
   * single-use ticket standing for the caller's bearer token (the edge turns it into a cookie
   * of that origin). With AIEM_PATH_URLS, the path URL as it is.
   */
  openUrl(uid: string, authorization: string | null): string;
  /**
   * Where calls that need the engine's host (logs, its web server) are served: undefined when
   * here; the URL of the live replica running it; UNAVAILABLE while that replica is down.
   */
  servedAt(row: { name: string; placement: string | null }): Promise<string | undefined>;
  /** Throws ServedElsewhere (the call is carried out by the owner) unless this replica runs the engine. */
  requireServedHere(row: { name: string; placement: string | null }): Promise<void>;
}

export function createServiceContext(options: {
  policy: Policy;
  logger: Logger;
  settings: EngineSettings;
  activity: ActivityTracker;
  state: ServiceState;
  defaultPublicUrl: string;
  /** AIEM_CONTENT_URL and AIEM_PATH_URLS: where engine UIs are opened. */
  content?: ContentSettings;
}): ServiceContext {
  const { state } = options;
  const notRunning = () => unavailable("the engine service is not running; retry shortly");
  const publicUrl = () => {
    const p = options.settings.publicUrl;
    const url = typeof p === "function" ? p() : p;
    return (url ?? options.defaultPublicUrl).replace(/\/+$/, "");
  };
  const content = createContentUrls(options.content ?? {}, publicUrl);
  const context: ServiceContext = {
    ...createServiceCore({ label: "engine service", policy: options.policy, logger: options.logger, state }),
    settings: options.settings,
    activity: options.activity,
    catalogue() {
      if (!state.catalogue) throw notRunning();
      return state.catalogue;
    },
    runtime() {
      if (!state.runtime) throw notRunning();
      return state.runtime;
    },
    publicUrl,
    openUrl(uid, authorization) {
      const url = content.engine(uid);
      return options.content?.pathUrls || !state.ticketKey ? url : withTicket(state.ticketKey, url, authorization);
    },
    async servedAt(row) {
      const here = state.runtime?.placement;
      if (row.placement === null || row.placement === here || !state.replicas) return undefined;
      const url = await state.replicas.urlOf(row.placement);
      if (!url) throw unavailable(`the replica running ${row.name} is down; retry once it is back`);
      return url;
    },
    async requireServedHere(row) {
      const url = await context.servedAt(row);
      if (url) throw new ServedElsewhere(url, row.name);
    },
    presentContext: () => ({
      now: new Date(),
      publicUrl: publicUrl(),
      engineUrl: content.engine,
      catalogue: state.catalogue,
      pendingActivity: options.activity.latest,
    }),
  };
  return context;
}
