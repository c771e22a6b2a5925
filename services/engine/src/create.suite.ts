// Creation rules (issue 6, part 2) over REST: required fields, profile, version and image checks,
// defaults and constraints from the profile, quotas, DAI configuration, validate_only and ids.
import { describe, expect, it } from "vitest";
import type { RestJson } from "@aiem/kit/testing";
import {
  bodyOf,
  deleteAllEngines,
  createEngine,
  expectError,
  get,
  h,
  K,
  KINDS,
  ok,
  post,
  profileFixture,
  res,
  runningEngine,
  std,
  WS,
  type KindKey,
} from "./testing/rest-suite.js";
import { freshId, updateCatalogue } from "./testing/index.js";

const GiB = 1024 ** 3;

// Independent engines and fixtures: the tests run side by side.
describe.concurrent.each(KINDS.map((k) => [k] as const))("creating a %s engine", (kind: KindKey) => {
  const k = K[kind];
  const f = (field: string) => `${k.field}.${field}`;

  it("takes unset values from the profile, ignores output-only values, and starts it", async () => {
    const r = await createEngine(kind, {
      body: bodyOf(kind, {
        displayName: "Mine",
        createTime: "2001-01-01T00:00:00Z",
        creator: "users/mallory",
        state: "STATE_PAUSED",
        uid: "x",
      }),
    });
    const e = res(r);
    expect(e.name).toBe(r.name);
    expect(e.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(e.creator).toBe("users/alice");
    expect(e.creatorDisplayName).toBe("alice");
    expect(e.displayName).toBe("Mine");
    expect(e.state).toBe("STATE_STARTING");
    expect(e.reconciling).toBe(true);
    expect(e.createTime).not.toBe("2001-01-01T00:00:00Z");
    expect(e.cpu).toBe(1);
    expect(e.gpu).toBe(0);
    expect(e.memoryBytes).toBe(String(2 * GiB));
    expect(e.maxIdleDuration).toBe("3600s");
    expect(e.maxRunningDuration).toBe("28800s");
    if (kind !== "h2o") expect(e.storageBytes).toBe(String(16 * GiB));
    else expect(e.nodeCount).toBe(1);
    expect(e.profileInfo.name).toBe(e.profile);
    const info =
      kind === "dai" ? e.daiEngineVersionInfo : kind === "h2o" ? e.h2oEngineVersionInfo : e.notebookImageInfo;
    expect(info.name).toBe(e[k.versionJson]);
    expect(e.currentIdleDuration).toBeNull();
    if (kind !== "notebook") {
      // The real service's shape, from creation on: the name is the context path.
      expect(e.apiUrl).toBe(`${h().url}/${r.name}`);
      expect(e.loginUrl).toBe(`${h().url}/${r.name}${kind === "h2o" ? "/flow/index.html" : "/oidc/login"}`);
    }
    const running = await h().waitForState(r.name, "STATE_RUNNING");
    expect(running.reconciling).toBe(false);
    expect(running.resumeTime).toBeDefined();
    expect(running.currentRunningDuration).toMatch(/^\d+(\.\d+)?s$/);
    if (kind !== "notebook") {
      expect(running.loginUrl).toBe(e.loginUrl);
      expect(running.apiUrl).toBe(e.apiUrl);
      // The login page (H2O Flow's, Driverless AI's sign-in) is served there, to the creator only.
      const headers = { authorization: `Bearer ${await h().token("alice")}` };
      const page = await fetch(running.loginUrl, { headers });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(kind === "h2o" ? "H2O Flow" : "Driverless AI");
      expect((await fetch(running.loginUrl)).status).toBe(401);
      const bob = { authorization: `Bearer ${await h().token("bob")}` };
      expect((await fetch(running.loginUrl, { headers: bob })).status).toBe(404);
      // The engine's own API below api_url.
      const health = await fetch(`${running.apiUrl}/api/health`, { headers });
      expect(await health.json()).toMatchObject({ uid: e.uid, standIn: true });
    }
  });

  it("with validate_only checks everything and creates nothing", async () => {
    const r = await createEngine(kind, { query: "validateOnly=true" });
    expect(res(r).name).toBe(r.name);
    expectError(await get(`/v1/${r.name}`), "NOT_FOUND", r.name);
    expectError(
      await createEngine(kind, { query: "validateOnly=true", body: bodyOf(kind, { cpu: 99 }) }),
      "INVALID_ARGUMENT",
      f("cpu"),
    );
  });

  it("requires the profile and the version or image, naming them", async () => {
    expectError(await createEngine(kind, { body: bodyOf(kind, { profile: "" }) }), "INVALID_ARGUMENT", f("profile"));
    expectError(
      await createEngine(kind, { body: bodyOf(kind, { [k.versionJson]: "" }) }),
      "INVALID_ARGUMENT",
      f(k.versionField),
    );
    expectError(await createEngine(kind, { body: {} }), "INVALID_ARGUMENT", f("profile"));
  });

  it("refuses a profile that does not exist, is disabled, or is not assigned to the caller", async () => {
    const missing = `workspaces/global/${k.profileKind}/missing`;
    const r1 = await createEngine(kind, { body: bodyOf(kind, { profile: missing }) });
    expectError(r1, "INVALID_ARGUMENT", f("profile"));
    expect(r1.body.message).toContain(`${k.profileKind.slice(0, -1)} ${missing} not found`);
    expectError(
      await createEngine(kind, { body: bodyOf(kind, { profile: "not-a-name" }) }),
      "INVALID_ARGUMENT",
      f("profile"),
    );
    const off = await profileFixture(kind, freshId("off"), { enabled: false });
    const r2 = await createEngine(kind, { body: bodyOf(kind, { profile: off }) });
    expectError(r2, "INVALID_ARGUMENT", f("profile"));
    expect(r2.body.message).toContain("is disabled");
    const roles = await profileFixture(kind, freshId("roles"), {
      assignedOidcRolesEnabled: true,
      assignedOidcRoles: ["data-science"],
    });
    const r3 = await createEngine(kind, { body: bodyOf(kind, { profile: roles }) });
    expectError(r3, "INVALID_ARGUMENT", f("profile"));
    expect(r3.body.message).toContain(`${k.profileKind.slice(0, -1)} ${roles} not found`);
    ok(
      await createEngine(kind, {
        body: bodyOf(kind, { profile: roles }),
        roles: ["data-science"],
        query: "validateOnly=true",
      }),
    );
  });

  it("refuses values outside the profile's constraints, every one in one answer", async () => {
    const extra: Record<string, unknown> = {
      cpu: 5,
      gpu: 3,
      memoryBytes: String(GiB / 2),
      maxIdleDuration: "90000s",
      maxRunningDuration: "-5s",
    };
    if (kind !== "h2o") extra.storageBytes = String(65 * GiB);
    if (kind === "h2o") extra.nodeCount = 9;
    const r = await createEngine(kind, { body: bodyOf(kind, extra) });
    expectError(r, "INVALID_ARGUMENT", f("cpu"));
    expect(r.body.message).toContain(`${f("cpu")}: validation error: max constraint violated: cpu (5) must be <= 4`);
    const fields = r.body.details[0].fieldViolations.map((v: { field: string }) => v.field);
    const expected = [
      "cpu",
      "gpu",
      "memory_bytes",
      "max_idle_duration",
      "max_running_duration",
      kind === "h2o" ? "node_count" : "storage_bytes",
    ].map(f);
    expect(fields.sort()).toEqual(expected.sort());
    const edge: Record<string, unknown> = {
      cpu: 4,
      gpu: 2,
      memoryBytes: String(8 * GiB),
      maxIdleDuration: "86400s",
      maxRunningDuration: "0s",
    };
    if (kind !== "h2o") edge.storageBytes = String(64 * GiB);
    ok(await createEngine(kind, { body: bodyOf(kind, edge), query: "validateOnly=true" }));
  });

  it("checks the id, the display name and (DAI, H2O) annotation keys", async () => {
    const idField = `${kind}_engine_id`;
    for (const id of ["Upper", "9lives", "a".repeat(64), "bad-"])
      expectError(await createEngine(kind, { id }), "INVALID_ARGUMENT", idField);
    expectError(
      await createEngine(kind, { body: bodyOf(kind, { displayName: "x".repeat(64) }) }),
      "INVALID_ARGUMENT",
      f("display_name"),
    );
    ok(await createEngine(kind, { body: bodyOf(kind, { displayName: "x".repeat(63) }), query: "validateOnly=true" }));
    if (kind !== "notebook") {
      expectError(
        await createEngine(kind, { body: bodyOf(kind, { annotations: { "-bad": "x" } }) }),
        "INVALID_ARGUMENT",
        `${f("annotations")}["-bad"]`,
      );
    }
    expectError(
      await post(`/v1/workspaces/${WS}/${k.collection}`, { who: "alice", body: bodyOf(kind) }),
      "INVALID_ARGUMENT",
      idField,
    );
  });

  it("answers ALREADY_EXISTS (409) for a taken id", async () => {
    const r = await createEngine(kind);
    ok(r);
    const again = await createEngine(kind, { id: r.name.split("/").pop()! });
    expectError(again, "ALREADY_EXISTS", r.name);
    expectError(
      await createEngine(kind, { id: r.name.split("/").pop()!, query: "validateOnly=true" }),
      "ALREADY_EXISTS",
      r.name,
    );
  });

  it("bounds the caller's total across their engines of the profile (cumulative_max) and their running engines", async () => {
    const profile = await profileFixture(kind, freshId("quota"), {
      cpuConstraint: { min: "1", max: "4", default: "1", cumulativeMax: "3" },
      maxRunningEngines: 2,
    });
    ok(await createEngine(kind, { body: bodyOf(kind, { profile, cpu: 2 }) }));
    const over = await createEngine(kind, { body: bodyOf(kind, { profile, cpu: 2 }) });
    expectError(over, "RESOURCE_EXHAUSTED", "cpu_constraint.cumulative_max");
    expect(over.body.message).toContain("they hold 2 and this asks for 2");
    ok(await createEngine(kind, { body: bodyOf(kind, { profile, cpu: 2 }), who: "bob" }));
    ok(await createEngine(kind, { body: bodyOf(kind, { profile, cpu: 1 }) }));
    // Two running already: a third one is refused even within the cumulative maximum.
    const profile2 = await profileFixture(kind, freshId("running"), { maxRunningEngines: 1 });
    const first = await createEngine(kind, { body: bodyOf(kind, { profile: profile2 }) });
    ok(first);
    expectError(
      await createEngine(kind, { body: bodyOf(kind, { profile: profile2 }) }),
      "RESOURCE_EXHAUSTED",
      "max_running_engines",
    );
    if (kind === "h2o") {
      // A terminated engine no longer runs.
      ok(await post(`/v1/${first.name}:terminate`, { who: "alice" }));
      await h().waitForState(first.name, "STATE_TERMINATED");
    } else {
      ok(await post(`/v1/${first.name}:pause`, { who: "alice" }));
      await h().waitForState(first.name, "STATE_PAUSED");
    }
    const second = await createEngine(kind, { body: bodyOf(kind, { profile: profile2 }) });
    ok(second);
    if (kind !== "h2o")
      expectError(
        await post(`/v1/${first.name}:resume`, { who: "alice" }),
        "RESOURCE_EXHAUSTED",
        "max_running_engines",
      );
  });
});

describe.concurrent("versions and images", () => {
  it("resolves an alias to the version it stands for, and reports a newer version", async () => {
    const e = res(await createEngine("dai", { body: bodyOf("dai", { daiEngineVersion: std.daiLatest }) }));
    expect(e.daiEngineVersion).toBe(std.daiVersion);
    expect(e.daiEngineVersionInfo.aliases).toEqual(["latest"]);
    expect(e.upgradeAvailable).toBe(false);
    const old = res(
      await createEngine("dai", {
        body: bodyOf("dai", { daiEngineVersion: "workspaces/global/daiEngineVersions/1.10.5" }),
      }),
    );
    expect(old.upgradeAvailable).toBe(true);
  });

  it("refuses a deprecated or missing version and a disabled or missing image", async () => {
    const dep = await createEngine("dai", {
      body: bodyOf("dai", { daiEngineVersion: "workspaces/global/daiEngineVersions/1.9.0" }),
    });
    expectError(dep, "INVALID_ARGUMENT", "dai_engine.dai_engine_version");
    expect(dep.body.message).toContain("is deprecated");
    // Exactly the real service's words, without the field in front: clients compare them whole.
    const missing: [KindKey, string, string, string][] = [
      ["h2o", "h2oEngineVersion", "h2o_engine_version", "workspaces/global/h2oEngineVersions/9.9.9"],
      ["h2o", "h2oEngineVersion", "h2o_engine_version", "workspaces/global/h2oEngineVersions/foo"],
      ["dai", "daiEngineVersion", "dai_engine_version", "workspaces/global/daiEngineVersions/9.9.9"],
      ["notebook", "notebookImage", "notebookImage", "workspaces/global/notebookEngineImages/none"],
    ];
    for (const [kind, field, words, reference] of missing) {
      const refused = await createEngine(kind, { body: bodyOf(kind, { [field]: reference }) });
      expectError(refused, "INVALID_ARGUMENT");
      expect(refused.body.message).toBe(`${words} ${reference} not found`);
    }
    const off = await createEngine("notebook", {
      body: bodyOf("notebook", { notebookImage: "workspaces/global/notebookEngineImages/off" }),
    });
    expectError(off, "INVALID_ARGUMENT", "notebook_engine.notebook_image");
    expect(off.body.message).toContain("is disabled");
    expectError(
      await createEngine("notebook", {
        body: bodyOf("notebook", { notebookImage: "workspaces/global/notebookEngineImages/gone" }),
      }),
      "INVALID_ARGUMENT",
      "notebookImage workspaces/global/notebookEngineImages/gone not found",
    );
  });

  it("keeps the H2O version and DAI version out of updates", async () => {
    const dai = res(await createEngine("dai"));
    const r2 = await h().rest("PATCH", `/v1/${dai.name}?updateMask=dai_engine_version`, { who: "alice", body: {} });
    expectError(r2, "INVALID_ARGUMENT", "update_mask");
    expect(r2.body.message).toContain(":upgradeDAIEngineVersion");
    const r3 = await h().rest("PATCH", `/v1/${dai.name}?updateMask=storage_bytes`, { who: "alice", body: {} });
    expect(r3.body.message).toContain(":resizeStorage");
    const h2o = res(await createEngine("h2o"));
    const r4 = await h().rest("PATCH", `/v1/${h2o.name}?updateMask=display_name`, { who: "alice", body: {} });
    expect(r4.status).toBe(405);
  });
});

describe.concurrent("DAI configuration", () => {
  it("enforces config_editability and drops reserved keys without an error", async () => {
    const disabled = await profileFixture("dai", freshId("cfgoff"), {
      configEditability: "CONFIG_EDITABILITY_DISABLED",
    });
    expectError(
      await createEngine("dai", { body: bodyOf("dai", { profile: disabled, config: { a: "1" } }) }),
      "INVALID_ARGUMENT",
      "dai_engine.config",
    );
    // Reserved keys are ignored, so they do not count as configuration either.
    const quiet = res(await createEngine("dai", { body: bodyOf("dai", { profile: disabled, config: { port: "1" } }) }));
    expect(quiet.config).toEqual({});
    const base = await profileFixture("dai", freshId("cfgbase"), {
      configEditability: "CONFIG_EDITABILITY_BASE_CONFIG_ONLY",
      baseConfiguration: { a: "0" },
    });
    expectError(
      await createEngine("dai", { body: bodyOf("dai", { profile: base, config: { b: "1" } }) }),
      "INVALID_ARGUMENT",
      'dai_engine.config["b"]',
    );
    expect(
      res(
        await createEngine("dai", { body: bodyOf("dai", { profile: base, config: { a: "1", data_directory: "/x" } }) }),
      ).config,
    ).toEqual({ a: "1" });
    const full = await profileFixture("dai", freshId("cfgfull"), { configEditability: "CONFIG_EDITABILITY_FULL" });
    expect(
      res(await createEngine("dai", { body: bodyOf("dai", { profile: full, config: { anything: "x" } }) })).config,
    ).toEqual({ anything: "x" });
  });

  it("runs the engine with override > server core > engine > base precedence", async () => {
    const profile = await profileFixture("dai", freshId("cfgprec"), {
      baseConfiguration: { a: "base", b: "base", c: "base", d: "base", ip: "1.2.3.4" },
      configurationOverride: { a: "override" },
    });
    const name = await runningEngine("dai", {
      body: bodyOf("dai", { profile, config: { a: "engine", b: "engine", c: "engine", port: "1" } }),
    });
    const e = res(await get(`/v1/${name}`, { who: "alice" }));
    expect(e.config).toEqual({ a: "engine", b: "engine", c: "engine" });
    const page = await fetch(`${e.apiUrl}/api/config`, {
      headers: { authorization: `Bearer ${await h().token("alice")}` },
    });
    // The host runs with AIEM_DAI_CORE_CONFIG {"b": "core", "max_cores": "99"} (see rest.test.ts).
    expect((await page.json()) as RestJson).toEqual({ a: "override", b: "core", c: "engine", d: "base" });
  });

  it("re-checks the configuration when a profile changes and follows profile changes for new engines", async () => {
    const profile = await profileFixture("dai", freshId("cfgchg"), {});
    const e = res(await createEngine("dai", { body: bodyOf("dai", { profile, config: { z: "1" } }) }));
    await updateCatalogue(h(), profile, { configEditability: "CONFIG_EDITABILITY_DISABLED" }, "config_editability");
    expectError(
      await createEngine("dai", { body: bodyOf("dai", { profile, config: { z: "1" } }) }),
      "INVALID_ARGUMENT",
      "dai_engine.config",
    );
    // The existing engine keeps its configuration until it changes it.
    expect(res(await get(`/v1/${e.name}`, { who: "alice" })).config).toEqual({ z: "1" });
  });
});

describe("after the suite", () => {
  it("deletes every engine it made", deleteAllEngines, 90_000);
});
