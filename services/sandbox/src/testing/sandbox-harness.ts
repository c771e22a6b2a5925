// The sandbox tests' host: the real host of `npm start` on port 0 with the catalogue and the
// sandbox service in it (PGlite and the in-process bus, or PostgreSQL and NATS when DATABASE_URL /
// NATS_URL are set), with a record of every event and log line the two modules produced, to prove
// what never appears in them.
import * as path from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { sql } from "kysely";
import type { EventBus, Replay } from "@aiem/kit/events";
import { createLogger } from "@aiem/kit/logger";
import type { ServiceDeps } from "@aiem/kit/server";
import { createTestDatabase, type RestJson, waitFor } from "@aiem/kit/testing";
import { createCatalogueModule, type CatalogueModule } from "@aiem/catalogue";
import { EventSchema, type Event } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import { startTestHost, type TestHost } from "../../../../edge/src/testing/test-host.js";
import type { SandboxSettings } from "../config.js";
import { createSandboxModule, type SandboxModule } from "../module.js";
import { destroyLeftSandboxes } from "../runtime/index.js";
import { type CatalogueFixture, createCatalogueFixture } from "./catalogue-fixture.js";
import { AGENT_CACHE, TEST_POLICY, WS, type Who } from "./fixtures.js";
import { ok, unb64 } from "./rest-assertions.js";
import { createRestClient, type RestCall } from "./rest-client.js";

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
  readonly rest: RestCall;
  token(user: string): Promise<string>;
  /** The image and template every sandbox of the tests uses. */
  readonly image: string;
  readonly template: string;
  /** Creates a catalogue image and template (as root) and waits until the sandbox service has them. */
  readonly catalogueFixture: CatalogueFixture;
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

export interface HarnessOptions {
  readonly settings?: Partial<SandboxSettings>;
  /** The data directory's path under the host's temporary directory (TestHostOptions.dataSubdir). */
  readonly dataSubdir?: string;
}

export async function startSandboxHarness(options: HarnessOptions = {}): Promise<SandboxHarness> {
  const logs: string[] = [];
  const { host, catalogue, sandbox, bus, deps } = await startHarnessHost(options, logs);
  const events: SandboxHarness["events"] = [];
  const replay: Replay = bus.replay({ subjects: "enginemanager.sandboxes.>" }, async (msg) => {
    events.push({ subject: msg.subject, event: fromBinary(EventSchema, msg.data), raw: msg.data });
  });
  await replay.ready;
  const responses: string[] = [];
  const { rest, token } = createRestClient(host, responses);
  const catalogueFixture = createCatalogueFixture(rest, catalogue, sandbox);
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
    sandbox,
    catalogue,
    bus,
    deps,
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
      await stopHarnessHost(host, [sandbox.database?.schema, catalogue.database?.schema, ...harness.extraSchemas]);
    },
  };
  return harness;
}

/** The host with the catalogue and the sandbox modules in it, writing their log lines to `logs`. */
async function startHarnessHost(options: HarnessOptions, logs: string[]) {
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
  return { host: t, catalogue: catalogue!, sandbox: sandbox!, bus: bus!, deps: sandboxDeps! };
}

/** Stops the host, removes what its sandboxes left, and drops the tests' schemas on PostgreSQL. */
async function stopHarnessHost(host: TestHost, schemaNames: readonly (string | undefined)[]): Promise<void> {
  const schemas = schemaNames.filter((s): s is string => !!s);
  await host.host.stop();
  await destroyLeftSandboxes(host.dataDir);
  await host.stop();
  if (process.env.DATABASE_URL && schemas.length > 0) {
    const admin = await createTestDatabase("sandbox_rest_cleanup");
    for (const schema of schemas) await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
    await admin.destroy();
  }
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
