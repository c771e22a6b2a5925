// The parts a host runs in-process: their shared bus, each module made from its factory with the
// host's dependencies, then started, in order.
import { createDatabase } from "@aiem/kit/db";
import { createEventBus } from "@aiem/kit/events";
import { instrumentEventBus } from "@aiem/kit/observability";
import type { ServiceDeps } from "@aiem/kit/server";
import type { HostSetup, HostState } from "./host-state.js";

/** Opens the bus and creates and starts the modules; false when a stop came first. */
export async function openModules(setup: HostSetup, state: HostState): Promise<boolean> {
  const { options, config, logger, metrics } = setup;
  state.bus =
    options.bus ??
    (await createEventBus({
      natsUrl: config.natsUrl,
      prefix: options.eventsPrefix,
      logger: logger.child({ component: "events" }),
    }));
  // What modules publish and consume gets spans and counts; the bus itself stays the caller's.
  const modulesBus = instrumentEventBus(state.bus, { metrics });
  const openDatabase = (schema: string) =>
    createDatabase({
      url: config.databaseUrl,
      dataDir: config.dataDir,
      schema: `${schema}${options.schemaSuffix ?? ""}`,
    });
  for (const factory of options.modules) {
    if (state.stopRequested) return false;
    const deps: ServiceDeps = {
      config,
      bus: modulesBus,
      policy: setup.policy,
      authenticator: setup.identity.authenticator,
      logger: logger.child({ service: factory.name }),
      openDatabase,
      ...(metrics ? { metrics } : {}),
    };
    state.modules.push(await factory.create(deps));
  }
  for (const module of state.modules) {
    if (state.stopRequested) return false;
    await module.start();
  }
  return true;
}
