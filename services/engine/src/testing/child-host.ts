// Test support: the catalogue and engine parts in a process of their own, on the real host, for
// the test that kills the engine service with SIGKILL and starts it again on the same database.
// Settings come from the environment as for `npm start` (AIEM_DATA_DIR, AIEM_POLICY_FILE,
// DATABASE_URL, NATS_URL, AIEM_DB_SCHEMA_SUFFIX, AIEM_EVENTS_PREFIX, AIEM_ENGINE_*). Prints one
// JSON line `{"url": ...}` on stdout once it listens.
import { readCommonEnv } from "@aiem/kit/config";
import { createLogger } from "@aiem/kit/logger";
import { createCatalogueModule, readCatalogueEnv } from "@aiem/catalogue";
import { createHost } from "../../../../edge/src/host/create-host.js";
import { readEdgeEnv } from "../../../../edge/src/host/edge-config.js";
import { readHostIsolationEnv } from "../../../../edge/src/host/host-env.js";
import { readEngineEnv } from "../config.js";
import { createEngineModule } from "../module.js";

const logger = createLogger({ level: "warn", fields: { process: "engine-test-child" } });
const config = readCommonEnv();
const host = await createHost({
  config,
  edge: readEdgeEnv(),
  logger,
  ...readHostIsolationEnv(),
  modules: [
    {
      name: "catalogue",
      create: (deps) => createCatalogueModule({ ...deps, outboxPollInterval: 50, catalogueConfig: readCatalogueEnv() }),
    },
    {
      name: "engine",
      create: (deps) => createEngineModule({ ...deps, outboxPollInterval: 50, engineConfig: readEngineEnv() }),
    },
  ],
});
await host.start();
process.stdout.write(`${JSON.stringify({ url: host.url })}\n`);
const stop = () => void host.stop().finally(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
