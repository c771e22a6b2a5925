// DAI, H2O and notebook engine profiles through Connect: every field, constraint consistency,
// update masks, copy and ListAssigned.
import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { listAllPages, type RestJson } from "@aiem/kit/testing";
import { descriptorOf, type KindDescriptor } from "./kinds.js";
import { expectCode, expectInvalid, kindApi, type KindApi, useCatalogueHarness } from "./testing.js";

const harness = useCatalogueHarness("profiles");

const PROFILES = (["daiEngineProfiles", "h2oEngineProfiles", "notebookEngineProfiles"] as const).map(descriptorOf);
const admin = (d: KindDescriptor): KindApi => kindApi(harness().as("admin"), d);
const GiB = 1024n ** 3n;

/** A profile body exercising every common field. */
function commonBody(): Record<string, unknown> {
  return {
    displayName: "Team profile",
    priority: 5,
    enabled: true,
    assignedOidcRolesEnabled: true,
    assignedOidcRoles: ["data-science", "admins"],
    maxRunningEngines: 3,
    cpuConstraint: { min: 1n, max: 16n, default: 2n, cumulativeMax: 32n },
    gpuConstraint: { min: 0n, max: 2n, default: 0n },
    memoryBytesConstraint: { min: GiB, max: 64n * GiB, default: 8n * GiB },
    maxIdleDurationConstraint: { min: { seconds: 60n }, max: { seconds: 7200n }, default: { seconds: 3600n } },
    maxRunningDurationConstraint: { min: { seconds: 0n }, default: { seconds: 28800n } },
    yamlPodTemplateSpec: "spec:\n  nodeSelector:\n    pool: gpu\n",
    yamlGpuTolerations: "- key: nvidia.com/gpu\n  operator: Exists\n",
    gpuResourceName: "nvidia.com/gpu",
  };
}

const KIND_SPECIFIC: Record<string, Record<string, unknown>> = {
  daiEngineProfiles: {
    storageBytesConstraint: { min: GiB, default: 16n * GiB },
    maxNonInteractionDuration: { seconds: 1800n },
    maxUnusedDuration: { seconds: 900n },
    configurationOverride: { enable_gpu: "true" },
    baseConfiguration: { max_runtime_minutes: "60" },
    configEditability: 2,
    tritonEnabled: true,
    dataDirectoryStorageClass: "fast-ssd",
  },
  h2oEngineProfiles: {
    nodeCountConstraint: { min: 1n, max: 8n, default: 2n },
    javaClasspath: "/opt/extra.jar",
    javaOptions: "-XX:+UseG1GC",
    h2oOptions: "-nthreads 4",
  },
  notebookEngineProfiles: {
    storageBytesConstraint: { min: GiB, default: 16n * GiB },
    storageClassName: "standard",
    syncGitRepositoryEnabled: true,
    gitRepository: "https://github.com/acme/examples.git",
  },
};

describe.each(PROFILES.map((d) => [d.kind, d] as const))("%s", (kind, d) => {
  const ws = "team-a";
  const nameOf = (id: string) => `workspaces/${ws}/${kind}/${id}`;

  it("creates with every field, sets audit fields itself and ignores output-only values", async () => {
    const body = {
      ...commonBody(),
      ...KIND_SPECIFIC[kind],
      name: "workspaces/elsewhere/x/y",
      creator: "users/mallory",
      creatorDisplayName: "Mallory",
      createTime: { seconds: 1n },
      updateTime: { seconds: 2n },
    };
    const before = Date.now();
    const created = await admin(d).create(ws, "full", body);
    expect(created.name).toBe(nameOf("full"));
    expect(created.creator).toBe("users/root");
    expect(created.creatorDisplayName).toBe("Root Admin");
    // Not updated yet: no update time and no updater.
    expect(created.updater).toBe("");
    expect(created.updaterDisplayName).toBe("");
    expect(created.updateTime).toBeUndefined();
    const createMs = Number(created.createTime.seconds) * 1000;
    expect(createMs).toBeGreaterThanOrEqual(before - 1000);
    for (const [key, value] of Object.entries({ ...commonBody(), ...KIND_SPECIFIC[kind] })) {
      expect(
        JSON.parse(JSON.stringify(created[key], (_k, v) => (typeof v === "bigint" ? `${v}` : v))),
        key,
      ).toMatchObject(JSON.parse(JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? `${v}` : v))));
    }
    // Restricted to roles a plain user holds none of: hidden (404), as the real service does;
    // a holder of one of the roles reads it.
    await expectCode(kindApi(harness().as("stranger"), d).get(nameOf("full")), Code.NotFound, nameOf("full"));
    const holder = await harness().asUser("holder", { roles: ["admins"] });
    expect(await kindApi(holder, d).get(nameOf("full"))).toEqual(created);
  });

  it("hides a role-restricted profile from a member without the role, not from administrators", async () => {
    await admin(d).create(ws, "restricted", { assignedOidcRolesEnabled: true, assignedOidcRoles: ["admin"] });
    await admin(d).create(ws, "open", { assignedOidcRolesEnabled: false, assignedOidcRoles: ["admin"] });
    await expectCode(kindApi(harness().as("stranger"), d).get(nameOf("restricted")), Code.NotFound, "not found");
    expect((await kindApi(harness().as("stranger"), d).get(nameOf("open"))).name).toBe(nameOf("open"));
    expect((await admin(d).get(nameOf("restricted"))).name).toBe(nameOf("restricted"));
  });

  it("lists by priority, then name, for administrators only; members list what is assigned", async () => {
    const lws = `order-${kind.slice(0, 3)}`;
    const lname = (id: string) => `workspaces/${lws}/${kind}/${id}`;
    const on = { enabled: true };
    await admin(d).create(lws, "p1", { ...on, priority: 3, assignedOidcRolesEnabled: true, assignedOidcRoles: ["ds"] });
    await admin(d).create(lws, "p2", { ...on, priority: 2 });
    await admin(d).create(lws, "b", { ...on, priority: 1 });
    await admin(d).create(lws, "a", { ...on, priority: 1 });
    const order = ["a", "b", "p2", "p1"].map(lname);
    expect((await admin(d).list(lws)).items.map((p) => p.name)).toEqual(order);
    const first = await admin(d).list(lws, { pageSize: 3 });
    expect(first.items.map((p) => p.name)).toEqual(order.slice(0, 3));
    const next = await admin(d).list(lws, { pageSize: 3, pageToken: first.nextPageToken });
    expect(next.items.map((p) => p.name)).toEqual(order.slice(3));
    expect(next.nextPageToken).toBe("");
    // Everyone else: 403 naming the permission, even with the role the restricted one asks for.
    const holder = await harness().asUser("ds-holder", { roles: ["ds"] });
    for (const who of [harness().as("member"), harness().as("viewer"), holder]) {
      const err = await expectCode(kindApi(who, d).list(lws), Code.PermissionDenied, `${kind}/LIST`);
      expect(err.rawMessage).toContain(":listAssigned");
    }
    expect((await kindApi(harness().as("member"), d).listAssigned(lws)).items.map((p) => p.name)).toEqual(
      order.slice(0, 3),
    );
  });

  it("fills unset constraints with the documented defaults", async () => {
    const created = await admin(d).create(ws, "defaults", {});
    expect(created.cpuConstraint).toMatchObject({ min: 1n, default: 1n });
    expect(created.cpuConstraint.max).toBeUndefined();
    expect(created.gpuConstraint).toMatchObject({ min: 0n, default: 0n });
    expect(created.memoryBytesConstraint).toMatchObject({ min: GiB, default: 4n * GiB });
    expect(created.maxIdleDurationConstraint.default.seconds).toBe(3600n);
    expect(created.maxRunningDurationConstraint.default.seconds).toBe(28800n);
    if (kind === "h2oEngineProfiles") expect(created.nodeCountConstraint).toMatchObject({ min: 1n, default: 1n });
    else expect(created.storageBytesConstraint).toMatchObject({ min: GiB, default: 16n * GiB });
    expect(created.gpuResourceName).toBe("nvidia.com/gpu");
    if (kind === "notebookEngineProfiles") {
      expect(created.gitRef).toBe("HEAD");
      expect(created.gitDirectoryName).toBe("Example");
    }
  });

  it("rejects a duplicate id with ALREADY_EXISTS naming the resource", async () => {
    await admin(d).create(ws, "dup", {});
    await expectCode(admin(d).create(ws, "dup", { displayName: "again" }), Code.AlreadyExists, nameOf("dup"));
    expect((await admin(d).get(nameOf("dup"))).displayName).toBe("");
  });

  it.each([
    ["", "is required"],
    ["Upper", "must be 1-63"],
    ["1abc", "must be 1-63"],
    ["a".repeat(64), "must be 1-63"],
    ["ends-", "must be 1-63"],
  ])("rejects the id %j naming the id field", async (id) => {
    await expectInvalid(admin(d).create(ws, id, {}), d.idField);
  });

  it("accepts a 63-character id and a 63-character display name", async () => {
    const id = `a${"b".repeat(62)}`;
    const created = await admin(d).create(ws, id, { displayName: "x".repeat(63) });
    expect(created.name).toBe(nameOf(id));
  });

  it.each([
    ["display_name", { displayName: "x".repeat(64) }],
    ["max_running_engines", { maxRunningEngines: -1 }],
    ["assigned_oidc_roles[1]", { assignedOidcRoles: ["ok", ""] }],
    ["cpu_constraint.min", { cpuConstraint: { min: 0n, default: 1n } }],
    ["cpu_constraint.max", { cpuConstraint: { min: 4n, max: 2n, default: 4n } }],
    ["cpu_constraint.default", { cpuConstraint: { min: 2n, max: 8n, default: 1n } }],
    ["cpu_constraint.default", { cpuConstraint: { min: 2n, max: 8n, default: 9n } }],
    ["cpu_constraint.cumulative_max", { cpuConstraint: { min: 1n, default: 4n, cumulativeMax: 3n } }],
    ["gpu_constraint.min", { gpuConstraint: { min: -1n, default: 0n } }],
    ["memory_bytes_constraint.default", { memoryBytesConstraint: { min: GiB, max: 2n * GiB, default: 3n * GiB } }],
    [
      "max_idle_duration_constraint.max",
      { maxIdleDurationConstraint: { min: { seconds: 60n }, max: { seconds: 30n }, default: { seconds: 60n } } },
    ],
    [
      "max_idle_duration_constraint.default",
      { maxIdleDurationConstraint: { min: { seconds: 60n }, default: { seconds: 30n } } },
    ],
    [
      "max_idle_duration_constraint.default",
      { maxIdleDurationConstraint: { min: { seconds: 0n }, max: { seconds: 60n }, default: { seconds: 61n } } },
    ],
    ["max_idle_duration_constraint.min", { maxIdleDurationConstraint: { default: { seconds: 60n } } }],
    ["max_idle_duration_constraint.default", { maxIdleDurationConstraint: { min: { seconds: 0n } } }],
    [
      "max_running_duration_constraint.min",
      { maxRunningDurationConstraint: { min: { seconds: -5n }, default: { seconds: 60n } } },
    ],
    [
      "max_running_duration_constraint.default",
      { maxRunningDurationConstraint: { min: { seconds: 0n }, default: { seconds: 1n, nanos: 2_000_000_000 } } },
    ],
    ["yaml_pod_template_spec", { yamlPodTemplateSpec: "spec: [unclosed" }],
    ["yaml_pod_template_spec", { yamlPodTemplateSpec: "- a list" }],
    ["yaml_gpu_tolerations", { yamlGpuTolerations: "key: value" }],
  ])("rejects bad %s and changes nothing", async (field, body) => {
    await expectInvalid(admin(d).create(ws, "bad", body), `${d.resourceField}.${field}`);
    await expectCode(admin(d).get(nameOf("bad")), Code.NotFound);
  });

  it("accepts a constraint with min = default = max", async () => {
    const created = await admin(d).create(ws, "tight", {
      cpuConstraint: { min: 4n, max: 4n, default: 4n, cumulativeMax: 4n },
    });
    expect(created.cpuConstraint).toMatchObject({ min: 4n, max: 4n, default: 4n, cumulativeMax: 4n });
  });

  it("lists every violation in one error", async () => {
    const err = await expectInvalid(
      admin(d).create(ws, "many", { displayName: "x".repeat(64), cpuConstraint: { min: 2n, default: 1n } }),
      `${d.resourceField}.display_name`,
    );
    expect(err.rawMessage).toContain(`${d.resourceField}.cpu_constraint.default: `);
  });

  it.each([
    ["parent", { parent: "team-a" }],
    ["parent", { parent: "workspaces/Team" }],
    ["parent", { parent: "" }],
  ])("rejects a bad %s", async (field, req) => {
    const c = harness().as("admin")[clientKey(d)] as RestJson;
    await expectInvalid(c[`create${d.singular}`]({ [d.resourceLocal]: {}, [d.idLocal]: "x", ...req }), field);
  });

  it("gets NOT_FOUND naming the resource, and INVALID_ARGUMENT for a malformed name", async () => {
    await expectCode(admin(d).get(nameOf("nope")), Code.NotFound, `"${nameOf("nope")}" not found`);
    await expectInvalid(admin(d).get(`workspaces/${ws}/other/x`), "name");
    await expectInvalid(admin(d).get(""), "name");
  });

  describe("update", () => {
    beforeAll(async () => {
      await admin(d).create(ws, "mask", {});
    });

    it("changes only the masked fields and records the updater", async () => {
      const created = await admin(d).create(ws, "upd", { displayName: "Before", priority: 1, enabled: false });
      await new Promise((r) => setTimeout(r, 5));
      const member = await harness().asUser("ops", { admin: true, displayName: "Ops" });
      const updated = await kindApi(member, d).update(
        { name: nameOf("upd"), displayName: "After", priority: 9, enabled: true, creator: "users/mallory" },
        ["display_name", "enabled"],
      );
      expect(updated.displayName).toBe("After");
      expect(updated.enabled).toBe(true);
      expect(updated.priority).toBe(1);
      expect(updated.creator).toBe("users/root");
      expect(updated.updater).toBe("users/ops");
      expect(updated.updaterDisplayName).toBe("Ops");
      expect(updated.createTime).toEqual(created.createTime);
      const t = (ts: { seconds: bigint; nanos: number }) => Number(ts.seconds) * 1e3 + ts.nanos / 1e6;
      expect(created.updateTime).toBeUndefined();
      expect(t(updated.updateTime)).toBeGreaterThan(t(created.createTime));
      expect(await admin(d).get(nameOf("upd"))).toEqual(updated);
    });

    it("with * sets every updatable field, and clearing a constraint restores its default", async () => {
      await admin(d).create(ws, "star", { ...commonBody(), ...KIND_SPECIFIC[kind] });
      const updated = await admin(d).update({ name: nameOf("star"), displayName: "Star", priority: 3 }, ["*"]);
      expect(updated.displayName).toBe("Star");
      expect(updated.priority).toBe(3);
      expect(updated.enabled).toBe(false);
      expect(updated.assignedOidcRoles).toEqual([]);
      expect(updated.maxRunningEngines).toBeUndefined();
      expect(updated.cpuConstraint).toMatchObject({ min: 1n, default: 1n });
      expect(updated.cpuConstraint.max).toBeUndefined();
      if (kind === "notebookEngineProfiles") {
        // Git settings are immutable: * leaves them as created.
        expect(updated.syncGitRepositoryEnabled).toBe(true);
        expect(updated.gitRepository).toBe("https://github.com/acme/examples.git");
      }
    });

    it.each(d.updatable.map((p) => [p]))("accepts the path %s", async (path) => {
      await admin(d).create(ws, `path-${path.replace(/_/g, "-")}`, {});
      await admin(d).update({ name: nameOf(`path-${path.replace(/_/g, "-")}`) }, [path]);
    });

    it("requires a non-empty mask", async () => {
      await expectInvalid(admin(d).update({ name: nameOf("mask") }, []), "update_mask");
      await expectInvalid(admin(d).update({ name: nameOf("mask") }), "update_mask");
    });

    it.each([
      ["unknown path", ["no_such_field"], "unknown path"],
      ["camelCase path", ["displayName"], "did you mean"],
      ["output-only path", ["create_time"], "set by the server"],
      ["identifier", ["name"], "cannot be changed"],
      ["* with others", ["*", "priority"], "only path"],
    ])("rejects a mask with a %s", async (_, paths, text) => {
      const err = await expectInvalid(admin(d).update({ name: nameOf("mask") }, paths), "update_mask");
      expect(err.rawMessage).toContain(text);
    });

    it("rejects an invalid new value naming it, and changes nothing", async () => {
      const before = await admin(d).create(ws, "keep", { displayName: "Keep" });
      await expectInvalid(
        admin(d).update({ name: nameOf("keep"), displayName: "x".repeat(64) }, ["display_name"]),
        `${d.resourceField}.display_name`,
      );
      await expectInvalid(
        admin(d).update({ name: nameOf("keep"), cpuConstraint: { min: 3n, default: 2n } }, ["cpu_constraint"]),
        `${d.resourceField}.cpu_constraint.default`,
      );
      expect(await admin(d).get(nameOf("keep"))).toEqual(before);
    });

    it("answers NOT_FOUND with the name, and names a missing or malformed resource name", async () => {
      await expectCode(
        admin(d).update({ name: nameOf("ghost"), displayName: "x" }, ["display_name"]),
        Code.NotFound,
        nameOf("ghost"),
      );
      await expectInvalid(
        admin(d).update({ name: "nonsense", displayName: "x" }, ["display_name"]),
        `${d.resourceField}.name`,
      );
      const c = harness().as("admin")[clientKey(d)] as RestJson;
      await expectInvalid(c[`update${d.singular}`]({ updateMask: { paths: ["display_name"] } }), d.resourceField);
    });
  });

  it("deletes, then answers NOT_FOUND", async () => {
    await admin(d).create(ws, "gone", {});
    await admin(d).delete(nameOf("gone"));
    await expectCode(admin(d).get(nameOf("gone")), Code.NotFound);
    await expectCode(admin(d).delete(nameOf("gone")), Code.NotFound, nameOf("gone"));
  });

  describe("copy", () => {
    it("copies every setting under a new id, possibly into another workspace, with fresh audit fields", async () => {
      const source = await admin(d).create(ws, "original", { ...commonBody(), ...KIND_SPECIFIC[kind] });
      const ops = await harness().asUser("ops", { admin: true, displayName: "Ops" });
      const copy = await kindApi(ops, d).copy(nameOf("original"), "team-b", "the-copy");
      expect(copy.name).toBe(`workspaces/team-b/${kind}/the-copy`);
      expect(copy.creator).toBe("users/ops");
      expect(copy.updater).toBe("");
      expect(copy.updateTime).toBeUndefined();
      const strip = (r: RestJson) => {
        const {
          name: _n,
          createTime: _c,
          updateTime: _u,
          creator: _a,
          updater: _b,
          creatorDisplayName: _d,
          updaterDisplayName: _e,
          ...rest
        } = r;
        return rest;
      };
      expect(strip(copy)).toEqual(strip(source));
      expect(await admin(d).get(copy.name)).toEqual(copy);
    });

    it("rejects a taken id, a missing id, a missing source and a bad parent", async () => {
      await admin(d).create(ws, "src", {});
      await admin(d).create(ws, "taken", {});
      await expectCode(admin(d).copy(nameOf("src"), ws, "taken"), Code.AlreadyExists, nameOf("taken"));
      await expectInvalid(admin(d).copy(nameOf("src"), ws, ""), d.idField);
      await expectInvalid(admin(d).copy(nameOf("src"), ws, "Bad_Id"), d.idField);
      await expectCode(admin(d).copy(nameOf("missing"), ws, "new-one"), Code.NotFound, nameOf("missing"));
      await expectInvalid(admin(d).copy("bogus", ws, "new-one"), "name");
      await expectInvalid(admin(d).copy(nameOf("src"), "-", "new-one"), "parent");
    });
  });

  describe("listAssigned", () => {
    const aws = `assigned-${kind.slice(0, 3)}`;
    const assignedName = (id: string) => `workspaces/${aws}/${kind}/${id}`;

    beforeAll(async () => {
      const a = admin(d);
      await a.create(aws, "low", { enabled: true, priority: 10 });
      await a.create(aws, "high-b", { enabled: true, priority: 1 });
      await a.create(aws, "high-a", { enabled: true, priority: 1 });
      await a.create(aws, "negative", { enabled: true, priority: -3 });
      await a.create(aws, "disabled", { enabled: false, priority: 0 });
      await a.create(aws, "for-ds", {
        enabled: true,
        priority: 5,
        assignedOidcRolesEnabled: true,
        assignedOidcRoles: ["ds", "ml"],
      });
      await a.create(aws, "nobody", {
        enabled: true,
        priority: 0,
        assignedOidcRolesEnabled: true,
        assignedOidcRoles: [],
      });
      // Roles listed but not verified: everyone may use it.
      await a.create(aws, "roles-off", {
        enabled: true,
        priority: 7,
        assignedOidcRolesEnabled: false,
        assignedOidcRoles: ["x"],
      });
    });

    it("lists the enabled profiles the caller may use, by priority then name", async () => {
      const plain = await harness().asUser("plain");
      const { items } = await kindApi(plain, d).listAssigned(aws);
      expect(items.map((p) => p.name)).toEqual(["negative", "high-a", "high-b", "roles-off", "low"].map(assignedName));
    });

    it("includes role-restricted profiles for holders of one of their roles", async () => {
      const ds = await harness().asUser("scientist", { roles: ["ml"] });
      const { items } = await kindApi(ds, d).listAssigned(aws);
      expect(items.map((p) => p.name)).toEqual(
        ["negative", "high-a", "high-b", "for-ds", "roles-off", "low"].map(assignedName),
      );
    });

    it("applies the role rule to administrators too", async () => {
      const { items } = await admin(d).listAssigned(aws);
      expect(items.map((p) => p.name)).not.toContain(assignedName("nobody"));
      expect(items.map((p) => p.name)).not.toContain(assignedName("for-ds"));
    });

    it("pages through the same order", async () => {
      const ds = kindApi(await harness().asUser("scientist", { roles: ["ds"] }), d);
      const { items } = await listAllPages(async (pageToken) => {
        const page = await ds.listAssigned(aws, { pageSize: 2, pageToken });
        expect(page.items.length).toBeLessThanOrEqual(2);
        return page;
      });
      expect(items.map((p) => p.name)).toEqual(
        ["negative", "high-a", "high-b", "for-ds", "roles-off", "low"].map(assignedName),
      );
      await expectInvalid(ds.listAssigned(aws, { pageToken: "forged.token" }), "page_token");
      await expectInvalid(ds.listAssigned(aws, { pageSize: -1 }), "page_size");
    });
  });
});

describe("profile kind specifics", () => {
  const ws = "team-a";
  const dai = () => admin(descriptorOf("daiEngineProfiles"));
  const h2o = () => admin(descriptorOf("h2oEngineProfiles"));
  const nb = () => admin(descriptorOf("notebookEngineProfiles"));

  it.each([
    [
      "dai_engine_profile.storage_bytes_constraint.default",
      () => dai().create(ws, "x1", { storageBytesConstraint: { min: 2n * GiB, default: GiB } }),
    ],
    [
      "dai_engine_profile.max_non_interaction_duration",
      () => dai().create(ws, "x2", { maxNonInteractionDuration: { seconds: 0n } }),
    ],
    ["dai_engine_profile.max_unused_duration", () => dai().create(ws, "x3", { maxUnusedDuration: { seconds: -1n } })],
    [
      'dai_engine_profile.configuration_override["bad key"]',
      () => dai().create(ws, "x4", { configurationOverride: { "bad key": "v" } }),
    ],
    ["dai_engine_profile.config_editability", () => dai().create(ws, "x5", { configEditability: 42 })],
    [
      "h2o_engine_profile.node_count_constraint.min",
      () => h2o().create(ws, "x6", { nodeCountConstraint: { min: 0n, default: 1n } }),
    ],
    [
      "h2o_engine_profile.node_count_constraint.max",
      () => h2o().create(ws, "x7", { nodeCountConstraint: { min: 3n, max: 2n, default: 3n } }),
    ],
    ["notebook_engine_profile.git_repository", () => nb().create(ws, "x8", { syncGitRepositoryEnabled: true })],
    ["notebook_engine_profile.git_directory_name", () => nb().create(ws, "x9", { gitDirectoryName: "../escape" })],
    ["notebook_engine_profile.git_ref", () => nb().create(ws, "x10", { gitRef: "bad ref" })],
  ])("rejects %s", async (field, call) => {
    await expectInvalid(call(), field);
  });

  it("H2O profiles use enabled (not disabled) and assigned_oidc_roles_enabled", async () => {
    await h2o().create(ws, "h2o-mask", {});
    const updated = await h2o().update(
      { name: `workspaces/${ws}/h2oEngineProfiles/h2o-mask`, enabled: true, assignedOidcRolesEnabled: true },
      ["enabled", "assigned_oidc_roles_enabled"],
    );
    expect(updated.enabled).toBe(true);
    expect(updated.assignedOidcRolesEnabled).toBe(true);
    await expectInvalid(
      h2o().update({ name: `workspaces/${ws}/h2oEngineProfiles/h2o-mask` }, ["disabled"]),
      "update_mask",
    );
    await expectInvalid(
      h2o().update({ name: `workspaces/${ws}/h2oEngineProfiles/h2o-mask` }, ["storage_bytes_constraint"]),
      "update_mask",
    );
  });

  it("keeps notebook git settings immutable", async () => {
    await nb().create(ws, "git", {
      syncGitRepositoryEnabled: true,
      gitRepository: "https://example.com/r.git",
      gitRef: "main",
      gitDirectoryName: "Docs",
    });
    for (const path of ["git_repository", "git_ref", "git_directory_name", "sync_git_repository_enabled"]) {
      const err = await expectInvalid(
        nb().update({ name: `workspaces/${ws}/notebookEngineProfiles/git`, gitRef: "dev" }, [path]),
        "update_mask",
      );
      expect(err.rawMessage).toContain("cannot be changed after create");
    }
    const got = await nb().get(`workspaces/${ws}/notebookEngineProfiles/git`);
    expect(got).toMatchObject({ gitRef: "main", gitDirectoryName: "Docs", gitRepository: "https://example.com/r.git" });
  });

  it("rejects DAI-only paths on the notebook mask and notebook-only paths on the DAI mask", async () => {
    await nb().create(ws, "nbmask", {});
    await dai().create(ws, "daimask", {});
    await expectInvalid(
      nb().update({ name: `workspaces/${ws}/notebookEngineProfiles/nbmask` }, ["triton_enabled"]),
      "update_mask",
    );
    await expectInvalid(
      dai().update({ name: `workspaces/${ws}/daiEngineProfiles/daimask` }, ["storage_class_name"]),
      "update_mask",
    );
  });
});

function clientKey(d: KindDescriptor) {
  return (
    {
      daiEngineProfiles: "daiProfiles",
      h2oEngineProfiles: "h2oProfiles",
      notebookEngineProfiles: "notebookProfiles",
    } as const
  )[d.kind as "daiEngineProfiles"];
}
