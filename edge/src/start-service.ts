// `npm run start:service -- <catalogue|engine|sandbox|edge>`: one part of the product in its own
// process. Service parts serve their own API (Connect, gRPC, REST) on AIEM_PORT; the edge part
// serves the whole API and forwards each call to AIEM_CATALOGUE_URL, AIEM_ENGINE_URL and
// AIEM_SANDBOX_URL. Separate processes share state only through PostgreSQL and NATS, so both
// DATABASE_URL and NATS_URL are required. The sandbox resolves secrets through the catalogue's
// internal API at AIEM_CATALOGUE_URL, with the AIEM_INTERNAL_KEY both of them must hold.
import { readCatalogueEnv } from "@aiem/catalogue";
import { ConfigError, readCommonEnv, readMetricsEnv, readUrlList } from "@aiem/kit/config";
import { createLogger } from "@aiem/kit/logger";
import { setUpTracing } from "@aiem/kit/observability";
import { createHost, notFound } from "./host/create-host.js";
import { createDocsFallback, defaultDocsDir } from "./host/docs.js";
import { readEdgeEnv } from "./host/edge-config.js";
import { readHostIsolationEnv } from "./host/host-env.js";
import { createModuleFactories } from "./host/modules.js";
import { PARTS, type PartName } from "./host/parts.js";
import { runUntilSignal } from "./host/run-until-signal.js";

const part = process.argv[2];
const logger = createLogger({ fields: { process: part } });
try {
  if (part !== "edge" && !PARTS.includes(part as PartName)) {
    throw new ConfigError(
      "part",
      `expected one of ${[...PARTS, "edge"].join(", ")}, got ${JSON.stringify(part ?? "")}`,
    );
  }
  const config = readCommonEnv();
  const metrics = readMetricsEnv();
  if (!config.databaseUrl) throw new ConfigError("DATABASE_URL", "is required when parts run as separate processes");
  if (!config.natsUrl) throw new ConfigError("NATS_URL", "is required when parts run as separate processes");
  const remotes: Partial<Record<PartName, string>> = {};
  if (part === "edge") {
    for (const name of PARTS) {
      // Several replicas of a part: their URLs comma-separated.
      const urls = readUrlList(process.env, `AIEM_${name.toUpperCase()}_URL`, { optional: true, protocols: ["http"] });
      if (urls && urls.length > 0) remotes[name] = urls.join(",");
    }
  }
  // In one process the key may live in the data directory; processes that may not share one
  // must agree on it explicitly.
  const needsKey = part === "catalogue" || part === "sandbox";
  const internalKey = needsKey ? readCatalogueEnv().internalKey : undefined;
  if (needsKey && !internalKey) {
    throw new ConfigError(
      "AIEM_INTERNAL_KEY",
      "is required when parts run as separate processes (e.g. `openssl rand -base64 32`)",
    );
  }
  const catalogueUrl =
    part === "sandbox" ? readUrlList(process.env, "AIEM_CATALOGUE_URL", { protocols: ["http"] }).join(",") : undefined;
  const modules = createModuleFactories(
    catalogueUrl && internalKey ? { url: catalogueUrl, internalKey } : undefined,
  ).filter((m) => m.name === part);
  if (part !== "edge" && modules.length === 0) {
    logger.warn("this part has not landed yet; its API answers UNIMPLEMENTED", { part });
  }
  const tracing = setUpTracing({ serviceName: `aiem-${part}` });
  const host = await createHost({
    config,
    processName: part,
    ...(metrics ? { metrics } : {}),
    edge: readEdgeEnv(),
    modules,
    remotes,
    logger,
    // The docs are served by the edge; service parts answer only their API.
    ...(part === "edge" ? { fallback: createDocsFallback(defaultDocsDir(), notFound) } : {}),
    ...readHostIsolationEnv(),
    front: part === "edge",
  });
  await runUntilSignal(
    host,
    logger,
    () =>
      logger.info("ready", {
        part,
        url: host.url,
        ...(host.metricsUrl ? { metrics: host.metricsUrl } : {}),
        ...(tracing.exporters.length > 0 ? { traces: tracing.exporters } : {}),
      }),
    tracing.shutdown,
  );
} catch (err) {
  logger.error(err instanceof ConfigError ? "invalid configuration" : "failed to start", { err });
  process.exitCode = 1;
}
