// `npm start`: the whole product in one process — the edge and every service, on PGlite and the
// in-process event bus in AIEM_DATA_DIR, or on PostgreSQL and NATS when DATABASE_URL and
// NATS_URL are set.
import { ConfigError, readCommonEnv, readMetricsEnv } from "@aiem/kit/config";
import { createLogger } from "@aiem/kit/logger";
import { setUpTracing } from "@aiem/kit/observability";
import { createHost, notFound } from "./host/create-host.js";
import { createDocsFallback, defaultDocsDir } from "./host/docs.js";
import { readEdgeEnv } from "./host/edge-config.js";
import { readHostIsolationEnv } from "./host/host-env.js";
import { createModuleFactories } from "./host/modules.js";
import { leftRunning, leftRunningLine } from "./host/left-running.js";
import { runUntilSignal } from "./host/run-until-signal.js";

const logger = createLogger({ fields: { process: "all-in-one" } });
try {
  const config = readCommonEnv();
  const metrics = readMetricsEnv();
  const tracing = setUpTracing({ serviceName: "aiem-all-in-one" });
  const host = await createHost({
    config,
    processName: "all-in-one",
    ...(metrics ? { metrics } : {}),
    edge: readEdgeEnv(),
    modules: createModuleFactories(),
    logger,
    fallback: createDocsFallback(defaultDocsDir(), notFound),
    ...readHostIsolationEnv(),
  });
  await runUntilSignal(
    host,
    logger,
    () => {
      const dataDirFlag = process.env.AIEM_DATA_DIR ? "" : " (same AIEM_DATA_DIR as the server)";
      process.stdout.write(
        [
          "",
          "AI Engine Manager is running.",
          `  API (REST /v1, Connect, gRPC, gRPC-Web): ${host.url}/v1`,
          `  Documentation:                          ${host.url}/ai-engine-manager/`,
          `  Health:                                 ${host.url}/healthz, ${host.url}/readyz`,
          `  Metrics (Prometheus):                   ${host.metricsUrl ?? "off (AIEM_METRICS_PORT=0)"}`,
          ...(tracing.exporters.length > 0
            ? [`  Traces exported to:                     ${tracing.exporters.join(", ")}`]
            : []),
          config.oidcIssuer
            ? `  Tokens: from your identity provider (${config.oidcIssuer})`
            : `  Get a token${dataDirFlag}:  npm run -s token -- --user alice [--admin]`,
          ...(host.issuerUrl
            ? [
                `  OAuth clients (official Python client): issuer ${host.issuerUrl}, refresh token: npm run -s token -- --user alice --refresh`,
              ]
            : []),
          `  Try it:  curl -H "Authorization: Bearer $(npm run -s token -- --user alice)" ${host.url}/v1/workspaces/global/daiEngineVersions`,
          "",
        ].join("\n"),
      );
    },
    async () => {
      await tracing.shutdown();
      const line = leftRunningLine(await leftRunning(config.dataDir), process.env.AIEM_DATA_DIR !== undefined);
      if (line) process.stdout.write(`${line}\n`);
    },
  );
} catch (err) {
  logger.error(err instanceof ConfigError ? "invalid configuration" : "failed to start", { err });
  process.exitCode = 1;
}
