// Test support (not part of the service): the real host of `npm start` on port 0 with the
// catalogue and engine parts (PGlite and the in-process bus, or PostgreSQL and NATS when
// DATABASE_URL / NATS_URL are set), REST calls as fixed users of a test policy, and waits for
// engine states. Engines run as real local processes (the stand-in server); stop() kills whatever
// is left.
import path from "node:path";
import { sql } from "kysely";
import { createTestDatabase, type RestJson, waitFor } from "@aiem/kit/testing";
import type { EventBus } from "@aiem/kit/events";
import type { ServiceDeps } from "@aiem/kit/server";
import { createCatalogueModule, type CatalogueModule } from "@aiem/catalogue";
import { startTestHost, type TestHost } from "../../../../edge/src/testing/test-host.js";
import type { EngineSettings } from "../config.js";
import { createEngineModule, type EngineModule } from "../module.js";
import { h2oServerOf } from "../runtime/h2o-server.js";
import { createLocalRuntime, killEngineProcesses } from "../runtime/local-runtime.js";
import type { EngineRuntime } from "../runtime/runtime.js";
import { createGatedRuntime, type GatedRuntime } from "./gated-runtime.js";
import { createRestClient, type CallOptions, type Reply } from "./rest-client.js";
import { TEST_POLICY, testEngineSettings } from "./test-policy.js";

export interface EngineTestHost {
  readonly t: TestHost;
  /** The host's event bus. */
  readonly bus: EventBus;
  /** The engine module's runtime, with gates. */
  readonly runtime: GatedRuntime;
  readonly url: string;
  readonly dataDir: string;
  readonly engine: EngineModule;
  readonly catalogue: CatalogueModule;
  token(user: string, roles?: readonly string[]): Promise<string>;
  rest(method: string, path: string, options?: CallOptions): Promise<Reply>;
  /** Creates the engine `id` in team-a's `collection` (`notebookEngines`...) as alice; throws unless accepted. */
  create(collection: string, id: string, body: object): Promise<string>;
  /** Waits until the engine read model holds `name` of `kind` and `check` holds for it. */
  syncCatalogue(kind: string, name: string, check?: (r: RestJson) => boolean): Promise<void>;
  /** Polls GET until the engine is in `state` (a full enum name); returns it. */
  waitForState(name: string, state: string | readonly string[], timeoutMs?: number): Promise<RestJson>;
  /** Polls GET until the engine is gone (404). */
  waitForGone(name: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface EngineTestHostOptions {
  readonly settings?: Partial<EngineSettings>;
  readonly seedDemo?: boolean;
  readonly policy?: string;
  /** Runs engines on this runtime (gated) instead of the local one; the host closes it when it stops. */
  readonly runtime?: EngineRuntime;
}

export async function startEngineTestHost(options: EngineTestHostOptions = {}): Promise<EngineTestHost> {
  let url = "";
  let bus: EventBus | undefined;
  let runtime: GatedRuntime | undefined;
  const settings = testEngineSettings({ publicUrl: () => url, ...options.settings });
  const t = await startTestHost({
    policy: options.policy ?? TEST_POLICY,
    modules: [
      {
        name: "catalogue",
        create: (deps) =>
          createCatalogueModule({
            ...deps,
            outboxPollInterval: 50,
            catalogueConfig: { pageTokenKey: undefined, secretsKey: undefined, seedDemo: options.seedDemo ?? false },
          }),
      },
      {
        name: "engine",
        create: (deps) => {
          bus = deps.bus;
          runtime = gatedRuntimeOf(deps, settings, options.runtime);
          return createEngineModule({ ...deps, engineConfig: settings, outboxPollInterval: 50, runtime });
        },
      },
    ],
  });
  url = t.url;
  const engine = t.host.modules.find((m) => m.name === "engine") as EngineModule;
  const catalogue = t.host.modules.find((m) => m.name === "catalogue") as CatalogueModule;
  const tokens = new Map<string, Promise<string>>();
  const token = (user: string, roles: readonly string[] = []) => {
    const key = `${user}|${roles.join(",")}`;
    let p = tokens.get(key);
    if (!p) {
      p = t.token(user, { roles: [...roles] });
      tokens.set(key, p);
    }
    return p;
  };
  const rest = createRestClient(() => url, token);
  return {
    t,
    bus: bus!,
    runtime: runtime!,
    url,
    dataDir: t.dataDir,
    engine,
    catalogue,
    token,
    rest,
    async create(collection, id, body) {
      const singular = collection.replace(/s$/, "");
      const r = await rest("POST", `/v1/workspaces/team-a/${collection}?${singular}Id=${id}`, { who: "alice", body });
      if (r.status !== 200) throw new Error(`creating ${singular} ${id}: ${r.status} ${r.text}`);
      return `workspaces/team-a/${collection}/${id}`;
    },
    ...createWaits(engine, catalogue, rest),
    stop: () => stopHost(t, [engine.database!.schema, catalogue.database!.schema]),
  };
}

/** The runtime a test brings, or the local one under the host's data directory, with gates. */
function gatedRuntimeOf(deps: ServiceDeps, settings: EngineSettings, own: EngineRuntime | undefined): GatedRuntime {
  // Tests that bring their own runtime never reach `inner`, the local runtime's extras.
  if (own) return createGatedRuntime(own) as unknown as GatedRuntime;
  return createGatedRuntime(
    createLocalRuntime({
      root: path.join(deps.config.dataDir, "engines"),
      jupyterCommand:
        settings.jupyterCommand && settings.jupyterCommand !== "none" ? settings.jupyterCommand : undefined,
      h2o: h2oServerOf(settings),
      startTimeoutMs: settings.startTimeoutMs,
      stopTimeoutMs: settings.stopTimeoutMs,
      logger: deps.logger,
    }),
  );
}

function createWaits(
  engine: EngineModule,
  catalogue: CatalogueModule,
  rest: (method: string, path: string, options?: CallOptions) => Promise<Reply>,
): Pick<EngineTestHost, "syncCatalogue" | "waitForState" | "waitForGone"> {
  return {
    async syncCatalogue(kind, name, check = () => true) {
      await catalogue.flushEvents();
      await waitFor(
        () => {
          const r = engine.catalogue?.get(kind as never, name);
          return r !== undefined && check(r);
        },
        { timeoutMs: 10_000, intervalMs: 10, what: `the engine service to see ${name}` },
      );
    },
    async waitForState(name, state, timeoutMs = 20_000) {
      const wanted = typeof state === "string" ? [state] : state;
      let last: unknown;
      return waitFor(
        async () => {
          const r = await rest("GET", `/v1/${name}`);
          const resource: RestJson = r.body ? Object.values(r.body)[0] : undefined;
          last = resource ?? r.text;
          return r.status === 200 && wanted.includes(resource.state ?? "") && resource;
        },
        { timeoutMs, intervalMs: 25, what: () => `${name} to be ${wanted.join(" or ")}: ${JSON.stringify(last)}` },
      );
    },
    async waitForGone(name, timeoutMs = 20_000) {
      let last = "";
      await waitFor(
        async () => {
          const r = await rest("GET", `/v1/${name}`);
          last = r.text;
          return r.status === 404;
        },
        { timeoutMs, intervalMs: 25, what: () => `${name} to disappear: ${last}` },
      );
    },
  };
}

/** Stops the host and whatever engines are left, and drops its schemas from a shared database. */
async function stopHost(t: TestHost, schemas: readonly string[]): Promise<void> {
  const root = path.join(t.dataDir, "engines");
  await killEngineProcesses(root);
  await t.host.stop();
  await killEngineProcesses(root);
  await t.stop();
  if (process.env.DATABASE_URL) {
    const admin = await createTestDatabase("engine_cleanup");
    for (const schema of schemas) await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
    await admin.destroy();
  }
}
