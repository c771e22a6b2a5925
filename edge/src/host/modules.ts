import { createCatalogueModule, readCatalogueEnv, type CatalogueModule } from "@aiem/catalogue";
import { createEngineModule, readEngineEnv } from "@aiem/engine";
import { createSandboxModule, readSandboxEnv } from "@aiem/sandbox";
import type { ModuleFactory } from "./create-host.js";
import { createRemoteSecretResolver } from "./remote-secret-resolver.js";

/** Where the sandbox finds a catalogue that runs in another process. */
export interface RemoteCatalogue {
  /** AIEM_CATALOGUE_URL. */
  readonly url: string;
  /** AIEM_INTERNAL_KEY. */
  readonly internalKey: string;
}

/**
 * The parts that have landed, as a host runs them; a part missing here is answered with
 * UNIMPLEMENTED until its service is written. Each part reads its own settings from the
 * environment; the data directory and address are always the host's. Fresh factories per host,
 * because parts in one process use each other: the sandbox resolves secrets through the
 * catalogue when both run here (the catalogue's factory comes first), otherwise through the
 * catalogue's internal API when `remoteCatalogue` says where it is.
 */
export function createModuleFactories(remoteCatalogue?: RemoteCatalogue): ModuleFactory[] {
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
        createEngineModule({
          ...deps,
          engineConfig: readEngineEnv({ ...process.env, AIEM_DATA_DIR: deps.config.dataDir }),
        }),
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
            ? {
                secrets: {
                  resolveSecretValue: (principal, name, reveal) =>
                    catalogue!.resolveSecretValue(principal, name, reveal),
                },
              }
            : remoteCatalogue
              ? {
                  secrets: createRemoteSecretResolver({
                    catalogueUrl: remoteCatalogue.url,
                    internalKey: remoteCatalogue.internalKey,
                    logger: deps.logger,
                  }),
                }
              : {}),
        }),
    },
  ];
}

/** The names of the parts that have landed. */
export const landedParts = createModuleFactories().map((m) => m.name);
