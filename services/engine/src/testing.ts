// Test support (not part of the service): the real host of `npm start` on port 0 with the
// catalogue and engine parts (PGlite and the in-process bus, or PostgreSQL and NATS when
// DATABASE_URL / NATS_URL are set), REST calls as fixed users of a test policy, catalogue fixtures
// made through the API, and waits for engine states. Engines run as real local processes (the
// stand-in server); stop() kills whatever is left.
import path from "node:path";
import { sql } from "kysely";
import { createTestDatabase, type Reply, type RestJson, restCall, TEST_POLICY, waitFor } from "@aiem/kit/testing";
import { createCatalogueModule, type CatalogueModule } from "@aiem/catalogue";
import { startTestHost, type TestHost } from "../../../edge/src/testing/test-host.js";
import { engineSettings, type EngineSettings } from "./config.js";
import { createEngineModule, type EngineModule } from "./module.js";
import type { EventBus } from "@aiem/kit/events";
import { h2oServerOf } from "./runtime/h2o-server.js";
import { createLocalRuntime, killEngineProcesses, type LocalRuntime } from "./runtime/local-runtime.js";
import type { EngineRunSpec, EngineRuntime, EngineStatus } from "./runtime/runtime.js";

export { TEST_POLICY, TEST_WORKSPACE } from "@aiem/kit/testing";

/** The fixed callers: an administrator, two members, a viewer, a stranger, and nobody. */
export type Who = "admin" | "alice" | "bob" | "viewer" | "stranger" | "erin" | "anonymous";
export const USERS: Record<Exclude<Who, "anonymous">, string> = {
  admin: "root",
  alice: "alice",
  bob: "bob",
  viewer: "carol",
  stranger: "dave",
  erin: "erin",
};

/** Fast reconciler settings for tests; the stand-in server for notebooks unless told otherwise. */
export function testEngineSettings(overrides: Partial<EngineSettings> = {}): EngineSettings {
  return engineSettings({
    reconcileIntervalMs: 100,
    // Own engines' ends are reported at once and limits are due times, so checks can be rare.
    checkIntervalMs: 2_000,
    startTimeoutMs: 30_000,
    stopTimeoutMs: 3_000,
    activityFlushMs: 100,
    jupyterCommand: "none",
    // Only the suites about H2O-3 itself start JVMs; the others need an H2O engine's lifecycle only.
    h2oServer: "stand-in",
    ...overrides,
  });
}

export type { Reply } from "@aiem/kit/testing";

export interface CallOptions {
  readonly who?: Who;
  readonly user?: string;
  readonly roles?: readonly string[];
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** Operations of a GatedRuntime that a test can hold, to keep an engine in a passing state. */
export type GatedOp = "start" | "ready" | "stop" | "remove" | "resize";

/**
 * The local runtime with gates: while a gate is held for an engine (by resource name or uid),
 * `start`, `stop`, `remove` and `resizeStorage` wait, and `inspect` reports a ready engine as
 * still starting. The reconciler then leaves the engine in STARTING, CONNECTING, PAUSING,
 * TERMINATING or DELETING, or with its storage resizing, until the test releases the gate.
 */
export interface GatedRuntime<Inner extends EngineRuntime = LocalRuntime> extends EngineRuntime {
  readonly inner: Inner;
  hold(key: string, op: GatedOp): void;
  release(key: string, op: GatedOp): void;
  /** Releases every gate. */
  releaseAll(): void;
  /** The uid of a started engine by resource name. */
  uidOf(name: string): string | undefined;
}

export function createGatedRuntime<Inner extends EngineRuntime>(inner: Inner): GatedRuntime<Inner> {
  const held = new Set<string>();
  const waiters = new Map<string, Array<() => void>>();
  const names = new Map<string, string>();
  const listeners = new Set<(uid: string) => void>();
  const keysOf = (uid: string) => [uid, names.get(uid) ?? ""];
  const isHeld = (uid: string, op: GatedOp) => keysOf(uid).some((k) => held.has(`${k}|${op}`));
  const pass = async (uid: string, op: GatedOp) => {
    while (isHeld(uid, op)) {
      await new Promise<void>((resolve) => {
        for (const k of keysOf(uid)) {
          const key = `${k}|${op}`;
          waiters.set(key, [...(waiters.get(key) ?? []), resolve]);
        }
      });
    }
  };
  inner.watch((uid) => {
    for (const l of listeners) l(uid);
  });
  return {
    inner,
    placement: inner.placement,
    ...(inner.shared ? { shared: true } : {}),
    hold(key, op) {
      held.add(`${key}|${op}`);
    },
    release(key, op) {
      held.delete(`${key}|${op}`);
      for (const resolve of waiters.get(`${key}|${op}`) ?? []) resolve();
      waiters.delete(`${key}|${op}`);
      const uid = [...names].find(([, n]) => n === key)?.[0] ?? key;
      for (const l of listeners) l(uid);
    },
    releaseAll() {
      for (const entry of [...held]) {
        const i = entry.lastIndexOf("|");
        this.release(entry.slice(0, i), entry.slice(i + 1) as GatedOp);
      }
    },
    uidOf: (name) => [...names].find(([, n]) => n === name)?.[0],
    async start(spec: EngineRunSpec) {
      names.set(spec.uid, spec.name);
      await pass(spec.uid, "start");
      return inner.start(spec);
    },
    async inspect(uid): Promise<EngineStatus> {
      const status = await inner.inspect(uid);
      return status.phase === "ready" && isHeld(uid, "ready") ? { ...status, phase: "starting" } : status;
    },
    async stop(uid) {
      await pass(uid, "stop");
      return inner.stop(uid);
    },
    async remove(uid) {
      await pass(uid, "remove");
      return inner.remove(uid);
    },
    async resizeStorage(uid, bytes) {
      await pass(uid, "resize");
      return inner.resizeStorage(uid, bytes);
    },
    diskUsage: (uid, bytes) => inner.diskUsage(uid, bytes),
    logs: (uid, max) => inner.logs(uid, max),
    ...(inner.logsFrom ? { logsFrom: inner.logsFrom.bind(inner) } : {}),
    endpoint: (uid) => inner.endpoint(uid),
    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => inner.close(),
  };
}

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
          if (options.runtime) {
            // Tests that bring their own runtime never reach `inner`, the local runtime's extras.
            runtime = createGatedRuntime(options.runtime) as unknown as GatedRuntime;
            return createEngineModule({ ...deps, engineConfig: settings, outboxPollInterval: 50, runtime });
          }
          runtime = createGatedRuntime(
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
          return createEngineModule({ ...deps, engineConfig: settings, outboxPollInterval: 50, runtime });
        },
      },
    ],
  });
  url = t.url;
  const engine = t.host.modules.find((m) => m.name === "engine") as EngineModule;
  const catalogue = t.host.modules.find((m) => m.name === "catalogue") as CatalogueModule;
  const schemas = [engine.database!.schema, catalogue.database!.schema];
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

  async function rest(method: string, p: string, o: CallOptions = {}): Promise<Reply> {
    const who = o.who ?? "admin";
    const user = o.user ?? (who === "anonymous" ? undefined : USERS[who]);
    const bearer = user ? await token(user, o.roles) : undefined;
    return restCall(url, method, p, {
      ...(bearer ? { token: bearer } : {}),
      body: o.body,
      ...(o.headers ? { headers: o.headers } : {}),
      redirect: "manual",
    });
  }

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
    async stop() {
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
    },
  };
}

// ---- catalogue fixtures through the API ---------------------------------------------------------

let counter = 0;
/** A fresh id for fixtures and engines. */
export function freshId(prefix = "e"): string {
  return `${prefix}${(++counter).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/** Creates a catalogue resource as the administrator and waits until the engine service sees it. */
export async function catalogueFixture(
  h: EngineTestHost,
  kind:
    | "daiEngineProfiles"
    | "h2oEngineProfiles"
    | "notebookEngineProfiles"
    | "daiEngineVersions"
    | "h2oEngineVersions"
    | "notebookEngineImages",
  id: string,
  body: Record<string, unknown>,
  workspace = "global",
): Promise<RestJson> {
  const idParam = {
    daiEngineProfiles: "daiEngineProfileId",
    h2oEngineProfiles: "h2oEngineProfileId",
    notebookEngineProfiles: "notebookEngineProfileId",
    daiEngineVersions: "daiEngineVersionId",
    h2oEngineVersions: "h2oEngineVersionId",
    notebookEngineImages: "notebookEngineImageId",
  }[kind];
  const r = await h.rest("POST", `/v1/workspaces/${workspace}/${kind}?${idParam}=${encodeURIComponent(id)}`, { body });
  if (r.status !== 200) throw new Error(`could not create ${kind}/${id}: ${r.text}`);
  const resource = Object.values(r.body)[0] as { name: string; updateTime: string };
  await h.syncCatalogue(kind, resource.name);
  return resource;
}

/** Changes a catalogue resource as the administrator and waits until the engine service sees it. */
export async function updateCatalogue(
  h: EngineTestHost,
  name: string,
  body: Record<string, unknown>,
  mask: string,
): Promise<RestJson> {
  const r = await h.rest("PATCH", `/v1/${name}?updateMask=${mask}`, { body });
  if (r.status !== 200) throw new Error(`could not update ${name}: ${r.text}`);
  const resource = Object.values(r.body)[0] as { name: string; updateTime: string };
  const kind = name.split("/")[2]!;
  await h.syncCatalogue(
    kind,
    resource.name,
    (x) =>
      x.updateTime &&
      new Date(Number(x.updateTime.seconds) * 1000 + x.updateTime.nanos / 1e6).toISOString() ===
        new Date(resource.updateTime).toISOString(),
  );
  return resource;
}
