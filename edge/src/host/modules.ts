import { createCatalogueModule, readCatalogueEnv, type CatalogueModule } from "@aiem/catalogue";
import { createEngineModule, readEngineEnv } from "@aiem/engine";
import { createSandboxModule, readSandboxEnv } from "@aiem/sandbox";
import type { ModuleFactory } from "./create-host.js";

/**
 * The parts that have landed, as a host runs them; a part missing here is answered with
 * UNIMPLEMENTED until its service is written. Each part reads its own settings from the
 * environment; the data directory and address are always the host's. Fresh factories per host,
 * because parts in one process use each other: the sandbox resolves secrets through the
 * catalogue when both run here (the catalogue's factory comes first).
 */
export function createModuleFactories(): ModuleFactory[] {
  let catalogue: CatalogueModule | undefined;
  return [
    {
      name: "catalogue",
      create: (deps) =>
        (catalogue = createCatalogueModule({
          ...deps,
          catalogueConfig: readCatalogueEnv({ ...process.env, AIEM_DATA_DIR: deps.config.dataDir }),
        })),
    },
    {
      name: "engine",
      create: (deps) =>
        createEngineModule({ ...deps, engineConfig: readEngineEnv({ ...process.env, AIEM_DATA_DIR: deps.config.dataDir }) }),
    },
    {
      name: "sandbox",
      create: (deps) =>
        createSandboxModule({
          ...deps,
          sandboxConfig: readSandboxEnv({
            ...process.env,
            AIEM_DATA_DIR: deps.config.dataDir,
            AIEM_HOST: deps.config.host,
            AIEM_PORT: String(deps.config.port),
          }),
          ...(catalogue
            ? { secrets: { resolveSecretValue: (principal, name) => catalogue!.resolveSecretValue(principal, name) } }
            : {}),
        }),
    },
  ];
}

/** The names of the parts that have landed. */
export const landedParts = createModuleFactories().map((m) => m.name);
