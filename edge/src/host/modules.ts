import { createCatalogueModule, readCatalogueEnv } from "@aiem/catalogue";
import { createEngineModule, readEngineEnv } from "@aiem/engine";
import type { ModuleFactory } from "./create-host.js";

/**
 * The parts that have landed, as a host runs them; a part missing here is answered with
 * UNIMPLEMENTED until its service is written. Each part reads its own settings from the
 * environment; the data directory is always the host's. Fresh factories per host, because
 * parts in one process may use each other (the sandbox resolves secrets through the catalogue).
 */
export function createModuleFactories(): ModuleFactory[] {
  return [
    {
      name: "catalogue",
      create: (deps) =>
        createCatalogueModule({
          ...deps,
          catalogueConfig: readCatalogueEnv({ ...process.env, AIEM_DATA_DIR: deps.config.dataDir }),
        }),
    },
    {
      name: "engine",
      create: (deps) =>
        createEngineModule({ ...deps, engineConfig: readEngineEnv({ ...process.env, AIEM_DATA_DIR: deps.config.dataDir }) }),
    },
  ];
}

/** The names of the parts that have landed. */
export const landedParts = createModuleFactories().map((m) => m.name);
