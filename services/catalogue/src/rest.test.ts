// The catalogue through the REST edge, as clients see it: every call of every catalogue and secret
// service, the rules of spec sections 5 and 9 that apply to the catalogue (each with its HTTP
// status, Status code and the field named in the message), and each call as an administrator, a
// member, a viewer, a non-member and an anonymous caller. Runs the real host of `npm start`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import {
  createTestDatabase,
  expectError,
  listAllPages,
  ok,
  type Reply,
  type RestJson,
  restCall,
} from "@aiem/kit/testing";
import { startTestHost, type TestHost } from "../../../edge/src/testing/test-host.js";
import { ALL_KINDS, KIND_DESCRIPTORS, type KindDescriptor } from "./kinds.js";
import { createCatalogueModule, type CatalogueModule } from "./module.js";
import { insertResource, stampCreate } from "./store.js";
import { TEST_POLICY, type Who } from "./testing.js";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { SandboxEngineImageSchema } from "@aiem/proto/enginemanager/v1/sandbox_engine_image_pb.js";

let t: TestHost;
let schema = "";

beforeAll(async () => {
  t = await startTestHost({
    policy: TEST_POLICY,
    modules: [
      {
        name: "catalogue",
        create: (deps) =>
          createCatalogueModule({
            ...deps,
            catalogueConfig: { pageTokenKey: undefined, secretsKey: undefined, seedDemo: true },
          }),
      },
    ],
  });
  schema = catalogue().database!.schema;
});

afterAll(async () => {
  await t?.stop();
  // The host closes its schemas but leaves them; on a shared PostgreSQL, drop ours.
  if (process.env.DATABASE_URL && schema) {
    const admin = await createTestDatabase("cat_rest_cleanup");
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
    await admin.destroy();
  }
});

const catalogue = () => t.host.modules.find((m) => m.name === "catalogue") as CatalogueModule;

// ---- calling ------------------------------------------------------------------------------------

const USERS: Record<Exclude<Who, "anonymous">, string> = {
  admin: "root",
  member: "alice",
  viewer: "carol",
  stranger: "dave",
};
const tokens = new Map<string, Promise<string>>();

function tokenOf(user: string, roles: string[] = []): Promise<string> {
  const key = `${user}|${roles.join(",")}`;
  let token = tokens.get(key);
  if (!token) {
    token = t.token(user, { roles });
    tokens.set(key, token);
  }
  return token;
}

async function rest(
  method: string,
  path: string,
  options: { who?: Who; user?: string; roles?: string[]; body?: unknown } = {},
): Promise<Reply> {
  const who = options.who ?? "admin";
  const user = options.user ?? (who === "anonymous" ? undefined : USERS[who]);
  const token = user ? await tokenOf(user, options.roles) : undefined;
  return restCall(t.url, method, path, { ...(token ? { token } : {}), body: options.body });
}

// ---- per-kind data ------------------------------------------------------------------------------

const ws = "team-a";
let counter = 0;

function bodyOf(d: KindDescriptor): Record<string, unknown> {
  switch (d.family) {
    case "profile":
      return { displayName: "P", enabled: true, priority: 1 };
    case "version":
      return { image: "ghcr.io/acme/x:1", imagePullPolicy: "IMAGE_PULL_POLICY_ALWAYS", imagePullSecrets: ["regcred"] };
    case "image":
      return { image: "ghcr.io/acme/x:1", displayName: "I", enabled: true };
    case "template":
      return { memoryBytesLimit: "1073741824", maxIdleDuration: "60s" };
  }
}

const BAD_BODY: Record<string, [Record<string, unknown>, string]> = {
  profile: [{ cpuConstraint: { min: "4", max: "2", default: "4" } }, "cpu_constraint.max"],
  version: [{ image: "" }, "image"],
  image: [{ image: "has space" }, "image"],
  template: [{ memoryBytesLimit: "1073741824" }, "max_idle_duration"],
};

const freshId = (d: KindDescriptor) => (d.family === "version" ? `4.0.${++counter}` : `r${++counter}`);
const collection = (d: KindDescriptor, workspace = ws) => `/v1/workspaces/${workspace}/${d.kind}`;

async function createAs(
  d: KindDescriptor,
  who: Who = "admin",
  id = freshId(d),
  body = bodyOf(d),
  workspace = ws,
): Promise<Reply> {
  return rest("POST", `${collection(d, workspace)}?${d.idLocal}=${encodeURIComponent(id)}`, { who, body });
}

async function fixture(d: KindDescriptor, workspace = ws): Promise<string> {
  return ok(await createAs(d, "admin", freshId(d), bodyOf(d), workspace))[d.resourceLocal].name;
}

// ---- every call, every kind ---------------------------------------------------------------------

describe.each(ALL_KINDS.map((d) => [d.kind, d] as const))("%s over REST", (kind, d) => {
  const rf = d.resourceField;

  it("creates, gets, lists, updates and deletes, answering in the JSON mapping", async () => {
    const id = freshId(d);
    const created = ok(
      await createAs(d, "admin", id, { ...bodyOf(d), createTime: "2001-01-01T00:00:00Z", creator: "users/mallory" }),
    )[d.resourceLocal];
    const name = `workspaces/${ws}/${kind}/${id}`;
    expect(created.name).toBe(name);
    expect(created.creator).toBe("users/root");
    expect(created.createTime).not.toBe("2001-01-01T00:00:00Z");
    expect(created.createTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(ok(await rest("GET", `/v1/${name}`, { who: "stranger" }))[d.resourceLocal]).toEqual(created);
    // Every profile is for administrators to list; the rest anyone reads.
    const list = ok(
      await rest("GET", `${collection(d)}?filter=${encodeURIComponent(`name = "${name}"`)}`, {
        who: d.family === "profile" ? "admin" : "viewer",
      }),
    );
    expect(list[d.pluralLocal]).toEqual([created]);
    expect(list.nextPageToken).toBe("");
    const path = d.updatable[0]!;
    const updated = ok(
      await rest("PATCH", `/v1/${name}?updateMask=${path}`, { body: { ...bodyOf(d), name: "ignored/by/the/path" } }),
    )[d.resourceLocal];
    expect(updated.name).toBe(name);
    // Never updated before: no update time and no updater until now.
    expect(created.updateTime ?? null).toBeNull();
    expect(created.updater).toBe("");
    expect(updated.updateTime >= created.createTime).toBe(true);
    expect(updated.updater).toBe("users/root");
    expect(ok(await rest("DELETE", `/v1/${name}`))).toEqual({});
    expectError(await rest("GET", `/v1/${name}`), "NOT_FOUND", name);
    expectError(await rest("DELETE", `/v1/${name}`), "NOT_FOUND", name);
  });

  it("answers ALREADY_EXISTS (409) for a taken id, naming the resource", async () => {
    const name = await fixture(d);
    expectError(await createAs(d, "admin", name.split("/").pop()!), "ALREADY_EXISTS", name);
  });

  it("rejects a malformed id (400) naming the id parameter", async () => {
    for (const id of d.family === "version"
      ? ["1.", "latest", "1.2.3+b", `1.2.${"9".repeat(60)}`]
      : ["Upper", "9lives", "a".repeat(64), "bad-"]) {
      expectError(await createAs(d, "admin", id), "INVALID_ARGUMENT", d.idField);
    }
    if (d.generatedIdWord) {
      const created = ok(await rest("POST", collection(d), { body: bodyOf(d) }))[d.resourceLocal];
      expect(created.name).toMatch(new RegExp(`^workspaces/${ws}/${kind}/[a-z][a-z0-9-]*[a-z0-9]$`));
    } else {
      expectError(await rest("POST", collection(d), { body: bodyOf(d) }), "INVALID_ARGUMENT", d.idField);
    }
  });

  it("rejects an invalid field (400) naming it, and creates nothing", async () => {
    const [body, field] = BAD_BODY[d.family]!;
    const id = freshId(d);
    expectError(await createAs(d, "admin", id, body), "INVALID_ARGUMENT", `${rf}.${field}`);
    expectError(await rest("GET", `/v1/workspaces/${ws}/${kind}/${id}`), "NOT_FOUND");
  });

  it("rejects a display name over 63 characters where there is one", async () => {
    if (!d.updatable.includes("display_name")) return;
    expectError(
      await createAs(d, "admin", freshId(d), { ...bodyOf(d), displayName: "x".repeat(64) }),
      "INVALID_ARGUMENT",
      `${rf}.display_name`,
    );
    ok(await createAs(d, "admin", freshId(d), { ...bodyOf(d), displayName: "x".repeat(63) }));
  });

  it("answers a malformed name with 400 naming it", async () => {
    expectError(await rest("GET", `/v1/workspaces/${ws}/${kind}/Not_An_Id`), "INVALID_ARGUMENT", "name");
  });

  describe("update masks", () => {
    let name: string;
    beforeAll(async () => {
      name = await fixture(d);
    });

    it("requires a mask (400 update_mask)", async () => {
      expectError(await rest("PATCH", `/v1/${name}`, { body: bodyOf(d) }), "INVALID_ARGUMENT", "update_mask");
    });

    it("takes exact, case-sensitive snake_case paths", async () => {
      const camel = d.updatable.find((p) => p.includes("_"))!.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
      expectError(
        await rest("PATCH", `/v1/${name}?updateMask=${camel}`, { body: bodyOf(d) }),
        "INVALID_ARGUMENT",
        "update_mask",
      );
      expectError(
        await rest("PATCH", `/v1/${name}?updateMask=${d.updatable[0]!.toUpperCase()}`, { body: bodyOf(d) }),
        "INVALID_ARGUMENT",
        "update_mask",
      );
      expectError(
        await rest("PATCH", `/v1/${name}?updateMask=no_such_field`, { body: bodyOf(d) }),
        "INVALID_ARGUMENT",
        "update_mask",
      );
      expectError(
        await rest("PATCH", `/v1/${name}?updateMask=create_time`, { body: bodyOf(d) }),
        "INVALID_ARGUMENT",
        "update_mask",
      );
      expectError(
        await rest("PATCH", `/v1/${name}?updateMask=*,${d.updatable[0]}`, { body: bodyOf(d) }),
        "INVALID_ARGUMENT",
        "update_mask",
      );
    });

    it("accepts each of its section 5 paths, several at once, and * for all", async () => {
      ok(await rest("PATCH", `/v1/${name}?updateMask=${d.updatable.join(",")}`, { body: bodyOf(d) }));
      const all = ok(await rest("PATCH", `/v1/${name}?updateMask=*`, { body: bodyOf(d) }))[d.resourceLocal];
      for (const [key, value] of Object.entries(bodyOf(d))) expect(all[key], key).toEqual(value);
    });

    it("rejects an invalid value (400 naming it) and leaves the resource alone", async () => {
      const before = ok(await rest("GET", `/v1/${name}`))[d.resourceLocal];
      const [body, field] = BAD_BODY[d.family]!;
      const path = field.split(".")[0]!;
      expectError(
        await rest("PATCH", `/v1/${name}?updateMask=${path}`, { body }),
        "INVALID_ARGUMENT",
        `${rf}.${field}`,
      );
      expect(ok(await rest("GET", `/v1/${name}`))[d.resourceLocal]).toEqual(before);
    });

    it("answers 404 for a missing resource", async () => {
      const missing = `workspaces/${ws}/${kind}/${d.family === "version" ? "8.8.8" : "missing"}`;
      expectError(
        await rest("PATCH", `/v1/${missing}?updateMask=${d.updatable[0]}`, { body: bodyOf(d) }),
        "NOT_FOUND",
        missing,
      );
    });
  });

  it("lists with filter, order_by and page tokens, and rejects bad list arguments naming them", async () => {
    const lws = `rest-list-${kind.toLowerCase().slice(0, 20)}`;
    const names: string[] = [];
    for (let i = 0; i < 5; i++) names.push(await fixture(d, lws));
    const { items } = await listAllPages(async (pageToken) => {
      const page = ok(
        await rest(
          "GET",
          `${collection(d, lws)}?pageSize=2&orderBy=name%20desc${pageToken ? `&pageToken=${pageToken}` : ""}`,
          { who: d.family === "profile" ? "admin" : "viewer" },
        ),
      );
      expect(page[d.pluralLocal].length).toBeLessThanOrEqual(2);
      return { items: page[d.pluralLocal] as { name: string }[], nextPageToken: page.nextPageToken ?? "" };
    });
    const seen = items.map((r) => r.name);
    expect(seen).toEqual([...names].sort().reverse());
    // Default order, as the real service lists: profiles (all of priority 1 here) by name;
    // versions newest version first (the fixtures' numbers grow); the rest newest first.
    const byNumber = (n: string) => Number(n.split(".").pop());
    const defaultOrder =
      d.family === "profile"
        ? [...names].sort()
        : d.family === "version"
          ? [...names].sort((a, b) => byNumber(b) - byNumber(a))
          : [...names].reverse();
    expect(ok(await rest("GET", collection(d, lws)))[d.pluralLocal].map((r: { name: string }) => r.name)).toEqual(
      defaultOrder,
    );
    const filtered = ok(
      await rest(
        "GET",
        `${collection(d, lws)}?filter=${encodeURIComponent(`name = "*${names[2]!.split("/").pop()}"`)}`,
      ),
    );
    expect(filtered[d.pluralLocal].map((r: { name: string }) => r.name)).toEqual([names[2]]);
    expectError(
      await rest("GET", `${collection(d, lws)}?filter=${encodeURIComponent("bogus = 1")}`),
      "INVALID_ARGUMENT",
      "filter",
    );
    expectError(await rest("GET", `${collection(d, lws)}?orderBy=bogus`), "INVALID_ARGUMENT", "order_by");
    expectError(await rest("GET", `${collection(d, lws)}?pageSize=-1`), "INVALID_ARGUMENT", "page_size");
    expectError(await rest("GET", `${collection(d, lws)}?pageToken=forged`), "INVALID_ARGUMENT", "page_token");
  });
});

// ---- permissions --------------------------------------------------------------------------------

interface RestCall {
  readonly name: string;
  readonly write: boolean;
  run(who: Who): Promise<Reply>;
}

function kindCalls(d: KindDescriptor): RestCall[] {
  const calls: RestCall[] = [
    { name: `POST ${d.kind}`, write: true, run: (who) => createAs(d, who) },
    { name: `GET ${d.kind}/{id}`, write: false, run: async (who) => rest("GET", `/v1/${await fixture(d)}`, { who }) },
    // Listing every profile is for administrators (members list the ones assigned to them).
    { name: `GET ${d.kind}`, write: d.family === "profile", run: (who) => rest("GET", collection(d), { who }) },
    {
      name: `PATCH ${d.kind}/{id}`,
      write: true,
      run: async (who) =>
        rest("PATCH", `/v1/${await fixture(d)}?updateMask=${d.updatable[0]}`, { who, body: bodyOf(d) }),
    },
    {
      name: `DELETE ${d.kind}/{id}`,
      write: true,
      run: async (who) => rest("DELETE", `/v1/${await fixture(d)}`, { who }),
    },
  ];
  if (d.family === "profile") {
    calls.push(
      {
        name: `POST ${d.kind}/{id}:copy`,
        write: true,
        run: async (who) =>
          rest("POST", `/v1/${await fixture(d)}:copy`, {
            who,
            body: { parent: `workspaces/${ws}`, [d.idLocal]: freshId(d) },
          }),
      },
      {
        name: `GET ${d.kind}:listAssigned`,
        write: false,
        run: (who) => rest("GET", `${collection(d)}:listAssigned`, { who }),
      },
    );
  }
  if (d.family === "version") {
    calls.push({
      name: `POST ${d.kind}/{id}:assignAliases`,
      write: true,
      run: async (who) =>
        rest("POST", `/v1/${await fixture(d)}:assignAliases`, { who, body: { aliases: [`a${++counter}`] } }),
    });
  }
  return calls;
}

const WHO: Who[] = ["admin", "member", "viewer", "stranger", "anonymous"];

describe("catalogue permissions over REST: reads for everyone signed in, writes for administrators", () => {
  const cases = ALL_KINDS.flatMap((d) => kindCalls(d)).flatMap((call) =>
    WHO.map((who) => ({ call, who, label: `${call.name} as ${who}` })),
  );
  it.each(cases)("$label", async ({ call, who }) => {
    const r = await call.run(who);
    if (who === "anonymous") expectError(r, "UNAUTHENTICATED");
    else if (!call.write || who === "admin") ok(r);
    else {
      expectError(r, "PERMISSION_DENIED", `on workspaces/${ws}`);
      expect(r.body.message).toMatch(/lacks actions\/enginemanager\/[A-Za-z0-9]+\/[A-Z_]+/);
    }
  });
});

// ---- profiles -----------------------------------------------------------------------------------

const PROFILES = [
  KIND_DESCRIPTORS.daiEngineProfiles,
  KIND_DESCRIPTORS.h2oEngineProfiles,
  KIND_DESCRIPTORS.notebookEngineProfiles,
] as unknown as KindDescriptor[];

describe.each(PROFILES.map((d) => [d.kind, d] as const))("%s over REST", (kind, d) => {
  const rf = d.resourceField;

  it("checks numeric and duration constraints for consistency (min <= default <= max)", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ cpuConstraint: { min: "2", max: "8", default: "1" } }, "cpu_constraint.default"],
      [{ cpuConstraint: { min: "2", max: "8", default: "9" } }, "cpu_constraint.default"],
      [{ gpuConstraint: { min: "3", max: "1", default: "3" } }, "gpu_constraint.max"],
      [
        { memoryBytesConstraint: { min: "1073741824", default: "4294967296", cumulativeMax: "1073741824" } },
        "memory_bytes_constraint.cumulative_max",
      ],
      [{ maxIdleDurationConstraint: { min: "60s", max: "30s", default: "60s" } }, "max_idle_duration_constraint.max"],
      [{ maxIdleDurationConstraint: { min: "60s", default: "59s" } }, "max_idle_duration_constraint.default"],
      [
        { maxRunningDurationConstraint: { min: "0s", max: "3600s", default: "3601s" } },
        "max_running_duration_constraint.default",
      ],
      [{ maxRunningDurationConstraint: { default: "3600s" } }, "max_running_duration_constraint.min"],
    ];
    for (const [body, field] of cases)
      expectError(await createAs(d, "admin", freshId(d), body), "INVALID_ARGUMENT", `${rf}.${field}`);
    const fine = ok(
      await createAs(d, "admin", freshId(d), {
        cpuConstraint: { min: "1", max: "8", default: "2", cumulativeMax: "16" },
        maxIdleDurationConstraint: { min: "0s", default: "3600s" },
      }),
    )[d.resourceLocal];
    // An unset max means no upper limit: a Duration one is written as null, a number left out.
    expect(fine.cpuConstraint).toEqual({ min: "1", max: "8", default: "2", cumulativeMax: "16" });
    expect(fine.maxIdleDurationConstraint).toEqual({ min: "0s", max: null, default: "3600s" });
    expect(fine.gpuConstraint).toEqual({ min: "0", default: "0" });
  });

  it(":copy needs a parent and a new id, and copies into another workspace", async () => {
    const source = await fixture(d);
    const copy = ok(
      await rest("POST", `/v1/${source}:copy`, { body: { parent: "workspaces/team-b", [d.idLocal]: "copied" } }),
    )[d.resourceLocal];
    expect(copy.name).toBe(`workspaces/team-b/${kind}/copied`);
    expectError(
      await rest("POST", `/v1/${source}:copy`, { body: { parent: "workspaces/team-b", [d.idLocal]: "copied" } }),
      "ALREADY_EXISTS",
      copy.name,
    );
    expectError(
      await rest("POST", `/v1/${source}:copy`, { body: { parent: "workspaces/team-b" } }),
      "INVALID_ARGUMENT",
      d.idField,
    );
    expectError(
      await rest("POST", `/v1/${source}:copy`, { body: { [d.idLocal]: "other" } }),
      "INVALID_ARGUMENT",
      "parent",
    );
    const missing = `workspaces/${ws}/${kind}/no-source`;
    expectError(
      await rest("POST", `/v1/${missing}:copy`, { body: { parent: `workspaces/${ws}`, [d.idLocal]: "other" } }),
      "NOT_FOUND",
      missing,
    );
  });

  it(":listAssigned lists the enabled profiles the caller may use, lower priority value first, then by name", async () => {
    const aws = `rest-assigned-${kind.slice(0, 3)}`;
    const make = (id: string, body: Record<string, unknown>) => createAs(d, "admin", id, body, aws).then(ok);
    await make("second", { enabled: true, priority: 2 });
    await make("first-b", { enabled: true, priority: 1 });
    await make("first-a", { enabled: true, priority: 1 });
    await make("off", { enabled: false, priority: 0 });
    await make("nobody", { enabled: true, priority: 0, assignedOidcRolesEnabled: true, assignedOidcRoles: [] });
    await make("ml-only", { enabled: true, priority: 3, assignedOidcRolesEnabled: true, assignedOidcRoles: ["ml"] });
    const names = (r: Reply) => ok(r)[d.pluralLocal].map((p: { name: string }) => p.name.split("/").pop());
    expect(names(await rest("GET", `/v1/workspaces/${aws}/${kind}:listAssigned`, { user: "bob" }))).toEqual([
      "first-a",
      "first-b",
      "second",
    ]);
    expect(
      names(await rest("GET", `/v1/workspaces/${aws}/${kind}:listAssigned`, { user: "bob", roles: ["ml"] })),
    ).toEqual(["first-a", "first-b", "second", "ml-only"]);
    const page = ok(await rest("GET", `/v1/workspaces/${aws}/${kind}:listAssigned?pageSize=1`, { user: "bob" }));
    expect(page[d.pluralLocal]).toHaveLength(1);
    const next = ok(
      await rest("GET", `/v1/workspaces/${aws}/${kind}:listAssigned?pageSize=1&pageToken=${page.nextPageToken}`, {
        user: "bob",
      }),
    );
    expect(next[d.pluralLocal][0].name.split("/").pop()).toBe("first-b");
    expectError(
      await rest("GET", `/v1/workspaces/${aws}/${kind}:listAssigned?pageSize=-5`),
      "INVALID_ARGUMENT",
      "page_size",
    );
  });
});

describe("profile specifics over REST", () => {
  it("uses enabled on H2O profiles; disabled is not a path", async () => {
    const d = KIND_DESCRIPTORS.h2oEngineProfiles as unknown as KindDescriptor;
    const name = await fixture(d);
    expect(
      ok(await rest("PATCH", `/v1/${name}?updateMask=enabled`, { body: { enabled: false } })).h2oEngineProfile.enabled,
    ).toBe(false);
    expectError(
      await rest("PATCH", `/v1/${name}?updateMask=disabled`, { body: {} }),
      "INVALID_ARGUMENT",
      "update_mask",
    );
  });

  it("defaults notebook git sync to ref HEAD and directory Example, and keeps them immutable", async () => {
    const d = KIND_DESCRIPTORS.notebookEngineProfiles as unknown as KindDescriptor;
    const created = ok(
      await createAs(d, "admin", "git-sync", {
        syncGitRepositoryEnabled: true,
        gitRepository: "https://github.com/acme/x.git",
      }),
    ).notebookEngineProfile;
    expect(created).toMatchObject({ gitRef: "HEAD", gitDirectoryName: "Example", syncGitRepositoryEnabled: true });
    expectError(
      await rest("PATCH", `/v1/${created.name}?updateMask=git_ref`, { body: { gitRef: "main" } }),
      "INVALID_ARGUMENT",
      "update_mask",
    );
    expectError(
      await createAs(d, "admin", "git-no-repo", { syncGitRepositoryEnabled: true }),
      "INVALID_ARGUMENT",
      "notebook_engine_profile.git_repository",
    );
  });
});

// ---- versions -----------------------------------------------------------------------------------

describe.each(
  [KIND_DESCRIPTORS.daiEngineVersions, KIND_DESCRIPTORS.h2oEngineVersions].map(
    (d) => [d.kind, d as unknown as KindDescriptor] as const,
  ),
)("%s aliases over REST", (kind, d) => {
  const aws = `rest-aliases-${kind.slice(0, 3)}`;

  it("accepts semver ids with more than three segments, up to 63 characters", async () => {
    for (const id of ["1.2.3.4", "1.2.3-beta.1", `1.2.${"3".repeat(59)}`]) {
      expect(ok(await createAs(d, "admin", id, bodyOf(d), aws))[d.resourceLocal].name).toBe(
        `workspaces/${aws}/${kind}/${id}`,
      );
    }
  });

  it("replaces aliases, moves a taken one within the workspace only, and lets an alias stand in for the id", async () => {
    await createAs(d, "admin", "2.0.0", bodyOf(d), aws).then(ok);
    await createAs(d, "admin", "3.0.0", bodyOf(d), aws).then(ok);
    await createAs(d, "admin", "2.0.0", bodyOf(d), `${aws}-other`).then(ok);
    const aliasesOf = (r: Reply) =>
      Object.fromEntries(ok(r)[d.pluralLocal].map((v: RestJson) => [v.name.split("/").pop(), v.aliases]));
    expect(
      aliasesOf(
        await rest("POST", `/v1/workspaces/${aws}/${kind}/2.0.0:assignAliases`, {
          body: { aliases: ["latest", "lts"] },
        }),
      ),
    ).toMatchObject({
      "2.0.0": ["latest", "lts"],
      "3.0.0": [],
    });
    ok(
      await rest("POST", `/v1/workspaces/${aws}-other/${kind}/2.0.0:assignAliases`, { body: { aliases: ["latest"] } }),
    );
    expect(
      aliasesOf(
        await rest("POST", `/v1/workspaces/${aws}/${kind}/3.0.0:assignAliases`, { body: { aliases: ["latest"] } }),
      ),
    ).toMatchObject({
      "2.0.0": ["lts"],
      "3.0.0": ["latest"],
    });
    expect(
      ok(await rest("GET", `/v1/workspaces/${aws}/${kind}/latest`, { who: "stranger" }))[d.resourceLocal].name,
    ).toBe(`workspaces/${aws}/${kind}/3.0.0`);
    expect(ok(await rest("GET", `/v1/workspaces/${aws}-other/${kind}/latest`))[d.resourceLocal].name).toBe(
      `workspaces/${aws}-other/${kind}/2.0.0`,
    );
    const patched = ok(
      await rest("PATCH", `/v1/workspaces/${aws}/${kind}/lts?updateMask=deprecated`, { body: { deprecated: true } }),
    )[d.resourceLocal];
    expect(patched).toMatchObject({ name: `workspaces/${aws}/${kind}/2.0.0`, deprecated: true });
    expectError(
      await rest("GET", `/v1/workspaces/${aws}/${kind}/nightly`),
      "NOT_FOUND",
      `workspaces/${aws}/${kind}/nightly`,
    );
  });

  it("rejects bad aliases naming them", async () => {
    const name = await fixture(d, aws);
    for (const [aliases, field] of [
      [["Latest"], "aliases[0]"],
      [["ok", "1.0.0"], "aliases[1]"],
      [["a".repeat(64)], "aliases[0]"],
      [[""], "aliases[0]"],
      [["trailing-"], "aliases[0]"],
    ] as const) {
      expectError(await rest("POST", `/v1/${name}:assignAliases`, { body: { aliases } }), "INVALID_ARGUMENT", field);
    }
    ok(await rest("POST", `/v1/${name}:assignAliases`, { body: { aliases: [`a${"b".repeat(61)}c`] } }));
  });

  // The official Python client's create body carries aliases (its version configs declare them).
  it("takes aliases sent on create and refuses them in an update mask", async () => {
    const created = ok(await createAs(d, "admin", freshId(d), { ...bodyOf(d), aliases: ["from-create"] }, aws))[
      d.resourceLocal
    ];
    expect(created.aliases).toEqual(["from-create"]);
    expect(ok(await rest("GET", `/v1/workspaces/${aws}/${kind}/from-create`))[d.resourceLocal].name).toBe(created.name);
    expectError(
      await rest("PATCH", `/v1/${created.name}?updateMask=aliases`, { body: { aliases: ["x"] } }),
      "INVALID_ARGUMENT",
      "update_mask",
    );
  });
});

// ---- templates ----------------------------------------------------------------------------------

describe("sandbox templates over REST", () => {
  const d = KIND_DESCRIPTORS.sandboxEngineTemplates as unknown as KindDescriptor;

  it("requires memory_bytes_limit and max_idle_duration", async () => {
    expectError(
      await createAs(d, "admin", freshId(d), { maxIdleDuration: "60s" }),
      "INVALID_ARGUMENT",
      "sandbox_engine_template.memory_bytes_limit",
    );
    expectError(
      await createAs(d, "admin", freshId(d), { memoryBytesLimit: "1024" }),
      "INVALID_ARGUMENT",
      "sandbox_engine_template.max_idle_duration",
    );
  });

  it("takes max_running_duration as the official client sends it, and defaults it to 28800s", async () => {
    const sent = ok(
      await createAs(d, "admin", freshId(d), {
        memoryBytesLimit: "1073741824",
        maxIdleDuration: "3600s",
        maxRunningDuration: "7200s",
      }),
    ).sandboxEngineTemplate;
    expect(sent).toMatchObject({ maxIdleDuration: "3600s", maxRunningDuration: "7200s" });
    const unset = ok(
      await createAs(d, "admin", freshId(d), {
        memoryBytesLimit: "1073741824",
        maxIdleDuration: "0s",
        maxRunningDuration: null,
      }),
    ).sandboxEngineTemplate;
    expect(unset).toMatchObject({ maxIdleDuration: "0s", maxRunningDuration: "28800s" });
    expectError(
      await createAs(d, "admin", freshId(d), {
        memoryBytesLimit: "1024",
        maxIdleDuration: "60s",
        maxRunningDuration: "-1s",
      }),
      "INVALID_ARGUMENT",
      "sandbox_engine_template.max_running_duration",
    );
  });

  it("defaults requests to their limits (1000 millicpu is one core)", async () => {
    const created = ok(
      await createAs(d, "admin", freshId(d), {
        milliCpuLimit: 1000,
        memoryBytesLimit: "2147483648",
        maxIdleDuration: "3600s",
      }),
    ).sandboxEngineTemplate;
    expect(created).toMatchObject({
      milliCpuRequest: 1000,
      milliCpuLimit: 1000,
      memoryBytesRequest: "2147483648",
      memoryBytesLimit: "2147483648",
    });
    expectError(
      await createAs(d, "admin", freshId(d), {
        milliCpuRequest: 1500,
        milliCpuLimit: 1000,
        memoryBytesLimit: "1024",
        maxIdleDuration: "60s",
      }),
      "INVALID_ARGUMENT",
      "sandbox_engine_template.milli_cpu_request",
    );
  });
});

// ---- section 9 ----------------------------------------------------------------------------------

describe("page sizes (spec section 9)", () => {
  const d = KIND_DESCRIPTORS.sandboxEngineImages as unknown as KindDescriptor;
  const pws = "rest-paging";

  beforeAll(async () => {
    // 1001 images straight into the catalogue's table: quicker than 1001 POSTs, same rows.
    const database = catalogue().database!;
    const now = new Date();
    await database.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 1001; i++) {
        const id = `img-${String(i).padStart(4, "0")}`;
        const image = create(SandboxEngineImageSchema, {
          name: `workspaces/${pws}/sandboxEngineImages/${id}`,
          image: "x:1",
        });
        stampCreate(image, { name: "users/root", displayName: "root" }, now);
        image.createTime = timestampFromDate(new Date(now.getTime() + i));
        await insertResource(trx, d, pws, id, image);
      }
    });
  });

  it("uses 50 when pageSize is unset or 0, and at most 1000", async () => {
    for (const q of ["", "?pageSize=0"]) {
      const page = ok(await rest("GET", `${collection(d, pws)}${q}`));
      expect(page.sandboxEngineImages).toHaveLength(50);
      expect(page.nextPageToken).not.toBe("");
      // Default order: create_time desc.
      expect(page.sandboxEngineImages[0].name).toBe(`workspaces/${pws}/sandboxEngineImages/img-1000`);
    }
    const big = ok(await rest("GET", `${collection(d, pws)}?pageSize=5000`));
    expect(big.sandboxEngineImages).toHaveLength(1000);
    const rest1 = ok(await rest("GET", `${collection(d, pws)}?pageSize=5000&pageToken=${big.nextPageToken}`));
    expect(rest1.sandboxEngineImages.map((r: { name: string }) => r.name)).toEqual([
      `workspaces/${pws}/sandboxEngineImages/img-0000`,
    ]);
    expect(rest1.nextPageToken).toBe("");
  });
});

// ---- secrets ------------------------------------------------------------------------------------

describe("secrets over REST", () => {
  const VALUE = Buffer.from("p@ssw0rd-never-returned").toString("base64");
  let n = 0;
  const secretFixture = async () => {
    const id = `sec-${++n}`;
    // The member's own secret: the permission table is about workspace roles, not owners.
    const who = "member";
    ok(await rest("POST", `/v1/workspaces/${ws}/secrets?secretId=${id}`, { who, body: { displayName: "S" } }));
    ok(await rest("POST", `/v1/workspaces/${ws}/secrets/${id}/versions`, { who, body: { value: VALUE } }));
    return `workspaces/${ws}/secrets/${id}`;
  };

  it("creates, gets, lists and deletes secrets, and adds, gets and lists versions without values", async () => {
    const secret = ok(
      await rest("POST", `/v1/workspaces/${ws}/secrets?secretId=db`, {
        who: "member",
        body: { displayName: "DB", annotations: { team: "a" } },
      }),
    ).secret;
    expect(secret).toMatchObject({
      name: `workspaces/${ws}/secrets/db`,
      displayName: "DB",
      annotations: { team: "a" },
      creator: "users/alice",
    });
    expect(ok(await rest("GET", `/v1/${secret.name}`, { who: "viewer" })).secret).toEqual(secret);
    const v1 = ok(
      await rest("POST", `/v1/${secret.name}/versions`, {
        who: "member",
        body: { secretVersion: undefined, value: VALUE },
      }),
    );
    expect(v1.secretVersion.name).toBe(`${secret.name}/versions/1`);
    expect(v1.secretVersion.value).toBe("");
    const v2 = ok(await rest("POST", `/v1/${secret.name}/versions`, { who: "member", body: { value: VALUE } }));
    const latest = ok(await rest("GET", `/v1/${secret.name}/versions/latest`, { who: "viewer" }));
    expect(latest.secretVersion.name).toBe(v2.secretVersion.name);
    const versions = ok(await rest("GET", `/v1/${secret.name}/versions`, { who: "member" }));
    expect(versions.secretVersions.map((v: { name: string }) => v.name)).toEqual([
      `${secret.name}/versions/2`,
      `${secret.name}/versions/1`,
    ]);
    const list = ok(
      await rest("GET", `/v1/workspaces/${ws}/secrets?filter=${encodeURIComponent('display_name = "DB"')}`, {
        who: "member",
      }),
    );
    expect(list.secrets.map((s: { name: string }) => s.name)).toEqual([secret.name]);
    for (const r of [v1, v2, latest, versions]) expect(JSON.stringify(r)).not.toContain(VALUE);
    ok(await rest("DELETE", `/v1/${secret.name}`, { who: "member" }));
    expectError(await rest("GET", `/v1/${secret.name}/versions/latest`), "NOT_FOUND", `${secret.name}/versions/latest`);
    const resolved = catalogue().resolveSecretValue;
    expect(typeof resolved).toBe("function");
  });

  it("answers the rules with their status, code and field", async () => {
    expectError(
      await rest("POST", `/v1/workspaces/${ws}/secrets?secretId=Bad_Id`, { body: {} }),
      "INVALID_ARGUMENT",
      "secret_id",
    );
    expectError(await rest("POST", `/v1/workspaces/${ws}/secrets`, { body: {} }), "INVALID_ARGUMENT", "secret_id");
    expectError(
      await rest("POST", `/v1/workspaces/${ws}/secrets?secretId=ann`, { body: { annotations: { ".bad": "x" } } }),
      "INVALID_ARGUMENT",
      'secret.annotations[".bad"]',
    );
    expectError(
      await rest("POST", `/v1/workspaces/${ws}/secrets?secretId=ann`, {
        body: { annotations: { [`k${"x".repeat(63)}`]: "x" } },
      }),
      "INVALID_ARGUMENT",
      `secret.annotations["k${"x".repeat(63)}"]`,
    );
    expectError(
      await rest("POST", `/v1/workspaces/${ws}/secrets?secretId=long`, { body: { displayName: "d".repeat(64) } }),
      "INVALID_ARGUMENT",
      "secret.display_name",
    );
    const name = await secretFixture();
    expectError(
      await rest("POST", `/v1/workspaces/${ws}/secrets?secretId=${name.split("/").pop()}`, { body: {} }),
      "ALREADY_EXISTS",
      name,
    );
    expectError(await rest("POST", `/v1/${name}/versions`, { body: {} }), "INVALID_ARGUMENT", "secret_version.value");
    expectError(
      await rest("POST", `/v1/${name}/versions`, { body: { value: Buffer.alloc(65537).toString("base64") } }),
      "INVALID_ARGUMENT",
      "secret_version.value",
    );
    ok(await rest("POST", `/v1/${name}/versions`, { body: { value: Buffer.alloc(65536, 1).toString("base64") } }));
    expectError(await rest("GET", `/v1/${name}/versions/0`), "INVALID_ARGUMENT", "name");
    expectError(await rest("GET", `/v1/${name}/versions/42`), "NOT_FOUND", `${name}/versions/42`);
    expectError(
      await rest("POST", `/v1/workspaces/${ws}/secrets/none/versions`, { body: { value: VALUE } }),
      "NOT_FOUND",
      `workspaces/${ws}/secrets/none`,
    );
  });

  const calls: Array<RestCall & { viewer: boolean }> = [
    {
      name: "POST secrets",
      write: true,
      viewer: false,
      run: (who) => rest("POST", `/v1/workspaces/${ws}/secrets?secretId=p${++n}`, { who, body: {} }),
    },
    {
      name: "GET secrets/{id}",
      write: false,
      viewer: true,
      run: async (who) => rest("GET", `/v1/${await secretFixture()}`, { who }),
    },
    {
      name: "GET secrets",
      write: false,
      viewer: true,
      run: (who) => rest("GET", `/v1/workspaces/${ws}/secrets`, { who }),
    },
    {
      name: "DELETE secrets/{id}",
      write: true,
      viewer: false,
      run: async (who) => rest("DELETE", `/v1/${await secretFixture()}`, { who }),
    },
    {
      name: "POST secrets/{id}/versions",
      write: true,
      viewer: false,
      run: async (who) => rest("POST", `/v1/${await secretFixture()}/versions`, { who, body: { value: VALUE } }),
    },
    {
      name: "GET secrets/{id}/versions/{v}",
      write: false,
      viewer: true,
      run: async (who) => rest("GET", `/v1/${await secretFixture()}/versions/latest`, { who }),
    },
    {
      name: "GET secrets/{id}/versions",
      write: false,
      viewer: true,
      run: async (who) => rest("GET", `/v1/${await secretFixture()}/versions`, { who }),
    },
  ];
  const cases = calls.flatMap((call) => WHO.map((who) => ({ call, who, label: `${call.name} as ${who}` })));

  it.each(cases)("permission: $label", async ({ call, who }) => {
    const r = await call.run(who);
    if (who === "anonymous") expectError(r, "UNAUTHENTICATED");
    else if (who === "admin" || who === "member" || (who === "viewer" && call.viewer)) ok(r);
    else expectError(r, "PERMISSION_DENIED", `on workspaces/${ws}`);
  });
});

describe("the demo catalogue over REST", () => {
  it("lets a newcomer find everything an engine needs", async () => {
    const u = { user: "newcomer" };
    expect(ok(await rest("GET", "/v1/workspaces/global/daiEngineVersions/latest", u)).daiEngineVersion.name).toBe(
      "workspaces/global/daiEngineVersions/1.11.0",
    );
    expect(ok(await rest("GET", "/v1/workspaces/global/h2oEngineVersions/latest", u)).h2oEngineVersion.name).toBe(
      "workspaces/global/h2oEngineVersions/3.46.0",
    );
    for (const kind of ["daiEngineProfiles", "h2oEngineProfiles", "notebookEngineProfiles"]) {
      expect(
        ok(await rest("GET", `/v1/workspaces/global/${kind}:listAssigned`, u))[kind].map(
          (p: { name: string }) => p.name,
        ),
      ).toEqual([`workspaces/global/${kind}/default`]);
    }
    for (const kind of ["notebookEngineImages", "sandboxEngineImages", "sandboxEngineTemplates"]) {
      expect(ok(await rest("GET", `/v1/workspaces/global/${kind}/default`, u))).toHaveProperty(kind.slice(0, -1));
    }
  });
});
