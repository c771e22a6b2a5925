// A second sandbox module beside the harness's host, with settings of its own.
import * as path from "node:path";
import { createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { createAuthInterceptor } from "@aiem/kit/server";
import { waitFor } from "@aiem/kit/testing";
import { FilesystemService } from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import { MetricsService } from "@aiem/proto/enginemanager/sandbox/v1/metrics_service_pb.js";
import { ProcessService } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { type SandboxEngine, SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { SandboxEngineService } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_service_pb.js";
import type { SandboxSettings } from "../config.js";
import { createSandboxModule, type SandboxModule, type SandboxModuleDeps } from "../module.js";
import { destroyLeftSandboxes } from "../runtime/index.js";
import { bearer } from "./connect-transport.js";
import { AGENT_CACHE, WS } from "./fixtures.js";
import type { SandboxHarness } from "./sandbox-harness.js";

export interface ExtraModule {
  readonly module: SandboxModule;
  readonly dataDir: string;
  /** Connect clients (in memory, behind the real auth interceptor) calling as `user`. */
  clients(user: string): Promise<ExtraClients>;
  stop(): Promise<void>;
}

export interface ExtraClients {
  readonly engines: Client<typeof SandboxEngineService>;
  readonly processes: Client<typeof ProcessService>;
  readonly filesystem: Client<typeof FilesystemService>;
  readonly metrics: Client<typeof MetricsService>;
}

/**
 * Another sandbox module beside the host's, on its own schema and data directory, with other
 * settings (no bubblewrap, unconfined, a warm pool, a runtime that cannot start). It shares the
 * host's bus (and so its catalogue), policy and tokens.
 */
export async function startExtraModule(
  h: SandboxHarness,
  name: string,
  settings: Partial<SandboxSettings> = {},
  extra: Partial<SandboxModuleDeps> = {},
): Promise<ExtraModule> {
  const dataDir = path.join(h.t.dataDir, name);
  const module = createSandboxModule({
    ...h.deps,
    config: { ...h.deps.config, dataDir },
    openDatabase: async (schema) => {
      const db = await h.deps.openDatabase(`${schema}_${name.replace(/[^a-z0-9]/g, "")}`);
      h.extraSchemas.push(db.schema);
      return db;
    },
    outboxPollInterval: 20,
    secrets: {
      resolveSecretValue: (principal, version, reveal) => h.catalogue.resolveSecretValue(principal, version, reveal),
    },
    sandboxConfig: {
      unconfined: false,
      publicUrl: h.t.url,
      pageTokenKey: undefined,
      driveDir: path.join(dataDir, "drive"),
      outputLimitBytes: 1 << 20,
      warmPoolSize: 0,
      reconcileIntervalMs: 100,
      keepAliveMs: 300,
      agentCacheDir: AGENT_CACHE,
      ...settings,
    },
    ...extra,
  });
  await module.start();
  const interceptor = createAuthInterceptor(h.deps.authenticator);
  return {
    module,
    dataDir,
    async clients(user) {
      const transport = createRouterTransport((router) => module.register(router), {
        router: { interceptors: [interceptor] },
        transport: { interceptors: [bearer(await h.token(user))] },
      });
      return {
        engines: createClient(SandboxEngineService, transport),
        processes: createClient(ProcessService, transport),
        filesystem: createClient(FilesystemService, transport),
        metrics: createClient(MetricsService, transport),
      };
    },
    async stop() {
      await module.stop();
      await destroyLeftSandboxes(dataDir);
    },
  };
}

/** Creates the sandbox `id` from the harness's image and template through `clients`, and waits until it runs. */
export async function createRunningSandbox(
  h: SandboxHarness,
  clients: ExtraClients,
  id: string,
): Promise<SandboxEngine> {
  const { sandboxEngine } = await clients.engines.createSandboxEngine({
    parent: `workspaces/${WS}`,
    sandboxEngineId: id,
    sandboxEngine: { sandboxEngineImage: h.image, sandboxEngineTemplate: h.template },
  });
  const { name } = sandboxEngine!;
  const running = async () =>
    (await clients.engines.getSandboxEngine({ name })).sandboxEngine?.state === SandboxEngine_State.RUNNING;
  await waitFor(running, { timeoutMs: 15_000, what: `${name} to run` });
  return sandboxEngine!;
}
