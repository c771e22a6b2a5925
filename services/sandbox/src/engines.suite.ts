// Sandbox engines over REST: create, get, list, delete, :terminate; the states of spec section 4
// and their events; the rules of section 5 (ids, display names, annotations, required and
// immutable image and template); the catalogue snapshots; idle termination.
import { beforeAll, describe, expect, it } from "vitest";
import { type RestJson, waitFor as waitForCondition } from "@aiem/kit/testing";
import { createClient } from "@connectrpc/connect";
import { FilesystemService } from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import { PortService } from "@aiem/proto/enginemanager/sandbox/v1/port_service_pb.js";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { SandboxEngineService } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_service_pb.js";
import { SEEN_RUNNING_GRACE_MS } from "./store.js";
import {
  b64,
  connectTransport,
  expectError,
  ok,
  sharedHarness,
  sleep,
  UUID_WS,
  WS,
  type SandboxHarness,
} from "./testing/index.js";

let h: SandboxHarness;
let n = 0;
const id = (prefix = "e") => `${prefix}${++n}`;
const seconds = (d: string) => Number(d.replace(/s$/, ""));

beforeAll(async () => {
  h = await sharedHarness();
});

const stateEvents = (name: string) =>
  h.events
    .filter((e) => e.event.payload.case === "sandboxEngineStateChanged" && e.event.payload.value.sandboxEngine === name)
    .map((e) => {
      const v = e.event.payload.value as { previousState: number; state: number; snapshot?: unknown };
      return [SandboxEngine_State[v.previousState], SandboxEngine_State[v.state], v.snapshot !== undefined] as const;
    });

/** Waits for `check`, letting the module publish its events between two looks. */
const eventually = <T>(check: () => T, timeoutMs = 5_000) =>
  waitForCondition(
    async () => {
      const value = check();
      if (!value) await h.sandbox.flushEvents();
      return value;
    },
    { timeoutMs },
  );

describe("sandbox engines: create and get", () => {
  it("returns STATE_STARTING at once, then runs; keeps the image and template as they were", async () => {
    const sid = id();
    const r = ok(
      await h.rest("POST", `/v1/workspaces/${WS}/sandboxEngines?sandboxEngineId=${sid}`, {
        body: {
          sandboxEngineImage: h.image,
          sandboxEngineTemplate: h.template,
          displayName: "My sandbox",
          annotations: { team: "a", "k.8s_io-x": "v" },
          // Output-only fields a client sends are ignored.
          uid: "forged",
          state: "STATE_RUNNING",
          creator: "users/mallory",
          createTime: "2001-01-01T00:00:00Z",
        },
      }),
    ).sandboxEngine;
    expect(r).toMatchObject({
      name: `workspaces/${WS}/sandboxEngines/${sid}`,
      displayName: "My sandbox",
      state: "STATE_STARTING",
      creator: "users/alice",
      sandboxEngineImage: h.image,
      sandboxEngineTemplate: h.template,
      annotations: { team: "a", "k.8s_io-x": "v" },
    });
    expect(r.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.createTime).not.toBe("2001-01-01T00:00:00Z");
    expect(r.sandboxEngineImageInfo).toMatchObject({
      name: h.image,
      image: "python:3.12-slim",
      enabled: true,
      creator: "users/root",
    });
    expect(r.sandboxEngineTemplateInfo).toMatchObject({
      name: h.template,
      memoryBytesLimit: String(512 << 20),
      memoryBytesRequest: String(512 << 20),
      milliCpuLimit: 1000,
      maxIdleDuration: "3600s",
      // The fixture leaves it unset: the catalogue's default.
      maxRunningDuration: "28800s",
      environmentalVariables: { FROM_TEMPLATE: "template", SHARED: "template" },
    });
    // A cold create starts the agent before it answers: the answer says what the start is at.
    expect([
      ["PENDING_REASON_CREATING_RESOURCES", "setting up the sandbox's isolated environment"],
      ["PENDING_REASON_WAITING_READINESS", "waiting for the sandbox's agent to answer"],
    ]).toContainEqual([r.pendingReason, r.pendingMessage]);
    const running = await h.waitState(r.name, "STATE_RUNNING");
    expect(running.uid).toBe(r.uid);
    expect(running).toMatchObject({ pendingReason: "PENDING_REASON_UNSPECIFIED", pendingMessage: "" });
    expect(seconds(running.currentIdleDuration)).toBeGreaterThanOrEqual(0);
    // Later changes to the template do not reach the copy.
    ok(
      await h.rest("PATCH", `/v1/${h.template}?updateMask=display_name`, {
        who: "admin",
        body: { displayName: "Renamed" },
      }),
    );
    await h.catalogue.flushEvents();
    await eventually(
      () =>
        (h.sandbox.catalogue!.get("sandboxEngineTemplates", h.template) as { displayName: string }).displayName ===
        "Renamed",
    );
    const again = ok(await h.rest("GET", `/v1/${r.name}`)).sandboxEngine;
    expect(again.sandboxEngineTemplateInfo.displayName).toBe("Template base");
    expect(stateEvents(r.name).slice(0, 2)).toEqual([
      ["UNSPECIFIED", "STARTING", true],
      ["STARTING", "RUNNING", true],
    ]);
  });

  it("refuses calls into a running sandbox until a read has shown it RUNNING; a list shows it too", async () => {
    const created = ok(
      await h.rest("POST", `/v1/workspaces/${WS}/sandboxEngines?sandboxEngineId=${id("seen")}`, {
        body: { sandboxEngineImage: h.image, sandboxEngineTemplate: h.template },
      }),
    ).sandboxEngine;
    const stateRow = async () =>
      (await h.sandbox
        .database!.db.selectFrom("sandbox_engines")
        .select(["state", "seen_running"])
        .where("uid", "=", created.uid)
        .executeTakeFirstOrThrow()) as { state: string; seen_running: boolean };
    // Running already, as far as the service knows, but nobody has read it so.
    const until = Date.now() + 15_000;
    while ((await stateRow()).state !== "STATE_RUNNING") {
      if (Date.now() > until) throw new Error("the sandbox did not start");
      await sleep(20);
    }
    const stat = () => h.rest("GET", `/v1/${created.name}/filesystem:statFile?path=/`);
    // On a machine slow enough to take the whole grace to start it, the call is served as the
    // grace has passed: that is the rule too, but not this test's subject.
    if (Date.now() - Date.parse(created.createTime) > SEEN_RUNNING_GRACE_MS - 1_000) return;
    const early = await stat();
    expect(early.status).toBe(400);
    expect(early.body.message).toBe(`${created.name} is not in running state: it is STATE_STARTING`);
    expect((await stateRow()).seen_running).toBe(false);
    const listed = ok(await h.rest("GET", `/v1/workspaces/${WS}/sandboxEngines?pageSize=1000`)).sandboxEngines;
    expect(listed.find((e: { name: string }) => e.name === created.name).state).toBe("STATE_RUNNING");
    expect((await stateRow()).seen_running).toBe(true);
    expect(ok(await stat()).fileInfo.path).toBe("/");
  });

  it("needs a well-formed, unused sandboxEngineId", async () => {
    const body = { sandboxEngineImage: h.image, sandboxEngineTemplate: h.template };
    expectError(
      await h.rest("POST", `/v1/workspaces/${WS}/sandboxEngines`, { body }),
      "INVALID_ARGUMENT",
      "sandbox_engine_id",
    );
    for (const bad of ["Upper", "9lives", "a".repeat(64), "bad-", "x_y"]) {
      expectError(
        await h.rest("POST", `/v1/workspaces/${WS}/sandboxEngines?sandboxEngineId=${bad}`, { body }),
        "INVALID_ARGUMENT",
        "sandbox_engine_id",
      );
    }
    const taken = await h.createSandbox(id());
    expectError(
      await h.rest("POST", `/v1/workspaces/${WS}/sandboxEngines?sandboxEngineId=${taken.name.split("/").pop()}`, {
        body,
      }),
      "ALREADY_EXISTS",
      taken.name,
    );
    ok(await h.rest("POST", `/v1/workspaces/${WS}/sandboxEngines?sandboxEngineId=${"a".repeat(63)}`, { body }));
  });

  it("needs an existing, enabled image and template", async () => {
    const post = (body: Record<string, unknown>) =>
      h.rest("POST", `/v1/workspaces/${WS}/sandboxEngines?sandboxEngineId=${id()}`, { body });
    expectError(
      await post({ sandboxEngineTemplate: h.template }),
      "INVALID_ARGUMENT",
      "sandbox_engine.sandbox_engine_image",
    );
    expectError(
      await post({ sandboxEngineImage: h.image }),
      "INVALID_ARGUMENT",
      "sandbox_engine.sandbox_engine_template",
    );
    expectError(
      await post({ sandboxEngineImage: "images/x", sandboxEngineTemplate: h.template }),
      "INVALID_ARGUMENT",
      "sandbox_engine.sandbox_engine_image",
    );
    expectError(
      await post({ sandboxEngineImage: h.image, sandboxEngineTemplate: "workspaces/global/sandboxEngineImages/base" }),
      "INVALID_ARGUMENT",
      "sandbox_engine.sandbox_engine_template",
    );
    const missing = "workspaces/global/sandboxEngineImages/nope";
    expectError(
      await post({ sandboxEngineImage: missing, sandboxEngineTemplate: h.template }),
      "FAILED_PRECONDITION",
      missing,
    );
    const missingT = "workspaces/global/sandboxEngineTemplates/nope";
    expectError(
      await post({ sandboxEngineImage: h.image, sandboxEngineTemplate: missingT }),
      "FAILED_PRECONDITION",
      missingT,
    );
    const off = await h.catalogueFixture("disabled", { enabled: false }, { enabled: false });
    expectError(
      await post({ sandboxEngineImage: off.image, sandboxEngineTemplate: h.template }),
      "FAILED_PRECONDITION",
      `${off.image} is disabled`,
    );
    expectError(
      await post({ sandboxEngineImage: h.image, sandboxEngineTemplate: off.template }),
      "FAILED_PRECONDITION",
      `${off.template} is disabled`,
    );
  });

  it("limits display names to 63 characters and checks annotation keys", async () => {
    const post = (body: Record<string, unknown>) =>
      h.rest("POST", `/v1/workspaces/${WS}/sandboxEngines?sandboxEngineId=${id()}`, {
        body: { sandboxEngineImage: h.image, sandboxEngineTemplate: h.template, ...body },
      });
    expectError(await post({ displayName: "x".repeat(64) }), "INVALID_ARGUMENT", "sandbox_engine.display_name");
    expect(ok(await post({ displayName: "é".repeat(63) })).sandboxEngine.displayName).toBe("é".repeat(63));
    expectError(await post({ annotations: { ".bad": "x" } }), "INVALID_ARGUMENT", 'sandbox_engine.annotations[".bad"]');
    expectError(
      await post({ annotations: { [`k${"x".repeat(63)}`]: "x" } }),
      "INVALID_ARGUMENT",
      `sandbox_engine.annotations["k${"x".repeat(63)}"]`,
    );
    ok(await post({ annotations: { [`k${"x".repeat(62)}`]: "x", "a_b.c-d": "" } }));
  });

  it("answers a malformed or missing name with 400 or 404", async () => {
    expectError(await h.rest("GET", `/v1/workspaces/${WS}/sandboxEngines/Not_An_Id`), "INVALID_ARGUMENT", "name");
    expectError(
      await h.rest("GET", `/v1/workspaces/${WS}/sandboxEngines/missing`),
      "NOT_FOUND",
      `workspaces/${WS}/sandboxEngines/missing`,
    );
    expectError(await h.rest("DELETE", `/v1/workspaces/${WS}/sandboxEngines/missing`), "NOT_FOUND");
    expectError(
      await h.rest("POST", `/v1/workspaces/${WS}/sandboxEngines/missing:terminate`, { body: {} }),
      "NOT_FOUND",
    );
  });
});

describe("sandbox engines: workspaces named by UUIDs", () => {
  it("serves a workspace whose id starts with a digit, over REST and Connect", async () => {
    const sb = await h.createSandbox("uuid-rest", { workspace: UUID_WS });
    expect(sb.name).toBe(`workspaces/${UUID_WS}/sandboxEngines/uuid-rest`);
    ok(
      await h.rest("POST", `/v1/${sb.name}/filesystem:writeFile`, {
        body: { path: "/workspace/u.txt", content: b64("uuid") },
      }),
    );
    const listed = ok(await h.rest("GET", `/v1/workspaces/${UUID_WS}/sandboxEngines`)).sandboxEngines;
    expect(listed.map((s: RestJson) => s.name)).toContain(sb.name);
    expect(ok(await h.rest("POST", `/v1/${sb.name}/ports?portId=8080`, { body: {} })).port.name).toBe(
      `${sb.name}/ports/8080`,
    );

    const transport = await connectTransport(h, "alice", "1.1");
    const engines = createClient(SandboxEngineService, transport);
    const created = await engines.createSandboxEngine({
      parent: `workspaces/${UUID_WS}`,
      sandboxEngineId: "uuid-connect",
      sandboxEngine: { sandboxEngineImage: h.image, sandboxEngineTemplate: h.template },
    });
    expect(created.sandboxEngine?.name).toBe(`workspaces/${UUID_WS}/sandboxEngines/uuid-connect`);
    expect((await engines.getSandboxEngine({ name: sb.name })).sandboxEngine?.state).toBe(SandboxEngine_State.RUNNING);
    const read = await createClient(FilesystemService, transport).readFile({ name: sb.name, path: "/workspace/u.txt" });
    expect(Buffer.from(read.content).toString()).toBe("uuid");
    const port = await createClient(PortService, transport).getPort({ name: `${sb.name}/ports/8080` });
    expect(port.port?.name).toBe(`${sb.name}/ports/8080`);
    // Other ids keep their rule: a sandbox id still starts with a letter.
    expectError(await h.rest("GET", `/v1/workspaces/${UUID_WS}/sandboxEngines/9-no`), "INVALID_ARGUMENT", "name");
  });
});

describe("sandbox engines: list", () => {
  const lws = "list-ws";
  const names: string[] = [];

  beforeAll(async () => {
    for (const [i, who] of (["creator", "creator", "creator", "member"] as const).entries()) {
      const r = ok(
        await h.rest("POST", `/v1/workspaces/${lws}/sandboxEngines?sandboxEngineId=l${i}`, {
          who,
          body: { sandboxEngineImage: h.image, sandboxEngineTemplate: h.template, displayName: `demo ${i}` },
        }),
      );
      names.push(r.sandboxEngine.name);
    }
    for (const name of names) await h.waitState(name, "STATE_RUNNING");
  });

  it("shows a member their own sandboxes, newest first, with totalSize; administrators see all", async () => {
    const mine = ok(await h.rest("GET", `/v1/workspaces/${lws}/sandboxEngines`));
    expect(mine.sandboxEngines.map((s: { name: string }) => s.name)).toEqual(names.slice(0, 3).reverse());
    expect(mine.totalSize).toBe(3);
    expect(mine.nextPageToken).toBe("");
    const bobs = ok(await h.rest("GET", `/v1/workspaces/${lws}/sandboxEngines`, { who: "member" }));
    expect(bobs.sandboxEngines.map((s: { name: string }) => s.name)).toEqual([names[3]]);
    const all = ok(await h.rest("GET", `/v1/workspaces/${lws}/sandboxEngines`, { who: "admin" }));
    expect(all.totalSize).toBe(4);
  });

  it("filters, orders and pages", async () => {
    const q = (query: string) => h.rest("GET", `/v1/workspaces/${lws}/sandboxEngines?${query}`);
    const filtered = ok(await q(`filter=${encodeURIComponent('display_name = "demo 1" AND state = STATE_RUNNING')}`));
    expect(filtered.sandboxEngines.map((s: { name: string }) => s.name)).toEqual([names[1]]);
    const prefixed = ok(
      await q(
        `filter=${encodeURIComponent('sandbox_engine_id = "l*" AND creator = "users/alice"')}&orderBy=display_name`,
      ),
    );
    expect(prefixed.sandboxEngines.map((s: { name: string }) => s.name)).toEqual(names.slice(0, 3));
    const seen: string[] = [];
    let token = "";
    do {
      const page = ok(
        await q(`pageSize=2&orderBy=${encodeURIComponent("display_name desc")}${token ? `&pageToken=${token}` : ""}`),
      );
      expect(page.totalSize).toBe(3);
      seen.push(...page.sandboxEngines.map((s: { name: string }) => s.name));
      token = page.nextPageToken;
    } while (token);
    expect(seen).toEqual(names.slice(0, 3).reverse());
    expectError(await q(`filter=${encodeURIComponent("bogus = 1")}`), "INVALID_ARGUMENT", "filter");
    expectError(await q("orderBy=bogus"), "INVALID_ARGUMENT", "order_by");
    expectError(await q("pageSize=-1"), "INVALID_ARGUMENT", "page_size");
    expectError(await q("pageToken=forged"), "INVALID_ARGUMENT", "page_token");
    expectError(await q(`filter=${encodeURIComponent("state = STATE_BOGUS")}`), "INVALID_ARGUMENT", "filter");
  });

  it("lists across workspaces with workspaces/- for administrators only", async () => {
    const all = ok(await h.rest("GET", `/v1/workspaces/-/sandboxEngines?pageSize=1000`, { who: "admin" }));
    expect(all.sandboxEngines.map((s: { name: string }) => s.name)).toEqual(expect.arrayContaining(names));
    expectError(await h.rest("GET", `/v1/workspaces/-/sandboxEngines`), "PERMISSION_DENIED", "LIST_ALL");
  });
});

describe("sandbox engines: terminate and delete", () => {
  it("terminates: TERMINATING, then TERMINATED for good; running processes end with 137", async () => {
    const sb = await h.createSandbox(id());
    const p = ok(
      await h.rest("POST", `/v1/${sb.name}/processes?autoRun=true`, { body: { command: "sleep", args: ["60"] } }),
    ).process;
    const t = ok(await h.rest("POST", `/v1/${sb.name}:terminate`, { body: {} })).sandboxEngine;
    expect(t).toMatchObject({ state: "STATE_TERMINATING", pendingReason: "PENDING_REASON_DELETING_RESOURCES" });
    expect(t.pendingMessage).not.toBe("");
    const terminated = await h.waitState(sb.name, "STATE_TERMINATED");
    expect(terminated).toMatchObject({ pendingReason: "PENDING_REASON_UNSPECIFIED", pendingMessage: "" });
    const ended = ok(await h.rest("GET", `/v1/${p.name}`)).process;
    expect(ended).toMatchObject({ state: "STATE_FAILED", exitCode: 137 });
    expectError(
      await h.rest("POST", `/v1/${sb.name}:terminate`, { body: {} }),
      "FAILED_PRECONDITION",
      "STATE_TERMINATED",
    );
    expectError(
      await h.rest("GET", `/v1/${sb.name}/filesystem:statFile?path=/workspace`),
      "FAILED_PRECONDITION",
      `${sb.name} is not in running state: it is STATE_TERMINATED`,
    );
    expectError(
      await h.rest("POST", `/v1/${sb.name}/processes?autoRun=true`, { body: { command: "true" } }),
      "FAILED_PRECONDITION",
      "STATE_TERMINATED",
    );
    expect(ok(await h.rest("GET", `/v1/${sb.name}`)).sandboxEngine.currentIdleDuration).toBe("0s");
    await eventually(() => stateEvents(sb.name).length >= 4);
    expect(stateEvents(sb.name)).toEqual([
      ["UNSPECIFIED", "STARTING", true],
      ["STARTING", "RUNNING", true],
      ["RUNNING", "TERMINATING", true],
      ["TERMINATING", "TERMINATED", true],
    ]);
  });

  it("terminates a sandbox that is still starting", async () => {
    const sid = id();
    const created = ok(
      await h.rest("POST", `/v1/workspaces/${WS}/sandboxEngines?sandboxEngineId=${sid}`, {
        body: { sandboxEngineImage: h.image, sandboxEngineTemplate: h.template },
      }),
    ).sandboxEngine;
    const t = ok(await h.rest("POST", `/v1/${created.name}:terminate`, { body: {} })).sandboxEngine;
    expect(["STATE_TERMINATING", "STATE_TERMINATED"]).toContain(t.state);
    await h.waitState(created.name, "STATE_TERMINATED");
    expect(h.sandbox.runtime.isRunning(created.uid)).toBe(false);
  });

  it("deletes: DELETING, then gone, with a last event without a snapshot; the sandbox's files go too", async () => {
    const sb = await h.createSandbox(id());
    ok(
      await h.rest("POST", `/v1/${sb.name}/filesystem:writeFile`, {
        body: { path: "/workspace/f", content: b64("x") },
      }),
    );
    const d = ok(await h.rest("DELETE", `/v1/${sb.name}`)).sandboxEngine;
    expect(d).toMatchObject({ state: "STATE_DELETING", pendingReason: "PENDING_REASON_DELETING_RESOURCES" });
    const until = Date.now() + 10_000;
    while ((await h.rest("GET", `/v1/${sb.name}`)).status !== 404) {
      if (Date.now() > until) throw new Error("not deleted");
      await sleep(20);
    }
    await eventually(() => stateEvents(sb.name).some(([prev]) => prev === "DELETING"));
    expect(stateEvents(sb.name).at(-1)).toEqual(["DELETING", "UNSPECIFIED", false]);
    // The name can be used again, for a new sandbox with a new uid.
    const again = await h.createSandbox(sb.name.split("/").pop()!);
    expect(again.uid).not.toBe(sb.uid);
    expectError(await h.rest("GET", `/v1/${again.name}/filesystem:statFile?path=/workspace/f`), "NOT_FOUND");
  });

  it("deletes a terminated sandbox", async () => {
    const sb = await h.createSandbox(id());
    ok(await h.rest("POST", `/v1/${sb.name}:terminate`, { body: {} }));
    await h.waitState(sb.name, "STATE_TERMINATED");
    expect(ok(await h.rest("DELETE", `/v1/${sb.name}`)).sandboxEngine.state).toBe("STATE_DELETING");
  });
});

describe("sandbox engines: idle time", () => {
  let quick: string;
  beforeAll(async () => {
    quick = (await h.catalogueFixture("quick", { maxIdleDuration: "2s" })).template;
  });

  it("shows currentIdleDuration live; calls on the sandbox reset it; reading the sandbox does not", async () => {
    const sb = await h.createSandbox(id());
    await sleep(300);
    const first = seconds(ok(await h.rest("GET", `/v1/${sb.name}`)).sandboxEngine.currentIdleDuration);
    await sleep(300);
    const second = seconds(ok(await h.rest("GET", `/v1/${sb.name}`)).sandboxEngine.currentIdleDuration);
    expect(second).toBeGreaterThan(first);
    expect(second).toBeGreaterThanOrEqual(0.5);
    // The call resets the idle time somewhere inside it, so the sandbox can have been idle at
    // most for as long as the call and the read took, however slow the machine is; not reset,
    // it would have been idle for `second` longer than that.
    const sinceCall = Date.now();
    ok(await h.rest("GET", `/v1/${sb.name}/filesystem:statFile?path=/workspace`));
    const after = seconds(ok(await h.rest("GET", `/v1/${sb.name}`)).sandboxEngine.currentIdleDuration);
    expect(after).toBeLessThanOrEqual((Date.now() - sinceCall) / 1000);
  });

  it("terminates after the template's max_idle_duration without activity, not before", async () => {
    const sb = await h.createSandbox(id(), { template: quick });
    // Activity every 300 ms keeps it running well past its 2 s limit (a call may take up to
    // 1.7 s on a busy machine before the gap is the limit).
    for (let i = 0; i < 9; i++) {
      await sleep(300);
      ok(await h.rest("GET", `/v1/${sb.name}/filesystem:statFile?path=/workspace`));
    }
    expect(ok(await h.rest("GET", `/v1/${sb.name}`)).sandboxEngine.state).toBe("STATE_RUNNING");
    // A process being waited on is activity too.
    // It ends 1.6 s after this moment at the earliest, and the idle time counts from its end.
    const requested = Date.now();
    const p = ok(
      await h.rest("POST", `/v1/${sb.name}/processes?autoRun=true`, { body: { command: "sleep", args: ["1.6"] } }),
    ).process;
    expect(ok(await h.rest("POST", `/v1/${p.name}:wait`, { body: {} })).process.exitCode).toBe(0);
    expect(ok(await h.rest("GET", `/v1/${sb.name}`)).sandboxEngine.state).toBe("STATE_RUNNING");
    await h.waitState(sb.name, "STATE_TERMINATED", 10_000);
    expect(Date.now() - requested).toBeGreaterThanOrEqual(1_600 + 2_000);
  });
});

describe("sandbox engines: running time", () => {
  it("terminates after the template's max_running_duration whatever its activity; 0s means no limit", async () => {
    const limited = (await h.catalogueFixture("run-1s", { maxIdleDuration: "0s", maxRunningDuration: "1s" })).template;
    const unlimited = (await h.catalogueFixture("run-none", { maxIdleDuration: "0s", maxRunningDuration: "0s" }))
      .template;
    // The limit counts from the start, which is after this moment however long the create takes.
    const requested = Date.now();
    const [sb, free] = await Promise.all([
      h.createSandbox(id(), { template: limited }),
      h.createSandbox(id(), { template: unlimited }),
    ]);
    expect(sb.sandboxEngineTemplateInfo).toMatchObject({ maxIdleDuration: "0s", maxRunningDuration: "1s" });
    const t0 = Date.now();
    // Activity does not extend the running time: keep touching the sandbox until it is refused
    // because the sandbox is no longer running.
    for (;;) {
      const touched = await h.rest("GET", `/v1/${sb.name}/filesystem:statFile?path=/workspace`);
      if (touched.status !== 200) {
        expect(touched.status, touched.text).toBe(400);
        // A touch that reaches the agent just as it is stopped is cut off there instead.
        expect(touched.body.message).toMatch(
          /is not in running state: it (is STATE_TERMINAT(ING|ED)|stopped while the call was running)/,
        );
        break;
      }
      expect(Date.now() - t0, "the sandbox was terminated").toBeLessThan(10_000);
      await sleep(100);
    }
    await h.waitState(sb.name, "STATE_TERMINATED", 10_000);
    expect(Date.now() - requested).toBeGreaterThanOrEqual(1_000);
    expect(h.logs.some((l) => l.includes("reached its running limit") && l.includes(sb.name))).toBe(true);
    // Neither limit applies to the other one.
    expect(ok(await h.rest("GET", `/v1/${free.name}`)).sandboxEngine).toMatchObject({
      state: "STATE_RUNNING",
      currentIdleDuration: expect.any(String),
    });
    expect(seconds(ok(await h.rest("GET", `/v1/${free.name}`)).sandboxEngine.currentIdleDuration)).toBeGreaterThan(0.5);
  });
});
