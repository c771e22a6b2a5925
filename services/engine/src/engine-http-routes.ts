// The engine service's HTTP routes: `/engines/<uid>/` to an engine's web server, H2O and DAI
// engines by name, and the log stream.
import { loadSessionKey } from "@aiem/kit/config";
import type { Logger } from "@aiem/kit/logger";
import type { ServiceDeps } from "@aiem/kit/server";
import type { ActivityTracker } from "./activity.js";
import type { EngineSettings } from "./config.js";
import type { ServiceContext, ServiceState } from "./context.js";
import { createLogStreamRoute } from "./log-stream.js";
import { createEngineProxy, createNameRoute, type EngineHttpRoute } from "./proxy.js";
import { loadByName, loadByUid } from "./store.js";

export interface EngineHttpRoutesOptions {
  readonly deps: ServiceDeps;
  readonly settings: EngineSettings;
  readonly context: ServiceContext;
  /** What the service holds once started; the routes answer unavailable before. */
  readonly state: ServiceState;
  readonly activity: ActivityTracker;
  readonly logger: Logger;
}

export function createEngineHttpRoutes(options: EngineHttpRoutesOptions): EngineHttpRoute[] {
  const { deps, settings, context, state, logger } = options;
  let sessionKey: Promise<Uint8Array> | undefined;
  const proxy = createEngineProxy({
    authenticator: deps.authenticator,
    policy: deps.policy,
    logger,
    runtime: () => state.runtime,
    activity: options.activity,
    lookup: async (uid) => (state.database ? loadByUid(state.database.db, uid) : undefined),
    servedAt: (row) => context.servedAt(row),
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
    servedAt: (row) => context.servedAt(row),
  });
  return [proxy, byName, logStream];
}
