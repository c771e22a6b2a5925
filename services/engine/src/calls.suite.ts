// Every call of spec section 7 for DAI, H2O and notebook engines over REST (issue 6, parts 1, 3
// and 5): get, list with filters, order and totalSize, update, delete, the actions, logs, notebook
// access, the mixed Engine list and the H2O size calculations.
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
  nameOf,
  ok,
  post,
  profileFixture,
  res,
  pausedEngine,
  runningEngine,
  std,
  WS,
  type KindKey,
} from "./testing/rest-suite.js";
import { catalogueFixture, freshId, updateCatalogue } from "./testing/index.js";

const GiB = 1024 ** 3;
const q = (s: string) => encodeURIComponent(s);

// Each test works on engines of its own, so most groups run side by side. The mixed list changes
// a version's deprecation for a moment, so it runs alone.
describe.concurrent("get", () => {
  it.each(KINDS.map((k) => [k] as const))(
    "returns a %s engine; a missing or malformed one is 404 or 400",
    async (kind: KindKey) => {
      const r = await createEngine(kind);
      const created = res(r);
      const got = res(await get(`/v1/${r.name}`, { who: "alice" }));
      expect(got.uid).toBe(created.uid);
      expect(got.profile).toBe(created.profile);
      expectError(await get(`/v1/${nameOf(kind, "missing")}`, { who: "alice" }), "NOT_FOUND", nameOf(kind, "missing"));
      expectError(
        await get(`/v1/workspaces/${WS}/${K[kind].collection}/Bad_Id`, { who: "alice" }),
        "INVALID_ARGUMENT",
        "name",
      );
    },
  );
});

describe.concurrent("list", () => {
  const lws = "team-a";

  it.each(KINDS.map((k) => [k] as const))(
    "filters a %s list on its fields, orders it, pages it and counts it",
    async (kind: KindKey) => {
      const profile = await profileFixture(kind, freshId("lst"));
      const tag = freshId("t");
      const names: string[] = [];
      for (let i = 0; i < 5; i++) {
        const extra: Record<string, unknown> = {
          profile,
          displayName: `${tag}-${i}`,
          cpu: 1 + (i % 3),
          memoryBytes: String((1 + i) * GiB),
        };
        const r = await createEngine(kind, { body: bodyOf(kind, extra), ws: lws });
        ok(r);
        names.push(r.name);
      }
      const list = (query: string) => get(`/v1/workspaces/${lws}/${K[kind].collection}?${query}`, { who: "alice" });
      const mine = `display_name = "${tag}-*"`;
      const all = ok(await list(`filter=${q(mine)}`));
      expect(all[K[kind].plural].map((e: { name: string }) => e.name)).toEqual([...names].reverse());
      expect(all.totalSize).toBe(5);
      expect(all.nextPageToken).toBe("");

      const cpu2 = ok(await list(`filter=${q(`${mine} AND cpu = 2`)}`));
      expect(cpu2[K[kind].plural].map((e: { displayName: string }) => e.displayName)).toEqual([`${tag}-4`, `${tag}-1`]);
      expect(ok(await list(`filter=${q(`${mine} AND memory_bytes >= ${3 * GiB}`)}`)).totalSize).toBe(3);
      expect(
        ok(
          await list(
            `filter=${q(`${mine} AND creator = "users/alice" AND reconciling:* AND state != STATE_DELETING`)}`,
          ),
        ).totalSize,
      ).toBe(5);
      expect(
        ok(await list(`filter=${q(`${mine} AND max_idle_duration = 3600s AND max_running_duration > 60s`)}`)).totalSize,
      ).toBe(5);
      expect(
        ok(await list(`filter=${q(`${mine} AND create_time > "2020-01-01T00:00:00Z" AND delete_time:* `)}`)).totalSize,
      ).toBe(0);
      const idField = kind === "notebook" ? "notebook_engine_id" : `${kind}_engine_id`;
      expect(ok(await list(`filter=${q(`${idField} = "${names[0]!.split("/").pop()}"`)}`)).totalSize).toBe(1);
      expect(
        ok(await list(`filter=${q(`uid = "${res(await get(`/v1/${names[2]}`, { who: "alice" })).uid}"`)}`)).totalSize,
      ).toBe(1);
      expect(ok(await list(`filter=${q(`name = "${names[3]}"`)}`)).totalSize).toBe(1);
      expect(ok(await list(`filter=${q(`${mine} AND creator_display_name = "alice"`)}`)).totalSize).toBe(5);
      if (kind === "h2o") expect(ok(await list(`filter=${q(`${mine} AND node_count = 1`)}`)).totalSize).toBe(5);
      else expect(ok(await list(`filter=${q(`${mine} AND storage_bytes = ${16 * GiB}`)}`)).totalSize).toBe(5);
      for (const name of names) await h().waitForState(name, "STATE_RUNNING");
      expect(
        ok(await list(`filter=${q(`${mine} AND state = STATE_RUNNING AND resume_time > "2020-01-01T00:00:00Z"`)}`))
          .totalSize,
      ).toBe(5);
      expect(
        ok(await list(`filter=${q(`${mine} AND current_running_duration >= 0s AND current_idle_duration < 3600s`)}`))
          .totalSize,
      ).toBe(5);
      expect(ok(await list(`filter=${q(`${mine} AND update_time >= "2020-01-01T00:00:00Z"`)}`)).totalSize).toBe(5);

      // Order and pages.
      const seen: string[] = [];
      let token = "";
      do {
        const page = ok(
          await list(
            `filter=${q(mine)}&orderBy=${q("cpu desc, display_name")}&pageSize=2${token ? `&pageToken=${token}` : ""}`,
          ),
        );
        expect(page[K[kind].plural].length).toBeLessThanOrEqual(2);
        expect(page.totalSize).toBe(5);
        seen.push(...page[K[kind].plural].map((e: { displayName: string }) => e.displayName));
        token = page.nextPageToken;
      } while (token);
      // cpu is 1 + i % 3: 3 for #2, 2 for #1 and #4, 1 for #0 and #3.
      expect(seen).toEqual([2, 1, 4, 0, 3].map((i) => `${tag}-${i}`));

      expectError(await list(`filter=${q("no_such_field = 1")}`), "INVALID_ARGUMENT", "filter");
      expectError(await list(`filter=${q("state = RUNNING")}`), "INVALID_ARGUMENT", "filter");
      expectError(await list(`orderBy=${q("version")}`), "INVALID_ARGUMENT", "order_by");
      expectError(await list("pageSize=-1"), "INVALID_ARGUMENT", "page_size");
      expectError(await list("pageToken=garbage"), "INVALID_ARGUMENT", "page_token");
    },
  );
});

describe.concurrent("update", () => {
  it.each([["dai"], ["notebook"]] as const)(
    "changes each section 5 path of a paused %s engine, * for all, and keeps the rest",
    async (kind: KindKey) => {
      const name = await pausedEngine(kind);
      const patch = (mask: string, body: Record<string, unknown>, extra = "") =>
        h().rest("PATCH", `/v1/${name}?updateMask=${q(mask)}${extra}`, { who: "alice", body: { name, ...body } });
      const e1 = res(await patch("display_name", { displayName: "Renamed", cpu: 4 }));
      expect(e1.displayName).toBe("Renamed");
      expect(e1.cpu).toBe(1);
      const e2 = res(
        await patch("cpu,gpu,memory_bytes,max_idle_duration,max_running_duration", {
          cpu: 3,
          gpu: 1,
          memoryBytes: String(4 * GiB),
          maxIdleDuration: "600s",
          maxRunningDuration: "7200s",
        }),
      );
      expect([e2.cpu, e2.gpu, e2.memoryBytes, e2.maxIdleDuration, e2.maxRunningDuration]).toEqual([
        3,
        1,
        String(4 * GiB),
        "600s",
        "7200s",
      ]);
      expect(e2.displayName).toBe("Renamed");
      // A path in the mask with no value takes the profile's default.
      const e3 = res(await patch("cpu", {}));
      expect(e3.cpu).toBe(1);
      expectError(await patch("cpu", { cpu: 9 }), "INVALID_ARGUMENT", `${K[kind].field}.cpu`);
      expectError(await patch("displayName", { displayName: "x" }), "INVALID_ARGUMENT", "update_mask");
      expectError(await patch("", { displayName: "x" }), "INVALID_ARGUMENT", "update_mask");
      expectError(await patch("state", { state: "STATE_PAUSED" }), "INVALID_ARGUMENT", "update_mask");
      expectError(await patch("uid", {}), "INVALID_ARGUMENT", "update_mask");
      const everything: Record<string, unknown> = {
        profile: std[`${kind}Profile` as "daiProfile"],
        displayName: "All",
        cpu: 2,
        gpu: 0,
        memoryBytes: String(2 * GiB),
        maxIdleDuration: "60s",
        maxRunningDuration: "120s",
      };
      if (kind === "dai") Object.assign(everything, { config: { k: "v" }, annotations: { "team.name_x": "y" } });
      else everything.notebookImage = std.image;
      const all = res(await patch("*", everything));
      expect(all.displayName).toBe("All");
      expect(all.cpu).toBe(2);
      if (kind === "dai") {
        expect(all.config).toEqual({ k: "v" });
        expect(all.annotations).toEqual({ "team.name_x": "y" });
      } else {
        expect(all.updater).toBe("users/alice");
      }
      expectError(
        await h().rest("PATCH", `/v1/${nameOf(kind, "missing")}?updateMask=cpu`, { who: "alice", body: { cpu: 1 } }),
        "NOT_FOUND",
        nameOf(kind, "missing"),
      );
    },
  );

  it("moves an engine to another profile only within that profile's constraints", async () => {
    const small = await profileFixture("dai", freshId("small"), {
      cpuConstraint: { min: "1", max: "1", default: "1" },
    });
    const name = await pausedEngine("dai", { body: bodyOf("dai", { cpu: 3 }) });
    const r = await h().rest("PATCH", `/v1/${name}?updateMask=profile`, { who: "alice", body: { profile: small } });
    expectError(r, "INVALID_ARGUMENT", "dai_engine.cpu");
    expect(r.body.message).toContain("validation error: max constraint violated: cpu (3) must be <= 1");
    const unset = await h().rest("PATCH", `/v1/${name}?updateMask=profile`, { who: "alice", body: { profile: "" } });
    expectError(unset, "INVALID_ARGUMENT", "profile cannot be unset");
    const moved = res(
      await h().rest("PATCH", `/v1/${name}?updateMask=profile,cpu`, { who: "alice", body: { profile: small, cpu: 1 } }),
    );
    expect(moved.profile).toBe(small);
    expect(moved.profileInfo.name).toBe(small);
    const off = await profileFixture("dai", freshId("off"), { enabled: false });
    expectError(
      await h().rest("PATCH", `/v1/${name}?updateMask=profile`, { who: "alice", body: { profile: off } }),
      "INVALID_ARGUMENT",
      "dai_engine.profile",
    );
    // A profile assigned to a role alice does not hold is hidden from her: named as missing.
    const restricted = await profileFixture("dai", freshId("roles"), {
      assignedOidcRolesEnabled: true,
      assignedOidcRoles: ["data-science"],
    });
    const hidden = await h().rest("PATCH", `/v1/${name}?updateMask=profile`, {
      who: "alice",
      body: { profile: restricted },
    });
    expectError(hidden, "INVALID_ARGUMENT", `daiEngineProfile ${restricted} not found`);
    expect(hidden.status).toBe(400);
  });

  it.each([["dai"], ["notebook"]] as const)(
    "refuses to update a %s engine that is not paused or failed",
    async (kind: KindKey) => {
      const name = await runningEngine(kind);
      const r = await h().rest("PATCH", `/v1/${name}?updateMask=display_name`, {
        who: "alice",
        body: { displayName: "x" },
      });
      expectError(r, "FAILED_PRECONDITION", "engine must be paused or failed");
      expect(r.status).toBe(400);
    },
  );

  it("applies a changed notebook image on update; an unchanged one is no change", async () => {
    const name = await pausedEngine("notebook");
    const other = (
      await catalogueFixture(h(), "notebookEngineImages", freshId("img"), { image: "jupyter/other:2", enabled: true })
    ).name;
    const patch = (body: Record<string, unknown>) =>
      h().rest("PATCH", `/v1/${name}?updateMask=notebook_image`, { who: "alice", body: { name, ...body } });
    const missing = `workspaces/${WS}/notebookEngineImages/no-such-image`;
    const r = await patch({ notebookImage: missing });
    expectError(r, "INVALID_ARGUMENT");
    // The real service's words, its engine service wrapping its image service's answer.
    expect(r.body.message).toBe(
      `validation error: invalid notebook_image: rpc error: code = InvalidArgument desc = notebookImage ${missing} not found`,
    );
    const changed = res(await patch({ notebookImage: other }));
    expect(changed.notebookImage).toBe(other);
    expect(changed.notebookImageInfo.name).toBe(other);
    expect(res(await get(`/v1/${name}`, { who: "alice" })).notebookImage).toBe(other);
    expect(res(await patch({ notebookImage: other })).notebookImage).toBe(other);
  });

  it("DAI: validate_only changes nothing; allow_missing creates", async () => {
    const name = await pausedEngine("dai");
    const preview = res(
      await h().rest("PATCH", `/v1/${name}?updateMask=display_name&validateOnly=true`, {
        who: "alice",
        body: { displayName: "Preview" },
      }),
    );
    expect(preview.displayName).toBe("Preview");
    expect(res(await get(`/v1/${name}`, { who: "alice" })).displayName).toBe("");
    const fresh = nameOf("dai", freshId("am"));
    expectError(
      await h().rest("PATCH", `/v1/${fresh}?updateMask=display_name`, { who: "alice", body: bodyOf("dai") }),
      "NOT_FOUND",
      fresh,
    );
    const validated = res(
      await h().rest("PATCH", `/v1/${fresh}?updateMask=display_name&allowMissing=true&validateOnly=true`, {
        who: "alice",
        body: bodyOf("dai", { displayName: "New" }),
      }),
    );
    expect(validated.name).toBe(fresh);
    expectError(await get(`/v1/${fresh}`, { who: "alice" }), "NOT_FOUND");
    const made = res(
      await h().rest("PATCH", `/v1/${fresh}?updateMask=display_name&allowMissing=true`, {
        who: "alice",
        body: bodyOf("dai", { displayName: "New" }),
      }),
    );
    expect(made.state).toBe("STATE_STARTING");
    expect(made.creator).toBe("users/alice");
    expectError(
      await h().rest("PATCH", `/v1/${nameOf("dai", freshId("am"))}?updateMask=display_name&allowMissing=true`, {
        who: "viewer",
        body: bodyOf("dai"),
      }),
      "PERMISSION_DENIED",
      "daiEngines/UPDATE",
    );
  });
});

describe.concurrent("delete", () => {
  it.each(KINDS.map((k) => [k] as const))(
    "deletes a %s engine through STATE_DELETING; it disappears",
    async (kind: KindKey) => {
      const name = (await createEngine(kind)).name;
      if (kind !== "notebook") {
        const preview = res(await h().rest("DELETE", `/v1/${name}?validateOnly=true`, { who: "alice" }));
        expect(preview.state).toBe("STATE_DELETING");
        expect(res(await get(`/v1/${name}`, { who: "alice" })).state).not.toBe("STATE_DELETING");
      }
      const deleting = res(await h().rest("DELETE", `/v1/${name}`, { who: "alice" }));
      expect(deleting.state).toBe("STATE_DELETING");
      expect(deleting.deleteTime).toBeDefined();
      expect(deleting.reconciling).toBe(true);
      await h().waitForGone(name);
      expectError(await h().rest("DELETE", `/v1/${name}`, { who: "alice" }), "NOT_FOUND", name);
      // Nothing deleted, no engine: the key is left out, which the official client reads as None.
      if (kind !== "notebook")
        expect(ok(await h().rest("DELETE", `/v1/${name}?allowMissing=true`, { who: "alice" }))).toEqual({});
    },
  );
});

describe.concurrent("actions", () => {
  it("answers a DAI engine as it is when paused while pausing or paused, resumed while starting or running", async () => {
    const name = await runningEngine("dai");
    for (const [action, step, during, after] of [
      ["pause", "stop", "STATE_PAUSING", "STATE_PAUSED"],
      ["resume", "start", "STATE_STARTING", "STATE_RUNNING"],
    ] as const) {
      const stateAnswered = async () => res(await post(`/v1/${name}:${action}`, { who: "alice" })).state;
      h().runtime.hold(name, step);
      try {
        expect(await stateAnswered()).toBe(during);
        expect(await stateAnswered()).toBe(during);
      } finally {
        h().runtime.release(name, step);
      }
      await h().waitForState(name, after);
      expect(await stateAnswered()).toBe(after);
    }
  });

  it("pauses and resumes DAI and notebook engines, keeping their data", async () => {
    for (const kind of ["dai", "notebook"] as const) {
      const name = await runningEngine(kind);
      const preview = res(await post(`/v1/${name}:pause`, { who: "alice", body: { validateOnly: true } }));
      expect(preview.state).toBe("STATE_PAUSING");
      expect(res(await get(`/v1/${name}`, { who: "alice" })).state).toBe("STATE_RUNNING");
      expect(res(await post(`/v1/${name}:pause`, { who: "alice" })).state).toBe("STATE_PAUSING");
      const paused = await h().waitForState(name, "STATE_PAUSED");
      expect(paused.reconciling).toBe(false);
      expect(paused.currentIdleDuration).toBeNull();
      // A DAI engine keeps its URLs while paused, as from its creation on; a notebook has none.
      expect(paused.loginUrl ?? "").toBe(kind === "dai" ? `${h().url}/${name}/oidc/login` : "");
      expect(res(await post(`/v1/${name}:resume`, { who: "alice", body: { validateOnly: true } })).state).toBe(
        "STATE_STARTING",
      );
      expect(res(await post(`/v1/${name}:resume`, { who: "alice" })).state).toBe("STATE_STARTING");
      const running = await h().waitForState(name, "STATE_RUNNING");
      expect(new Date(running.resumeTime) > new Date(paused.resumeTime)).toBe(true);
    }
  });

  it("terminates an H2O engine; it stays listed until deleted", async () => {
    const name = await runningEngine("h2o");
    expect(res(await post(`/v1/${name}:terminate`, { who: "alice" })).state).toBe("STATE_TERMINATING");
    const done = await h().waitForState(name, "STATE_TERMINATED");
    expect(done.reconciling).toBe(false);
    const listed = ok(await get(`/v1/workspaces/${WS}/h2oEngines?filter=${q(`name = "${name}"`)}`, { who: "alice" }));
    expect(listed.totalSize).toBe(1);
  });

  it.each([["dai"], ["notebook"]] as const)(
    "grows %s storage (only grows), with storageResizing while it runs",
    async (kind: KindKey) => {
      const name = await runningEngine(kind);
      const grown = res(
        await post(`/v1/${name}:resizeStorage`, { who: "alice", body: { newStorageBytes: String(20 * GiB) } }),
      );
      expect(grown.storageBytes).toBe(String(20 * GiB));
      expect(grown.storageResizing).toBe(true);
      await waitUntil(async () => res(await get(`/v1/${name}`, { who: "alice" })).storageResizing === false);
      // One resize at a time: while one runs (held here), another is refused for the state.
      h().runtime.hold(name, "resize");
      const again = res(
        await post(`/v1/${name}:resizeStorage`, { who: "alice", body: { newStorageBytes: String(21 * GiB) } }),
      );
      expect(again.storageResizing).toBe(true);
      const refused = await post(`/v1/${name}:resizeStorage`, {
        who: "alice",
        body: { newStorageBytes: String(22 * GiB) },
      });
      expectError(refused, "FAILED_PRECONDITION");
      expect(refused.body.message).toContain("a resize is already running");
      h().runtime.release(name, "resize");
      await waitUntil(async () => res(await get(`/v1/${name}`, { who: "alice" })).storageResizing === false);
      expectError(
        await post(`/v1/${name}:resizeStorage`, { who: "alice", body: { newStorageBytes: String(21 * GiB) } }),
        "INVALID_ARGUMENT",
        "new_storage_bytes",
      );
      expectError(
        await post(`/v1/${name}:resizeStorage`, { who: "alice", body: { newStorageBytes: String(10 * GiB) } }),
        "INVALID_ARGUMENT",
        "new_storage_bytes",
      );
      const over = await post(`/v1/${name}:resizeStorage`, {
        who: "alice",
        body: { newStorageBytes: String(65 * GiB) },
      });
      expectError(over, "INVALID_ARGUMENT", "new_storage_bytes");
      expect(over.body.message).toContain("storage_bytes_constraint");
      if (kind === "dai") {
        const e = await waitUntil(async () => {
          const x = res(await get(`/v1/${name}`, { who: "alice" }));
          return x.totalDiskSizeBytes === String(21 * GiB) ? x : undefined;
        });
        expect(BigInt(e.freeDiskSizeBytes) <= BigInt(21 * GiB)).toBe(true);
      }
    },
  );

  it("reports DAI disk sizes only from 1.10.6 on and only while running", async () => {
    const old = await runningEngine("dai", {
      body: bodyOf("dai", { daiEngineVersion: "workspaces/global/daiEngineVersions/1.10.5" }),
    });
    const e = res(await get(`/v1/${old}`, { who: "alice" }));
    expect(e).not.toHaveProperty("totalDiskSizeBytes");
    expect(e).not.toHaveProperty("freeDiskSizeBytes");
    const recent = await runningEngine("dai");
    const r = await waitUntil(async () => {
      const x = res(await get(`/v1/${recent}`, { who: "alice" }));
      return x.totalDiskSizeBytes ? x : undefined;
    });
    expect(r.totalDiskSizeBytes).toBe(String(16 * GiB));
    expect(BigInt(r.freeDiskSizeBytes) > 0n).toBe(true);
  });

  it("upgrades a paused DAI engine to a newer version (an alias resolves), and only to a newer usable one", async () => {
    const name = await runningEngine("dai", {
      body: bodyOf("dai", { daiEngineVersion: "workspaces/global/daiEngineVersions/1.10.5" }),
    });
    const up = (v: string) =>
      post(`/v1/${name}:upgradeDAIEngineVersion`, { who: "alice", body: { newDaiEngineVersion: v } });
    expectError(await up(std.daiLatest), "FAILED_PRECONDITION", "STATE_RUNNING");
    ok(await post(`/v1/${name}:pause`, { who: "alice" }));
    await h().waitForState(name, "STATE_PAUSED");
    expectError(await up("workspaces/global/daiEngineVersions/1.9.0"), "INVALID_ARGUMENT", "new_dai_engine_version");
    const missing = await up("workspaces/global/daiEngineVersions/7.7.7");
    expectError(missing, "INVALID_ARGUMENT");
    expect(missing.body.message).toBe('DAIEngineVersion "workspaces/global/daiEngineVersions/7.7.7" not found');
    expectError(await up("workspaces/global/daiEngineVersions/1.10.5"), "INVALID_ARGUMENT", "new_dai_engine_version");
    expectError(await up(""), "INVALID_ARGUMENT", "new_dai_engine_version");
    const upgraded = res(await up(std.daiLatest));
    expect(upgraded.daiEngineVersion).toBe(std.daiVersion);
    expect(upgraded.daiEngineVersionInfo.name).toBe(std.daiVersion);
    expect(upgraded.upgradeAvailable).toBe(false);
    ok(await post(`/v1/${name}:resume`, { who: "alice" }));
    const running = await h().waitForState(name, "STATE_RUNNING");
    const health = await fetch(`${running.apiUrl}/api/health`, {
      headers: { authorization: `Bearer ${await h().token("alice")}` },
    });
    expect(((await health.json()) as RestJson).version).toBe("1.10.6");
  });

  it("migrates a DAI engine's creator (administrators only)", async () => {
    const name = (await createEngine("dai")).name;
    expectError(
      await post(`/v1/${name}:migrateCreator`, { who: "alice", body: { newCreator: "users/bob" } }),
      "PERMISSION_DENIED",
      "daiEngines/MIGRATE_CREATOR",
    );
    expectError(
      await post(`/v1/${name}:migrateCreator`, { body: { newCreator: "bob" } }),
      "INVALID_ARGUMENT",
      "new_creator",
    );
    expectError(await post(`/v1/${name}:migrateCreator`, { body: {} }), "INVALID_ARGUMENT", "new_creator");
    const moved = res(await post(`/v1/${name}:migrateCreator`, { body: { newCreator: "users/bob" } }));
    expect(moved.creator).toBe("users/bob");
    expect(res(await get(`/v1/${name}`, { who: "bob" })).creator).toBe("users/bob");
    expectError(await get(`/v1/${name}`, { who: "alice" }), "NOT_FOUND", name);
  });

  it("downloads DAI and H2O logs", async () => {
    for (const kind of ["dai", "h2o"] as const) {
      const name = await runningEngine(kind);
      const logs = Buffer.from(
        ok(await post(`/v1/${name}:downloadLogs`, { who: "alice" })).logs.data,
        "base64",
      ).toString();
      expect(logs).toContain("stand-in listening");
      expect(logs).toContain(kind === "dai" ? "Driverless AI" : "H2O");
    }
  });

  it("gives the URL of a running notebook (:access), FAILED_PRECONDITION otherwise", async () => {
    const name = (await createEngine("notebook")).name;
    const e = await h().waitForState(name, "STATE_RUNNING");
    const uri = ok(await get(`/v1/${name}:access`, { who: "alice" })).uri;
    expect(uri).toBe(`${h().url}/engines/${e.uid}/`);
    const page = await fetch(uri, { headers: { authorization: `Bearer ${await h().token("alice")}` } });
    expect(page.status).toBe(200);
    ok(await post(`/v1/${name}:pause`, { who: "alice" }));
    expectError(await get(`/v1/${name}:access`, { who: "alice" }), "FAILED_PRECONDITION", "STATE_PAUS");
  });
});

describe("the mixed Engine list", () => {
  it("lists every kind with type, state, version, deprecation, visitability, resources and durations", async () => {
    const ws = "mixed";
    const dai = await runningEngine("dai", {
      ws,
      who: "admin",
      body: bodyOf("dai", {
        daiEngineVersion: "workspaces/global/daiEngineVersions/1.10.5",
        annotations: { team: "a" },
      }),
    });
    const h2o = (await createEngine("h2o", { ws, who: "admin", body: bodyOf("h2o", { nodeCount: 2 }) })).name;
    const nb = (await createEngine("notebook", { ws, who: "admin" })).name;
    await h().waitForState(nb, "STATE_RUNNING");
    const all = ok(await get(`/v1/workspaces/${ws}/engines`));
    expect(all.totalSize).toBe(3);
    const byName = new Map<string, RestJson>(all.engines.map((e: { name: string }) => [e.name, e]));
    expect(byName.get(dai)).toMatchObject({
      type: "TYPE_DRIVERLESS_AI",
      state: "STATE_RUNNING",
      version: "1.10.5",
      deprecatedVersion: false,
      deletedVersion: false,
      visitable: true,
      cpu: 1,
      storageBytes: String(16 * GiB),
    });
    expect(byName.get(dai).loginUrl).toBe(`${h().url}/${dai}/oidc/login`);
    // the fields the official client's Engine model reads, as the engine's own service reports them
    const own = ok(await get(`/v1/${dai}`)).daiEngine;
    expect(own.upgradeAvailable).toBe(true);
    expect(byName.get(dai)).toMatchObject({
      annotations: { team: "a" },
      storageResizing: false,
      upgradeAvailable: own.upgradeAvailable,
    });
    expect(byName.get(dai).totalDiskSizeBytes).toBe(own.totalDiskSizeBytes);
    expect(byName.get(h2o)).toMatchObject({ annotations: {}, storageResizing: false });
    expect(byName.get(h2o)).not.toHaveProperty("totalDiskSizeBytes");
    expect(byName.get(h2o)).not.toHaveProperty("freeDiskSizeBytes");
    expect(byName.get(nb)).toMatchObject({ annotations: {}, upgradeAvailable: false });
    expect(byName.get(nb)).not.toHaveProperty("totalDiskSizeBytes");
    expect(byName.get(dai).currentRunningDuration).toMatch(/s$/);
    expect(byName.get(h2o)).toMatchObject({ type: "TYPE_H2O", version: "3.46.0", nodeCount: 2, storageBytes: "0" });
    expect(byName.get(nb)).toMatchObject({ type: "TYPE_NOTEBOOK", version: std.image, visitable: true, loginUrl: "" });
    expect(all.engines.map((e: { name: string }) => e.name)).toEqual([nb, h2o, dai]);

    expect(
      ok(await get(`/v1/workspaces/${ws}/engines?filter=${q('version = "1.10.5"')}`)).engines.map(
        (e: { name: string }) => e.name,
      ),
    ).toEqual([dai]);
    // engine_id, and == for equality, as the official Python client documents them for this list.
    const h2oId = h2o.split("/").pop()!;
    expect(
      ok(await get(`/v1/workspaces/${ws}/engines?filter=${q(`engine_id = "${h2oId}"`)}`)).engines.map(
        (e: { name: string }) => e.name,
      ),
    ).toEqual([h2o]);
    expect(
      ok(
        await get(`/v1/workspaces/${ws}/engines?filter=${q(`engine_id == "${h2oId.slice(0, 3)}*" AND cpu != 99`)}`),
      ).engines.map((e: { name: string }) => e.name),
    ).toContain(h2o);
    expect(ok(await get(`/v1/workspaces/${ws}/engines?filter=${q("deprecated_version = true")}`)).totalSize).toBe(0);
    await updateCatalogue(h(), "workspaces/global/daiEngineVersions/1.10.5", { deprecated: true }, "deprecated");
    const dep = ok(await get(`/v1/workspaces/${ws}/engines?filter=${q("deprecated_version = true")}`));
    expect(dep.engines.map((e: { name: string }) => e.name)).toEqual([dai]);
    expect(dep.engines[0].deprecatedVersion).toBe(true);
    expect(ok(await get(`/v1/workspaces/${ws}/engines?filter=${q("deprecated_version = false")}`)).totalSize).toBe(2);
    await updateCatalogue(h(), "workspaces/global/daiEngineVersions/1.10.5", { deprecated: false }, "deprecated");
    const ordered = ok(await get(`/v1/workspaces/${ws}/engines?orderBy=${q("version desc")}`));
    expect(ordered.engines.map((e: { version: string }) => e.version)).toEqual([std.image, "3.46.0", "1.10.5"]);
    expect(ok(await get(`/v1/workspaces/${ws}/engines?filter=${q("state = STATE_TERMINATED")}`)).totalSize).toBe(0);
    expectError(await get(`/v1/workspaces/${ws}/engines?filter=${q("node_count = 2")}`), "INVALID_ARGUMENT", "filter");
    const paged = ok(await get(`/v1/workspaces/${ws}/engines?pageSize=2`));
    expect(paged.engines.length).toBe(2);
    expect(paged.totalSize).toBe(3);
    const rest = ok(await get(`/v1/workspaces/${ws}/engines?pageSize=2&pageToken=${paged.nextPageToken}`));
    expect(rest.engines.map((e: { name: string }) => e.name)).toEqual([dai]);
  });

  it("lists as the real service: by type, deleted version, newest first, name between equals", async () => {
    // In erin's workspace; other tests' engines there are filtered out by the id prefix.
    const ws = "team-b";
    const p = freshId("m");
    const names = (e: { engines: Array<{ name: string }> }) => e.engines.map((x) => x.name);
    const list = async (filter: string, more = "", who: "admin" | "erin" = "admin") =>
      ok(
        await get(
          `/v1/workspaces/${ws}/engines?filter=${q(`engine_id = "${p}*"${filter ? ` AND (${filter})` : ""}`)}${more}`,
          { who },
        ),
      );
    const collection = { d: "daiEngines", n: "notebookEngines", h: "h2oEngines" } as const;
    const ids = ["d1", "n1", "h1", "d2"].map((id) => `${p}${id}`);
    const [d1, n1, h1, d2] = ids.map(
      (id) => `workspaces/${ws}/${collection[id.slice(p.length, p.length + 1) as "d"]}/${id}`,
    ) as [string, string, string, string];
    // Held in STARTING: nothing but the create call has touched them yet.
    for (const name of [d1, n1, h1, d2]) h().runtime.hold(name, "start");
    try {
      ok(await createEngine("dai", { ws, id: ids[0], who: "erin" }));
      ok(await createEngine("notebook", { ws, id: ids[1], who: "erin" }));
      ok(await createEngine("h2o", { ws, id: ids[2], who: "erin" }));
      ok(await createEngine("dai", { ws, id: ids[3], who: "admin" }));
      const all = await list("");
      expect(names(all)).toEqual([d2, h1, n1, d1]);
      for (const e of all.engines) expect(e.updateTime ?? null).toBeNull();
      // Another's DAI engine or unshared notebook is not visitable; any H2O engine is.
      const visitable = all.engines.map((e: { name: string; visitable: boolean }) => [e.name, e.visitable]);
      expect(Object.fromEntries(visitable)).toEqual({ [d1]: false, [n1]: false, [h1]: true, [d2]: true });
      const erins = await list("", "", "erin");
      expect(names(erins)).toEqual([h1, n1, d1]);
      expect(erins.engines.every((e: { visitable: boolean }) => e.visitable)).toBe(true);
      expect(names(await list("type = TYPE_NOTEBOOK"))).toEqual([n1]);
      expect(names(await list("type = TYPE_DRIVERLESS_AI", "&pageSize=1"))).toEqual([d2]);
      const none = await list("type != TYPE_DRIVERLESS_AI AND type != TYPE_H2O AND type != TYPE_NOTEBOOK");
      expect(none.totalSize).toBe(0);
      expectError(
        await get(`/v1/workspaces/${ws}/engines?filter=${q("type = TYPE_SANDBOX")}`),
        "INVALID_ARGUMENT",
        "filter",
      );
      // Equal sort keys: name order, in the direction of the last key.
      expect(names(await list("", `&orderBy=${q("type desc, cpu desc")}`))).toEqual([n1, h1, d2, d1]);
      expect(names(await list("", `&orderBy=${q("cpu asc")}`))).toEqual([d1, d2, h1, n1]);
      expect((await list("deleted_version = true")).totalSize).toBe(0);
      expect((await list("deleted_version = false")).totalSize).toBe(4);
      // A change sets update_time.
      h().runtime.release(d2, "start");
      const running = await h().waitForState(d2, "STATE_RUNNING");
      expect(running.updateTime).toMatch(/^\d{4}-/);
      expect((await list(`name = "${d2}"`)).engines[0].updateTime).toMatch(/^\d{4}-/);
    } finally {
      for (const name of [d1, n1, h1, d2]) h().runtime.release(name, "start");
    }
  });

  it("sorts version by its numeric segments: 12 after 3.46.0 after 1.10.6, on every page", async () => {
    const ws = "team-b";
    const p = freshId("v");
    const twelve = await catalogueFixture(h(), "h2oEngineVersions", "12", { image: "h2oai/h2o:12" });
    ok(await createEngine("dai", { ws, id: `${p}a`, who: "admin" }));
    ok(await createEngine("h2o", { ws, id: `${p}b`, who: "admin" }));
    ok(
      await createEngine("h2o", {
        ws,
        id: `${p}c`,
        who: "admin",
        body: bodyOf("h2o", { h2oEngineVersion: twelve.name }),
      }),
    );
    const versions = async (order: string, pageSize: number) => {
      const seen: string[] = [];
      let token = "";
      do {
        const page = ok(
          await get(
            `/v1/workspaces/${ws}/engines?filter=${q(`engine_id = "${p}*"`)}&orderBy=${q(order)}&pageSize=${pageSize}&pageToken=${q(token)}`,
          ),
        );
        seen.push(...page.engines.map((e: { version: string }) => e.version));
        token = page.nextPageToken ?? "";
      } while (token);
      return seen;
    };
    expect(await versions("version desc", 10)).toEqual(["12", "3.46.0", "1.10.6"]);
    expect(await versions("version", 1)).toEqual(["1.10.6", "3.46.0", "12"]);
    expect(await versions("version desc", 1)).toEqual(["12", "3.46.0", "1.10.6"]);
    // Filters still compare the text.
    expect(
      ok(await get(`/v1/workspaces/${ws}/engines?filter=${q(`engine_id = "${p}*" AND version = "12"`)}`)).totalSize,
    ).toBe(1);
  });

  it("shows a deleted version or image as deletedVersion", async () => {
    const image = await catalogueFixture(h(), "notebookEngineImages", freshId("img"), {
      image: "x/y:1",
      enabled: true,
    });
    const nb = (
      await createEngine("notebook", {
        ws: "mixed2",
        who: "admin",
        body: bodyOf("notebook", { notebookImage: image.name }),
      })
    ).name;
    ok(await h().rest("DELETE", `/v1/${image.name}`));
    await h().catalogue.flushEvents();
    await waitUntil(async () =>
      h().engine.catalogue?.get("notebookEngineImages", image.name) === undefined ? true : undefined,
    );
    const entry = ok(await get("/v1/workspaces/mixed2/engines")).engines.find((e: { name: string }) => e.name === nb);
    expect(entry.deletedVersion).toBe(true);
  });

  it("lists across all workspaces with workspaces/- (LIST_ALL, administrators only)", async () => {
    const other = (await createEngine("dai", { ws: "team-b", who: "erin" })).name;
    const all = ok(
      await get(`/v1/workspaces/-/engines?filter=${q(`name = "${other}" OR creator = "users/alice"`)}&pageSize=1000`),
    );
    expect(all.engines.some((e: { name: string }) => e.name === other)).toBe(true);
    expect(all.engines.some((e: { name: string }) => e.name.startsWith(`workspaces/${WS}/`))).toBe(true);
    expectError(
      await get("/v1/workspaces/-/engines", { who: "alice" }),
      "PERMISSION_DENIED",
      "actions/enginemanager/engines/LIST_ALL",
    );
    expectError(await get("/v1/workspaces/-/daiEngines", { who: "admin" }), "INVALID_ARGUMENT", "parent");
  });
});

describe("H2O size calculations", () => {
  it("hold the reference vectors over REST and check their arguments", async () => {
    const raw = ok(
      await post("/v1/h2oEngines:calculateH2OEngineSizeRawDataset", {
        who: "viewer",
        body: { datasetSizeBytes: "1000", limits: { memoryBytesPerNodeMin: "100", nodeCountMin: "2" } },
      }),
    );
    expect(raw.h2oEngineSize).toEqual({ nodeCount: "2", memoryBytes: "2500" });
    expect(raw.limits).toEqual({ memoryBytesPerNodeMin: "100", nodeCountMin: "2" });
    const capped = ok(
      await post("/v1/h2oEngines:calculateH2OEngineSizeRawDataset", {
        who: "stranger",
        body: {
          datasetSizeBytes: "1000",
          limits: { memoryBytesPerNodeMin: "100", memoryBytesPerNodeMax: "200", nodeCountMin: "1", nodeCountMax: "2" },
        },
      }),
    );
    expect(capped.h2oEngineSize).toEqual({ nodeCount: "2", memoryBytes: "200" });
    const compressed = ok(
      await post("/v1/h2oEngines:calculateH2OEngineSizeCompressedDataset", {
        body: { rowsCount: "100", columnsCount: "100", limits: { memoryBytesPerNodeMin: "1", nodeCountMin: "2" } },
      }),
    );
    expect(compressed.h2oEngineSize).toEqual({ nodeCount: "2", memoryBytes: "160000" });
    expectError(
      await post("/v1/h2oEngines:calculateH2OEngineSizeRawDataset", {
        body: { datasetSizeBytes: "0", limits: { memoryBytesPerNodeMin: "1", nodeCountMin: "1" } },
      }),
      "INVALID_ARGUMENT",
      "dataset_size_bytes",
    );
    expectError(
      await post("/v1/h2oEngines:calculateH2OEngineSizeCompressedDataset", {
        body: { rowsCount: "1", columnsCount: "1" },
      }),
      "INVALID_ARGUMENT",
      "limits",
    );
    expectError(
      await post("/v1/h2oEngines:calculateH2OEngineSizeRawDataset", {
        who: "anonymous",
        body: { datasetSizeBytes: "1" },
      }),
      "UNAUTHENTICATED",
    );
  });
});

describe("the Driverless AI license", () => {
  it("tells every signed-in user that this deployment has none, and nobody else", async () => {
    // No metadata key at all: the official client reads that as None (it refuses a null).
    expect(ok(await get("/v1/daiLicenseMetadata", { who: "stranger" }))).toEqual({});
    expectError(await get("/v1/daiLicenseMetadata", { who: "anonymous" }), "UNAUTHENTICATED");
  });
});

async function waitUntil<T>(check: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("after the suite", () => {
  it("deletes every engine it made", deleteAllEngines, 90_000);
});
