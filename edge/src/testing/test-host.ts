// Starts a real host (the code of `npm start`) on port 0 for a test suite: its own data
// directory, and on PostgreSQL / NATS (when DATABASE_URL / NATS_URL are set) its own schemas and
// event streams, so suites run in parallel.
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readCommonEnv, readPublicUrl } from "@aiem/kit/config";
import type { EventBus } from "@aiem/kit/events";
import { createTestEventBus } from "@aiem/kit/events/testing";
import { loadOrCreateSigningKey, mintEmbeddedToken } from "@aiem/kit/identity";
import { silentLogger, type Logger } from "@aiem/kit/logger";
import { killEngineProcesses } from "@aiem/engine";
import { destroyLeftSandboxes } from "@aiem/sandbox/runtime";
import { createHost, type Host, type ModuleFactory } from "../host/create-host.js";
import type { NodeHandler } from "../transcoder/transcoder.js";

export interface TestHost {
  readonly host: Host;
  readonly url: string;
  readonly dataDir: string;
  /** The host's bus, and the prefix that keeps its subjects and streams apart from other suites'. */
  readonly bus: EventBus;
  readonly eventsPrefix: string;
  /** A bearer token for `users/<user>`. */
  token(user: string, options?: { admin?: boolean; roles?: string[]; displayName?: string }): Promise<string>;
  /** fetch() against the host with a JSON body and, given a user, their token. */
  call(
    method: string,
    path: string,
    options?: { user?: string; admin?: boolean; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  stop(): Promise<void>;
}

export interface TestHostOptions {
  readonly modules?: readonly ModuleFactory[];
  /** A policy document (YAML or JSON text); none means the embedded default. */
  readonly policy?: string;
  readonly env?: Record<string, string>;
  /** Serves what is neither API nor health (the docs site). */
  readonly fallback?: NodeHandler;
  /** Where the host logs; silent unless given. */
  readonly logger?: Logger;
  /** Serve /metrics on a free port of its own (host.metricsUrl). */
  readonly metrics?: boolean;
  /** A path under the suite's temporary directory to use as the data directory (a long one, say). */
  readonly dataSubdir?: string;
}

export async function startTestHost(options: TestHostOptions = {}): Promise<TestHost> {
  const tempDir = await mkdtemp(join(tmpdir(), "aiem-host-"));
  const dataDir = options.dataSubdir === undefined ? tempDir : join(tempDir, options.dataSubdir);
  await mkdir(dataDir, { recursive: true });
  const suffix = randomBytes(4).toString("hex");
  let policyFile: string | undefined;
  if (options.policy !== undefined) {
    policyFile = join(dataDir, "policy.yaml");
    await writeFile(policyFile, options.policy);
  }
  const env: Record<string, string> = {
    AIEM_PORT: "0",
    AIEM_DATA_DIR: dataDir,
    ...(policyFile ? { AIEM_POLICY_FILE: policyFile } : {}),
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    ...(process.env.NATS_URL ? { NATS_URL: process.env.NATS_URL } : {}),
    // Node's resolver here does not map `*.localhost` to loopback, so suites that open the URLs
    // they are handed use the paths; content-origins tests set AIEM_PATH_URLS=false.
    AIEM_PATH_URLS: "true",
    ...options.env,
  };
  const eventsPrefix = `t_host_${suffix}`;
  const bus = await createTestEventBus(`host${suffix}`, { prefix: eventsPrefix });
  const host = await createHost({
    bus,
    config: readCommonEnv(env),
    edge: { corsOrigins: "*", bodyLimitBytes: 1 << 20, publicUrl: readPublicUrl(env) },
    modules: options.modules ?? [],
    logger: options.logger ?? silentLogger,
    schemaSuffix: `_t${suffix}`,
    ...(options.metrics ? { metrics: { port: 0 }, processName: "test" } : {}),
    ...(options.fallback ? { fallback: options.fallback } : {}),
  });
  await host.start();
  const key = await loadOrCreateSigningKey(dataDir);
  const token: TestHost["token"] = (user, o = {}) =>
    mintEmbeddedToken(key, {
      user,
      admin: o.admin ?? false,
      roles: o.roles ?? [],
      ...(o.displayName ? { displayName: o.displayName } : {}),
    });
  return {
    host,
    url: host.url,
    dataDir,
    bus,
    eventsPrefix,
    token,
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.user) headers.authorization = `Bearer ${await token(o.user, { admin: o.admin ?? false })}`;
      if (o.body !== undefined) headers["content-type"] = "application/json";
      return fetch(`${host.url}${path}`, {
        method,
        headers,
        ...(o.body !== undefined ? { body: typeof o.body === "string" ? o.body : JSON.stringify(o.body) } : {}),
      });
    },
    async stop() {
      // Engines and sandboxes outlive a stopped host for its next start; there is none here.
      // Engines are ended before the stop too, so that none starts in between unseen.
      const engines = join(dataDir, "engines");
      await killEngineProcesses(engines);
      await host.stop();
      await killEngineProcesses(engines);
      await destroyLeftSandboxes(dataDir);
      await bus.destroy();
      await rm(tempDir, { recursive: true, force: true });
    },
  };
}
