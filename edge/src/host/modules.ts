import { createCatalogueModule, readCatalogueEnv } from "@aiem/catalogue";
import type { ModuleFactory } from "./create-host.js";

/**
 * The parts that have landed, as the launcher hosts them. A part missing here is answered
 * with UNIMPLEMENTED until its service is written. Each part reads its own settings from the
 * environment; the data directory is always the host's.
 */
export const moduleFactories: readonly ModuleFactory[] = [
  {
    name: "catalogue",
    create: (deps) =>
      createCatalogueModule({
        ...deps,
        catalogueConfig: readCatalogueEnv({ ...process.env, AIEM_DATA_DIR: deps.config.dataDir }),
      }),
  },
];
