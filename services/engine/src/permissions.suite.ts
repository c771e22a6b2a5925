// Who may do what (issue 6, part 6) over REST: the creator, another member, a viewer, an
// administrator, a stranger and an anonymous caller, on a private engine and on a shared notebook;
// and LIST_ALL. Engines the caller cannot see answer 404 (their existence does not leak); calls
// the caller's role does not allow answer 403 before anything is looked up.
import { beforeAll, describe, expect, it } from "vitest";
import {
  bodyOf,
  createEngine,
  deleteAllEngines,
  expectError,
  get,
  h,
  K,
  ok,
  post,
  res,
  runningEngine,
  WS,
} from "./testing/rest-suite.js";

const listNames = async (
  path: string,
  who: Parameters<typeof get>[1] extends infer O ? (O extends { who?: infer W } ? W : never) : never,
) => ok(await get(path, { who })).engines?.map((e: { name: string }) => e.name) ?? [];

describe.concurrent("a private engine", () => {
  let dai: string;
  let notebook: string;
  beforeAll(async () => {
    dai = await runningEngine("dai");
    notebook = await runningEngine("notebook");
  });

  it("is visible to its creator and administrators, and to nobody else (404)", async () => {
    ok(await get(`/v1/${dai}`, { who: "alice" }));
    ok(await get(`/v1/${dai}`, { who: "admin" }));
    expectError(await get(`/v1/${dai}`, { who: "bob" }), "NOT_FOUND", dai);
    expectError(await get(`/v1/${dai}`, { who: "viewer" }), "NOT_FOUND", dai);
    expectError(await get(`/v1/${notebook}`, { who: "bob" }), "NOT_FOUND", notebook);
    const names = (who: "alice" | "bob" | "viewer" | "admin") =>
      listNames(`/v1/workspaces/${WS}/engines?pageSize=1000`, who);
    expect(await names("alice")).toContain(dai);
    expect(await names("admin")).toContain(dai);
    expect(await names("bob")).not.toContain(dai);
    expect(await names("viewer")).not.toContain(dai);
    const typed = ok(await get(`/v1/workspaces/${WS}/daiEngines?pageSize=1000`, { who: "bob" })).daiEngines ?? [];
    expect(typed.every((e: { creator: string }) => e.creator === "users/bob")).toBe(true);
  });

  it("refuses callers without a role in the workspace (403) and without a token (401)", async () => {
    expectError(
      await get(`/v1/${dai}`, { who: "stranger" }),
      "PERMISSION_DENIED",
      "lacks actions/enginemanager/daiEngines/GET on workspaces/team-a",
    );
    expectError(await get(`/v1/${dai}`, { who: "erin" }), "PERMISSION_DENIED", "daiEngines/GET");
    expectError(
      await get(`/v1/workspaces/${WS}/daiEngines`, { who: "stranger" }),
      "PERMISSION_DENIED",
      "daiEngines/LIST",
    );
    expectError(await get(`/v1/workspaces/${WS}/engines`, { who: "stranger" }), "PERMISSION_DENIED", "engines/LIST");
    expectError(await createEngine("dai", { who: "stranger" }), "PERMISSION_DENIED", "daiEngines/CREATE");
    expectError(await get(`/v1/${dai}`, { who: "anonymous" }), "UNAUTHENTICATED");
    expectError(await createEngine("h2o", { who: "anonymous" }), "UNAUTHENTICATED");
  });

  it("lets viewers read but not create or act (403)", async () => {
    expectError(await createEngine("dai", { who: "viewer" }), "PERMISSION_DENIED", "daiEngines/CREATE");
    expectError(await createEngine("notebook", { who: "viewer" }), "PERMISSION_DENIED", "notebookEngines/CREATE");
    for (const [path, action] of [
      [`/v1/${dai}:pause`, "PAUSE"],
      [`/v1/${dai}:resume`, "RESUME"],
      [`/v1/${dai}:downloadLogs`, "DOWNLOAD_LOGS"],
      [`/v1/${dai}:resizeStorage`, "RESIZE_STORAGE"],
      [`/v1/${dai}:upgradeDAIEngineVersion`, "UPGRADE_DAI_ENGINE_VERSION"],
      [`/v1/${dai}:migrateCreator`, "MIGRATE_CREATOR"],
    ] as const) {
      expectError(await post(path, { who: "viewer" }), "PERMISSION_DENIED", `daiEngines/${action}`);
    }
    expectError(await h().rest("DELETE", `/v1/${dai}`, { who: "viewer" }), "PERMISSION_DENIED", "daiEngines/DELETE");
    expectError(
      await h().rest("PATCH", `/v1/${dai}?updateMask=display_name`, { who: "viewer", body: {} }),
      "PERMISSION_DENIED",
      "daiEngines/UPDATE",
    );
    expectError(await get(`/v1/${notebook}:access`, { who: "viewer" }), "PERMISSION_DENIED", "notebookEngines/ACCESS");
    ok(await get(`/v1/workspaces/${WS}/notebookEngines`, { who: "viewer" }));
  });

  it("hides another member's engine from every call (404)", async () => {
    expectError(await post(`/v1/${dai}:pause`, { who: "bob" }), "NOT_FOUND", dai);
    expectError(await post(`/v1/${dai}:downloadLogs`, { who: "bob" }), "NOT_FOUND", dai);
    expectError(await h().rest("DELETE", `/v1/${dai}`, { who: "bob" }), "NOT_FOUND", dai);
    expectError(
      await h().rest("PATCH", `/v1/${dai}?updateMask=display_name`, { who: "bob", body: {} }),
      "NOT_FOUND",
      dai,
    );
    expectError(await get(`/v1/${notebook}:access`, { who: "bob" }), "NOT_FOUND", notebook);
    // allow_missing does not reveal it either.
    expect(ok(await h().rest("DELETE", `/v1/${dai}?allowMissing=true`, { who: "bob" }))).toEqual({});
    ok(await get(`/v1/${dai}`, { who: "alice" }));
  });

  it("lets administrators act on anyone's engine", async () => {
    const name = (await createEngine("dai", { who: "bob" })).name;
    expect(res(await post(`/v1/${name}:pause`)).state).toBe("STATE_PAUSING");
    await h().waitForState(name, "STATE_PAUSED");
    expect(
      res(await h().rest("PATCH", `/v1/${name}?updateMask=display_name`, { body: { displayName: "By admin" } }))
        .displayName,
    ).toBe("By admin");
    expect(res(await h().rest("DELETE", `/v1/${name}`)).state).toBe("STATE_DELETING");
  });

  it("only lets administrators list all workspaces (LIST_ALL)", async () => {
    ok(await get("/v1/workspaces/-/engines"));
    for (const who of ["alice", "viewer", "stranger"] as const) {
      expectError(
        await get("/v1/workspaces/-/engines", { who }),
        "PERMISSION_DENIED",
        "actions/enginemanager/engines/LIST_ALL",
      );
    }
  });
});

describe.concurrent("a shared notebook", () => {
  let shared: string;
  beforeAll(async () => {
    const r = await createEngine("notebook", {
      body: bodyOf("notebook", { shared: true, displayName: "Team notebook" }),
    });
    expect(res(r).shared).toBe(true);
    shared = r.name;
    await h().waitForState(shared, "STATE_RUNNING");
  });

  it("is visible to every member and viewer of its workspace, not to others", async () => {
    for (const who of ["bob", "viewer", "admin", "alice"] as const) {
      expect(res(await get(`/v1/${shared}`, { who })).shared).toBe(true);
      expect(await listNames(`/v1/workspaces/${WS}/engines?pageSize=1000`, who)).toContain(shared);
      const typed = ok(
        await get(
          `/v1/workspaces/${WS}/notebookEngines?pageSize=1000&filter=${encodeURIComponent('display_name = "Team notebook"')}`,
          { who },
        ),
      );
      expect(typed.notebookEngines.map((e: { name: string }) => e.name)).toContain(shared);
    }
    expectError(await get(`/v1/${shared}`, { who: "erin" }), "PERMISSION_DENIED");
  });

  it("can be opened by members (ACCESS), but only its creator and administrators change it", async () => {
    const uri = ok(await get(`/v1/${shared}:access`, { who: "bob" })).uri;
    const page = await fetch(uri, { headers: { authorization: `Bearer ${await h().token("bob")}` } });
    expect(page.status).toBe(200);
    const viewerPage = await fetch(uri, { headers: { authorization: `Bearer ${await h().token("carol")}` } });
    expect(viewerPage.status).toBe(403);
    expectError(
      await post(`/v1/${shared}:pause`, { who: "bob" }),
      "PERMISSION_DENIED",
      "only its creator (users/alice) or an administrator",
    );
    expectError(
      await h().rest("PATCH", `/v1/${shared}?updateMask=display_name`, { who: "bob", body: {} }),
      "PERMISSION_DENIED",
      "only its creator",
    );
    expectError(await h().rest("DELETE", `/v1/${shared}`, { who: "bob" }), "PERMISSION_DENIED", "only its creator");
    expectError(
      await post(`/v1/${shared}:resizeStorage`, { who: "bob", body: { newStorageBytes: "99999999999" } }),
      "PERMISSION_DENIED",
      "only its creator",
    );
  });

  it("shared is set on create only", async () => {
    const r = await h().rest("PATCH", `/v1/${shared}?updateMask=shared`, { who: "alice", body: { shared: false } });
    expectError(r, "INVALID_ARGUMENT", "update_mask");
    expect(r.body.message).toContain("is set on create only");
  });
});

describe("engine URLs", () => {
  it("answer only callers who may open the engine", async () => {
    const name = await runningEngine("dai");
    const e = res(await get(`/v1/${name}`, { who: "alice" }));
    const open = async (headers: Record<string, string>) => fetch(e.loginUrl, { headers, redirect: "manual" });
    expect((await open({ authorization: `Bearer ${await h().token("alice")}` })).status).toBe(200);
    expect((await open({ authorization: `Bearer ${await h().token("root")}` })).status).toBe(200);
    expect((await open({ authorization: `Bearer ${await h().token("bob")}` })).status).toBe(404);
    expect((await open({ authorization: `Bearer ${await h().token("dave")}` })).status).toBe(404);
    expect((await open({})).status).toBe(401);
    expect((await open({ authorization: "Bearer not-a-token" })).status).toBe(401);
    expect(K.dai.collection).toBe("daiEngines");
  });
});

describe("after the suite", () => {
  it("deletes every engine it made", deleteAllEngines, 90_000);
});
