// The state machines of spec section 4 (issue 6, part 3), walked over REST. For every state an
// engine of each kind can be in, a fresh engine is brought there (passing states are held there
// with the gated runtime), then every call is made: the calls the state allows succeed, the others
// fail with FAILED_PRECONDITION (400) naming the state. The transitions themselves are walked
// and checked against the state events the service publishes.
import { rm } from "node:fs/promises";
import path from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { waitFor as waitForCondition } from "@aiem/kit/testing";
import { EventSchema } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import { Engine_State } from "@aiem/proto/enginemanager/v1/engine_pb.js";
import { DAI, H2O, NOTEBOOK, type EngineAction, type EngineKind } from "./kinds.js";
import {
  bodyOf,
  createEngine,
  deleteAllEngines,
  expectError,
  get,
  h,
  ok,
  post,
  res,
  type KindKey,
} from "./testing/rest-suite.js";
import { freshId, type Reply } from "./testing/index.js";

const GiB = 1024 ** 3;
const KIND_OF: Record<KindKey, EngineKind> = { dai: DAI, h2o: H2O, notebook: NOTEBOOK };

type Setup = (name: string, kind: KindKey) => Promise<void>;

/** Runs the engine, then calls `action` on it while the runtime holds its stop, so that it stays on the way. */
const whileStopping =
  (action: "pause" | "terminate"): Setup =>
  async (name, kind) => {
    await running(kind, name);
    h().runtime.hold(name, "stop");
    ok(await post(`/v1/${name}:${action}`, { who: "alice" }));
  };

/** Brings a new engine named `name` to a state. Holds stay in place until the engine is released. */
const REACH: Record<string, { kinds: KindKey[]; setup: Setup }> = {
  STATE_STARTING: {
    kinds: ["dai", "h2o", "notebook"],
    async setup(name, kind) {
      h().runtime.hold(name, "start");
      await create(kind, name);
    },
  },
  STATE_CONNECTING: {
    kinds: ["dai", "h2o"],
    async setup(name, kind) {
      h().runtime.hold(name, "ready");
      await create(kind, name);
      await h().waitForState(name, "STATE_CONNECTING");
    },
  },
  STATE_RUNNING: { kinds: ["dai", "h2o", "notebook"], setup: (name, kind) => running(kind, name) },
  STATE_PAUSING: { kinds: ["dai", "notebook"], setup: whileStopping("pause") },
  STATE_PAUSED: {
    kinds: ["dai", "notebook"],
    async setup(name, kind) {
      await running(kind, name);
      ok(await post(`/v1/${name}:pause`, { who: "alice" }));
      await h().waitForState(name, "STATE_PAUSED");
    },
  },
  STATE_FAILED: {
    kinds: ["dai", "h2o", "notebook"],
    async setup(name, kind) {
      await running(kind, name);
      const pid = await h().runtime.inner.pid(h().runtime.uidOf(name)!);
      process.kill(pid!, "SIGTERM");
      await h().waitForState(name, "STATE_FAILED");
    },
  },
  STATE_DELETING: {
    kinds: ["dai", "h2o", "notebook"],
    async setup(name, kind) {
      await running(kind, name);
      h().runtime.hold(name, "remove");
      ok(await h().rest("DELETE", `/v1/${name}`, { who: "alice" }));
    },
  },
  STATE_TERMINATING: { kinds: ["h2o"], setup: whileStopping("terminate") },
  STATE_TERMINATED: {
    kinds: ["h2o", "notebook"],
    async setup(name, kind) {
      await running(kind, name);
      if (kind === "h2o") {
        ok(await post(`/v1/${name}:terminate`, { who: "alice" }));
      } else {
        // A notebook whose storage is gone cannot be resumed: it ends terminated.
        ok(await post(`/v1/${name}:pause`, { who: "alice" }));
        await h().waitForState(name, "STATE_PAUSED");
        await rm(path.join(h().runtime.inner.engineDir(h().runtime.uidOf(name)!), "data"), {
          recursive: true,
          force: true,
        });
        ok(await post(`/v1/${name}:resume`, { who: "alice" }));
      }
      const e = await h().waitForState(name, "STATE_TERMINATED");
      if (kind === "notebook") expect(e.failureMessage).toContain("storage is gone");
    },
  },
};

function create(kind: KindKey, name: string): Promise<Reply> {
  const id = name.split("/").pop()!;
  // DAI engines start on 1.10.5 so that an upgrade has somewhere to go.
  const body =
    kind === "dai" ? bodyOf("dai", { daiEngineVersion: "workspaces/global/daiEngineVersions/1.10.5" }) : bodyOf(kind);
  return createEngine(kind, { id, body }).then((r) => {
    expect(r.status, r.text).toBe(200);
    return r;
  });
}

async function running(kind: KindKey, name: string): Promise<void> {
  await create(kind, name);
  await h().waitForState(name, "STATE_RUNNING");
}

/** One probe per call; mutating probes come last, state-changing ones at the very end. */
const PROBES: Array<{ action: EngineAction; call: (name: string, kind: KindKey) => Promise<Reply> }> = [
  { action: "pause", call: (n) => post(`/v1/${n}:pause`, { who: "alice", body: { validateOnly: true } }) },
  { action: "resume", call: (n) => post(`/v1/${n}:resume`, { who: "alice", body: { validateOnly: true } }) },
  { action: "downloadLogs", call: (n) => post(`/v1/${n}:downloadLogs`, { who: "alice" }) },
  { action: "access", call: (n) => get(`/v1/${n}:access`, { who: "alice" }) },
  { action: "migrateCreator", call: (n) => post(`/v1/${n}:migrateCreator`, { body: { newCreator: "users/alice" } }) },
  {
    action: "update",
    call: (n, kind) =>
      h().rest("PATCH", `/v1/${n}?updateMask=display_name${kind === "dai" ? "&validateOnly=true" : ""}`, {
        who: "alice",
        body: { displayName: "probe" },
      }),
  },
  {
    action: "resizeStorage",
    call: (n) => post(`/v1/${n}:resizeStorage`, { who: "alice", body: { newStorageBytes: String(17 * GiB) } }),
  },
  {
    action: "upgradeVersion",
    call: (n) =>
      post(`/v1/${n}:upgradeDAIEngineVersion`, {
        who: "alice",
        body: { newDaiEngineVersion: "workspaces/global/daiEngineVersions/1.10.6" },
      }),
  },
  {
    action: "delete",
    call: (n, kind) =>
      h().rest("DELETE", `/v1/${n}${kind === "notebook" ? "" : "?validateOnly=true"}`, { who: "alice" }),
  },
  { action: "terminate", call: (n) => post(`/v1/${n}:terminate`, { who: "alice" }) },
];

/** The calls a kind has (a call it lacks is not served at all). */
function probesOf(kind: KindKey) {
  const k = KIND_OF[kind];
  return PROBES.filter((p) => k.allowed[p.action] !== undefined);
}

const cases = Object.entries(REACH).flatMap(([state, r]) => r.kinds.map((kind) => [kind, state] as const));

// The cases are independent engines, so they run side by side.
describe.concurrent("every call in every state", () => {
  it.each(cases)("%s engine in %s", async (kind, state) => {
    const name = `workspaces/team-a/${KIND_OF[kind].type}/${freshId("sm")}`;
    await REACH[state]!.setup(name, kind);
    expect(res(await get(`/v1/${name}`, { who: "alice" })).state).toBe(state);
    const k = KIND_OF[kind];
    for (const probe of probesOf(kind)) {
      // A notebook delete has no validate_only: it happens, so it goes last of all.
      if (probe.action === "delete" && kind === "notebook" && (k.allowed.delete as readonly string[]).includes(state))
        continue;
      const r = await probe.call(name, kind);
      const allowed = (k.allowed[probe.action] as readonly string[]).includes(state);
      if (allowed) {
        expect(r.status, `${probe.action} in ${state}: ${r.text}`).toBe(200);
      } else {
        expectError(r, "FAILED_PRECONDITION", `is ${state}`);
        expect(r.body.message, r.text).toMatch(/^cannot /);
      }
      if (probe.action === "resizeStorage" && allowed) {
        await waitFor(async () => res(await get(`/v1/${name}`, { who: "alice" })).storageResizing === false);
      }
    }
    if (kind === "notebook" && (k.allowed.delete as readonly string[]).includes(state)) {
      expect(res(await h().rest("DELETE", `/v1/${name}`, { who: "alice" })).state).toBe("STATE_DELETING");
    }
    for (const op of ["start", "ready", "stop", "remove"] as const) h().runtime.release(name, op);
    // Every engine settles once released: it runs, stops, or is gone.
    await waitFor(async () => {
      const r = await get(`/v1/${name}`, { who: "alice" });
      return r.status === 404 || (r.status === 200 && res(r).reconciling === false);
    });
  });
});

describe("transitions", () => {
  it("publish one state event per change, from create to deletion", async () => {
    const seen: Array<{ engine: string; previous: string; state: string; reconciling: boolean; snapshot: boolean }> =
      [];
    const name = `workspaces/team-a/daiEngines/${freshId("ev")}`;
    const replay = h().bus.replay({ subjects: "enginemanager.engines.>" }, async (msg) => {
      const event = fromBinary(EventSchema, msg.data);
      if (event.payload.case !== "engineStateChanged" || event.payload.value.engine !== name) return;
      const p = event.payload.value;
      expect(event.source).toBe("engine");
      expect(msg.subject).toBe(`enginemanager.engines.team-a.${name.split("/").pop()}.state`);
      seen.push({
        engine: p.engine,
        previous: Engine_State[p.previousState],
        state: Engine_State[p.state],
        reconciling: p.reconciling,
        snapshot: p.snapshot.case === "daiEngine",
      });
    });
    try {
      await running("dai", name);
      ok(await post(`/v1/${name}:pause`, { who: "alice" }));
      await h().waitForState(name, "STATE_PAUSED");
      ok(await post(`/v1/${name}:resume`, { who: "alice" }));
      await h().waitForState(name, "STATE_RUNNING");
      const pid = await h().runtime.inner.pid(h().runtime.uidOf(name)!);
      process.kill(pid!, "SIGKILL");
      const failed = await h().waitForState(name, "STATE_FAILED");
      expect(failed.failureMessage).toContain("SIGKILL");
      ok(await post(`/v1/${name}:resume`, { who: "alice" }));
      await h().waitForState(name, "STATE_RUNNING");
      ok(await h().rest("DELETE", `/v1/${name}`, { who: "alice" }));
      await h().waitForGone(name);
      await h().engine.flushEvents();
      await waitFor(async () => seen.some((e) => e.state === "UNSPECIFIED"));
      const steps = seen.map((e) => `${e.previous}>${e.state}${e.reconciling ? "*" : ""}`);
      expect(steps).toEqual([
        "UNSPECIFIED>STARTING*",
        "STARTING>CONNECTING*",
        "CONNECTING>RUNNING",
        "RUNNING>PAUSING*",
        "PAUSING>PAUSED",
        "PAUSED>STARTING*",
        "STARTING>CONNECTING*",
        "CONNECTING>RUNNING",
        "RUNNING>FAILED",
        "FAILED>STARTING*",
        "STARTING>CONNECTING*",
        "CONNECTING>RUNNING",
        "RUNNING>DELETING*",
        "DELETING>UNSPECIFIED",
      ]);
      expect(seen.slice(0, -1).every((e) => e.snapshot)).toBe(true);
      expect(seen[seen.length - 1]!.snapshot).toBe(false);
    } finally {
      await replay.stop();
    }
  });

  it("turn a notebook killed by SIGKILL into FAILED, out of memory, and an exit into FAILED, process failed", async () => {
    const a = `workspaces/team-a/notebookEngines/${freshId("oom")}`;
    const b = `workspaces/team-a/notebookEngines/${freshId("crash")}`;
    await Promise.all([running("notebook", a), running("notebook", b)]);
    process.kill((await h().runtime.inner.pid(h().runtime.uidOf(a)!))!, "SIGKILL");
    const ea = await h().waitForState(a, "STATE_FAILED");
    expect(ea.failureReason).toBe("FAILURE_REASON_OOM_KILLED");
    expect(ea.failureMessage).toContain("ran out of memory");
    const uid = h().runtime.uidOf(b)!;
    const r = await fetch(`${h().url}/engines/${uid}/api/crash?code=3`, {
      headers: { authorization: `Bearer ${await h().token("alice")}` },
    });
    expect(r.status).toBe(200);
    const eb = await h().waitForState(b, "STATE_FAILED");
    expect(eb.failureReason).toBe("FAILURE_REASON_PROCESS_FAILED");
    expect(eb.failureMessage).toBe("the engine process exited with code 3");
    // Resuming clears the failure.
    ok(await post(`/v1/${a}:resume`, { who: "alice" }));
    const back = await h().waitForState(a, "STATE_RUNNING");
    expect(back.failureReason).toBe("FAILURE_REASON_UNSPECIFIED");
    expect(back.failureMessage).toBe("");
  });

  it("fail an engine that does not get healthy in time", async () => {
    const stuck = `workspaces/team-a/h2oEngines/${freshId("stuck")}`;
    h().runtime.hold(stuck, "ready");
    await create("h2o", stuck);
    await h().waitForState(stuck, "STATE_CONNECTING");
    // As if it had been connecting for an hour: past the start timeout.
    await h()
      .engine.database!.db.updateTable("engines")
      .set({ start_time: new Date(Date.now() - 3_600_000), next_reconcile_at: new Date() })
      .where("name", "=", stuck)
      .execute();
    h().engine.reconcileNow();
    const failed = await h().waitForState(stuck, "STATE_FAILED");
    expect(failed.failureMessage).toMatch(/did not answer its health check within \d+ s/);
    h().runtime.release(stuck, "ready");
  });

  it("let an engine be paused while its start is under way", async () => {
    const slow = `workspaces/team-a/daiEngines/${freshId("slow")}`;
    h().runtime.hold(slow, "start");
    await create("dai", slow);
    await waitFor(async () => h().runtime.uidOf(slow) !== undefined);
    // Paused while the runtime is starting it: it ends paused, not running.
    ok(await post(`/v1/${slow}:pause`, { who: "alice" }));
    h().runtime.release(slow, "start");
    await h().waitForState(slow, "STATE_PAUSED");
    expect((await h().runtime.inspect(h().runtime.uidOf(slow)!)).phase).toBe("stopped");
  });
});

const waitFor = (check: () => Promise<boolean>, timeoutMs = 15_000) =>
  waitForCondition(check, { timeoutMs, intervalMs: 25 });

describe("after the suite", () => {
  it("deletes every engine it made", deleteAllEngines, 90_000);
});
