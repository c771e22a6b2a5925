// Test support (not part of the service): the real host of `npm start` on port 0 with the
// catalogue and the sandbox service in it (PGlite and the in-process bus, or PostgreSQL and NATS
// when DATABASE_URL / NATS_URL are set), REST helpers, fixtures, and a record of every event and
// log line the two modules produced, to prove what never appears in them.
import * as os from "node:os";
import * as path from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { sql } from "kysely";
import type { EventBus, Replay } from "@aiem/kit/events";
import { createLogger } from "@aiem/kit/logger";
import type { ServiceDeps } from "@aiem/kit/server";
import { createTestDatabase, ok, type Reply, type RestJson, restCall, TEST_POLICY, waitFor } from "@aiem/kit/testing";
import { createCatalogueModule, type CatalogueModule } from "@aiem/catalogue";
import { EventSchema, type Event } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import { startTestHost, type TestHost } from "../../../edge/src/testing/test-host.js";
import { createClient, createRouterTransport, type Client, type Interceptor } from "@connectrpc/connect";
import { createAuthInterceptor } from "@aiem/kit/server";
import { FilesystemService } from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import { MetricsService } from "@aiem/proto/enginemanager/sandbox/v1/metrics_service_pb.js";
import { ProcessService } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { SandboxEngineService } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_service_pb.js";
import type { SandboxSettings } from "./config.js";
import { createSandboxModule, type SandboxModule, type SandboxModuleDeps } from "./module.js";
import { destroyLeftSandboxes } from "./runtime/index.js";

export { TEST_POLICY, UUID_WORKSPACE as UUID_WS } from "@aiem/kit/testing";

export type Who = "creator" | "member" | "admin" | "viewer" | "anonymous";
export const USERS: Record<Exclude<Who, "anonymous">, string> = {
  creator: "alice",
  member: "bob",
  admin: "root",
  viewer: "carol",
};
export const WS = "team-a";
/** Shared by every test run on this machine: the agent is bundled and the helper compiled once. */
export const AGENT_CACHE = path.join(os.tmpdir(), "aiem-agent-cache-test");

export type { Reply } from "@aiem/kit/testing";

export interface SandboxHarness {
  readonly t: TestHost;
  readonly sandbox: SandboxModule;
  readonly catalogue: CatalogueModule;
  readonly bus: EventBus;
  /** What the host handed the sandbox module, to build other modules beside it. */
  readonly deps: ServiceDeps;
  /** Every log line of both modules, as written. */
  readonly logs: string[];
  /** Every event published under enginemanager.sandboxes, decoded, with its raw bytes. */
  readonly events: { subject: string; event: Event; raw: Uint8Array }[];
  /** Every REST response body read through rest(). */
  readonly responses: string[];
  /** Schemas of extra modules (dropped on stop when on PostgreSQL). */
  readonly extraSchemas: string[];
  rest(
    method: string,
    path: string,
    options?: { who?: Who; user?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply>;
  token(user: string): Promise<string>;
  /** The image and template every sandbox of the tests uses. */
  readonly image: string;
  readonly template: string;
  /** Creates a catalogue image and template (as root) and waits until the sandbox service has them. */
  catalogueFixture(
    id: string,
    template?: Record<string, unknown>,
    image?: Record<string, unknown>,
  ): Promise<{ image: string; template: string }>;
  /** Creates a sandbox as `who` and waits until it runs; returns its JSON. */
  createSandbox(
    id: string,
    options?: { who?: Who; template?: string; body?: Record<string, unknown>; workspace?: string },
  ): Promise<RestJson>;
  /** Waits until the sandbox reaches `state`. */
  waitState(name: string, state: string, timeoutMs?: number): Promise<RestJson>;
  /** Runs a command to its end in a sandbox (as the creator); returns the process and its combined output. */
  run(
    sandbox: string,
    command: string,
    args?: string[],
    process?: Record<string, unknown>,
  ): Promise<{ process: RestJson; output: string }>;
  stop(): Promise<void>;
}

export { CODES, expectError, ok } from "@aiem/kit/testing";

export const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64");
export const unb64 = (s: string) => Buffer.from(s ?? "", "base64");

export interface HarnessOptions {
  readonly settings?: Partial<SandboxSettings>;
  /** The data directory's path under the host's temporary directory (TestHostOptions.dataSubdir). */
  readonly dataSubdir?: string;
}

export async function startSandboxHarness(options: HarnessOptions = {}): Promise<SandboxHarness> {
  const logs: string[] = [];
  const logger = createLogger({ level: "debug", write: (line) => logs.push(line) });
  let catalogue: CatalogueModule | undefined;
  let sandbox: SandboxModule | undefined;
  let bus: EventBus | undefined;
  let sandboxDeps: ServiceDeps | undefined;
  let t: TestHost | undefined;
  t = await startTestHost({
    policy: TEST_POLICY,
    ...(options.dataSubdir === undefined ? {} : { dataSubdir: options.dataSubdir }),
    modules: [
      {
        name: "catalogue",
        create: (deps) =>
          (catalogue = createCatalogueModule({
            ...deps,
            logger: logger.child({ service: "catalogue" }),
            outboxPollInterval: 20,
            catalogueConfig: { pageTokenKey: undefined, secretsKey: undefined, seedDemo: false },
          })),
      },
      {
        name: "sandbox",
        create: (deps) => {
          bus = deps.bus;
          sandboxDeps = { ...deps, logger: logger.child({ service: "sandbox" }) };
          sandbox = createSandboxModule({
            ...deps,
            logger: logger.child({ service: "sandbox" }),
            outboxPollInterval: 20,
            secrets: {
              resolveSecretValue: (principal, name, reveal) => catalogue!.resolveSecretValue(principal, name, reveal),
            },
            sandboxConfig: {
              unconfined: false,
              publicUrl: () => t?.url,
              pageTokenKey: undefined,
              driveDir: path.join(deps.config.dataDir, "drive"),
              outputLimitBytes: 4 << 20,
              warmPoolSize: 0,
              reconcileIntervalMs: 100,
              keepAliveMs: 300,
              agentCacheDir: AGENT_CACHE,
              ...options.settings,
            },
          });
          return sandbox;
        },
      },
    ],
  });
  const host = t;
  const events: SandboxHarness["events"] = [];
  const replay: Replay = bus!.replay({ subjects: "enginemanager.sandboxes.>" }, async (msg) => {
    events.push({ subject: msg.subject, event: fromBinary(EventSchema, msg.data), raw: msg.data });
  });
  await replay.ready;
  const responses: string[] = [];
  const tokens = new Map<string, Promise<string>>();
  const token = (user: string) => {
    let p = tokens.get(user);
    if (!p) {
      p = host.token(user, { admin: user === "root" });
      tokens.set(user, p);
    }
    return p;
  };

  const rest: SandboxHarness["rest"] = async (method, p, o = {}) => {
    const user =
      o.user ?? (o.who === "anonymous" ? undefined : USERS[(o.who ?? "creator") as Exclude<Who, "anonymous">]);
    const bearer = user ? await token(user) : undefined;
    const reply = await restCall(host.url, method, p, {
      ...(bearer ? { token: bearer } : {}),
      body: o.body,
      ...(o.headers ? { headers: o.headers } : {}),
    });
    responses.push(reply.text);
    return reply;
  };

  async function catalogueFixture(
    id: string,
    template: Record<string, unknown> = {},
    image: Record<string, unknown> = {},
  ) {
    const img = ok(
      await rest("POST", `/v1/workspaces/global/sandboxEngineImages?sandboxEngineImageId=${id}`, {
        who: "admin",
        body: { image: "python:3.12-slim", displayName: `Image ${id}`, enabled: true, ...image },
      }),
    ).sandboxEngineImage.name as string;
    const tpl = ok(
      await rest("POST", `/v1/workspaces/global/sandboxEngineTemplates?sandboxEngineTemplateId=${id}`, {
        who: "admin",
        body: {
          displayName: `Template ${id}`,
          memoryBytesLimit: String(512 << 20),
          milliCpuLimit: 1000,
          maxIdleDuration: "3600s",
          enabled: true,
          environmentalVariables: { FROM_TEMPLATE: "template", SHARED: "template" },
          ...template,
        },
      }),
    ).sandboxEngineTemplate.name as string;
    await catalogue!.flushEvents();
    const want = (
      name: string,
      kind: "sandboxEngineImages" | "sandboxEngineTemplates",
      body: Record<string, unknown>,
    ) => {
      const r = sandbox!.catalogue?.get(kind, name) as { enabled?: boolean } | undefined;
      return r !== undefined && r.enabled === (body.enabled ?? true);
    };
    await waitFor(() => want(img, "sandboxEngineImages", image) && want(tpl, "sandboxEngineTemplates", template), {
      timeoutMs: 10_000,
      intervalMs: 10,
      what: "the sandbox service to see the catalogue fixture",
    });
    return { image: img, template: tpl };
  }

  const base = await catalogueFixture("base");

  async function waitState(name: string, state: string, timeoutMs = 15_000) {
    let last = "";
    return waitFor(
      async () => {
        const r = await rest("GET", `/v1/${name}`, { who: "admin" });
        last = r.text;
        return r.status === 200 && r.body.sandboxEngine.state === state && r.body.sandboxEngine;
      },
      { timeoutMs, what: () => `${name} to reach ${state}: ${last}` },
    );
  }

  const harness: SandboxHarness = {
    t: host,
    sandbox: sandbox!,
    catalogue: catalogue!,
    bus: bus!,
    deps: sandboxDeps!,
    logs,
    events,
    responses,
    extraSchemas: [],
    rest,
    token,
    image: base.image,
    template: base.template,
    catalogueFixture,
    async createSandbox(id, o = {}) {
      const ws = o.workspace ?? WS;
      const created = ok(
        await rest("POST", `/v1/workspaces/${ws}/sandboxEngines?sandboxEngineId=${id}`, {
          who: o.who ?? "creator",
          body: { sandboxEngineImage: base.image, sandboxEngineTemplate: o.template ?? base.template, ...o.body },
        }),
      ).sandboxEngine;
      return waitState(created.name, "STATE_RUNNING");
    },
    waitState,
    async run(sandboxName, command, args = [], extra = {}) {
      const created = ok(
        await rest("POST", `/v1/${sandboxName}/processes?autoRun=true`, { body: { command, args, ...extra } }),
      ).process;
      const done = ok(await rest("POST", `/v1/${created.name}:wait`, { body: {} })).process;
      const out = ok(await rest("GET", `/v1/${created.name}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`));
      return { process: done, output: unb64(out.data).toString() };
    },
    async stop() {
      await replay.stop();
      const schemas = [sandbox?.database?.schema, catalogue?.database?.schema, ...harness.extraSchemas].filter(
        (s): s is string => !!s,
      );
      await host.host.stop();
      await destroyLeftSandboxes(host.dataDir);
      await host.stop();
      if (process.env.DATABASE_URL && schemas.length > 0) {
        const admin = await createTestDatabase("sandbox_rest_cleanup");
        for (const schema of schemas) await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
        await admin.destroy();
      }
    },
  };
  return harness;
}

let shared: Promise<SandboxHarness> | undefined;

/** One harness per test file (module graph), shared by the suites the file imports. */
export function sharedHarness(): Promise<SandboxHarness> {
  shared ??= startSandboxHarness();
  return shared;
}

export async function stopSharedHarness(): Promise<void> {
  const h = shared;
  shared = undefined;
  if (h) await (await h).stop();
}

/** Reads an NDJSON stream response until it ends or `until` says stop; returns the parsed lines. */
export async function readNdjson(
  res: Response,
  until?: (line: RestJson, all: RestJson[]) => boolean,
): Promise<RestJson[]> {
  const lines: RestJson[] = [];
  const reader = res.body!.getReader();
  let pending = "";
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    pending += decoder.decode(value, { stream: true });
    for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (!line) continue;
      const parsed = JSON.parse(line);
      lines.push(parsed);
      if (until?.(parsed, lines)) {
        await reader.cancel();
        return lines;
      }
    }
  }
  if (pending.trim()) lines.push(JSON.parse(pending));
  return lines;
}

export async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Polls `check` until it holds; fails after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  await waitFor(check, { timeoutMs, what: () => check.toString() });
}

/** Polls a measure that may still grow until two reads 200 ms apart agree, and returns it. */
export async function settled(measure: () => Promise<number>, timeoutMs = 15_000): Promise<number> {
  let last = await measure();
  for (const deadline = Date.now() + timeoutMs; ; ) {
    await sleep(200);
    const now = await measure();
    if (now === last) return now;
    if (Date.now() > deadline) throw new Error(`still changing after ${timeoutMs} ms (${last} -> ${now})`);
    last = now;
  }
}

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
      const token = await h.token(user);
      const auth: Interceptor = (next) => (req) => {
        req.header.set("authorization", `Bearer ${token}`);
        return next(req);
      };
      const transport = createRouterTransport((router) => module.register(router), {
        router: { interceptors: [interceptor] },
        transport: { interceptors: [auth] },
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
