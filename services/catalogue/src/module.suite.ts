// The module's contract with its host: configuration, lifecycle, the services it serves, and the
// demo catalogue that is seeded once per database.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Code, createClient, createRouterTransport, type Interceptor } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePolicy } from "@aiem/kit/authz";
import { ConfigError, readCommonEnv } from "@aiem/kit/config";
import { createTestEventBus, type TestEventBus } from "@aiem/kit/events/testing";
import { createAuthenticator } from "@aiem/kit/identity";
import { silentLogger } from "@aiem/kit/logger";
import { principalKey } from "@aiem/kit/server";
import { create, toBinary } from "@bufbuild/protobuf";
import { sql } from "kysely";
import { migrateToLatest, type Database } from "@aiem/kit/db";
import { createTestDatabase } from "@aiem/kit/testing";
import { DAIEngineProfileService } from "@aiem/proto/enginemanager/v1/dai_engine_profile_service_pb.js";
import { DAIEngineVersionSchema } from "@aiem/proto/enginemanager/v1/dai_engine_version_pb.js";
import { readCatalogueEnv } from "./config.js";
import { ALL_KINDS, KIND_DESCRIPTORS } from "./kinds.js";
import { catalogueMigrations } from "./migrations.js";
import { CATALOGUE_SERVICES, createCatalogueModule } from "./module.js";
import { demoCatalogue } from "./seed.js";
import { fieldBehaviours, fieldsWith } from "./store.js";
import { FieldBehavior } from "@aiem/proto/google/api/field_behavior_pb.js";
import { createCatalogueHarness, expectCode, kindApi } from "./testing.js";

// Holds the in-memory PGlite open for the whole file, so tests that open and close their own
// schemas do not start a new instance each time.
let keepAlive: Database;
beforeAll(async () => {
  keepAlive = await createTestDatabase("cat_keepalive");
});
afterAll(async () => {
  await keepAlive?.destroy();
});

describe("readCatalogueEnv", () => {
  const key = Buffer.alloc(32, 7).toString("base64");

  it("reads the defaults on top of the common settings", () => {
    const cfg = readCatalogueEnv({ AIEM_DATA_DIR: "/tmp/x" });
    expect(cfg).toMatchObject({
      dataDir: "/tmp/x",
      pageTokenKey: undefined,
      secretsKey: undefined,
      seedDemo: true,
      port: 8080,
    });
  });

  it("reads keys and the seed switch", () => {
    const cfg = readCatalogueEnv({ AIEM_PAGE_TOKEN_KEY: key, AIEM_SECRETS_KEY: key, AIEM_SEED_DEMO: "false" });
    expect(cfg).toMatchObject({ pageTokenKey: key, secretsKey: key, seedDemo: false });
  });

  it.each([
    ["AIEM_SECRETS_KEY", "c2hvcnQ="],
    ["AIEM_PAGE_TOKEN_KEY", "not base64!"],
    ["AIEM_SECRETS_KEY", Buffer.alloc(33).toString("base64")],
    ["AIEM_SEED_DEMO", "maybe"],
    ["DATABASE_URL", "mysql://x/y"],
  ])("names %s when it is invalid", (variable, value) => {
    let error: unknown;
    try {
      readCatalogueEnv({ [variable]: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
  });
});

describe("the kinds' contract", () => {
  it.each(ALL_KINDS.map((d) => [d.kind, d] as const))(
    "%s: update paths are exactly its fields that are neither output-only, immutable nor the name",
    (_k, d) => {
      const behaviours = fieldBehaviours(d.schema);
      const settable = [...behaviours]
        .filter(
          ([, b]) =>
            !b.includes(FieldBehavior.OUTPUT_ONLY) &&
            !b.includes(FieldBehavior.IMMUTABLE) &&
            !b.includes(FieldBehavior.IDENTIFIER),
        )
        .map(([name]) => name)
        // A version's aliases are set on create and through :assignAliases, never by an update.
        .filter((name) => !(d.family === "version" && name === "aliases"));
      expect([...d.updatable].sort()).toEqual(settable.sort());
      expect(fieldsWith(d.schema, FieldBehavior.OUTPUT_ONLY)).toEqual(
        expect.arrayContaining([
          "create_time",
          "update_time",
          "creator",
          "updater",
          "creator_display_name",
          "updater_display_name",
        ]),
      );
    },
  );

  it("serves the eight catalogue services and the two secret services", () => {
    expect(CATALOGUE_SERVICES.map((s) => s.typeName)).toEqual([
      "enginemanager.v1.DAIEngineProfileService",
      "enginemanager.v1.H2OEngineProfileService",
      "enginemanager.v1.NotebookEngineProfileService",
      "enginemanager.v1.DAIEngineVersionService",
      "enginemanager.v1.H2OEngineVersionService",
      "enginemanager.v1.NotebookEngineImageService",
      "enginemanager.v1.SandboxEngineImageService",
      "enginemanager.v1.SandboxEngineTemplateService",
      "enginemanager.v1.SecretService",
      "enginemanager.v1.SecretVersionService",
    ]);
  });
});

describe("lifecycle", () => {
  let dataDir: string;
  let bus: TestEventBus;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "aiem-catalogue-module-"));
    bus = await createTestEventBus("cat_module");
  });
  afterAll(async () => {
    await bus?.destroy();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("answers UNAVAILABLE before start, is ready after, and keeps its keys in the data directory", async () => {
    const database = await createTestDatabase("cat_lifecycle");
    const module = createCatalogueModule({
      config: readCommonEnv({ AIEM_DATA_DIR: dataDir }),
      bus,
      policy: parsePolicy("admins: [users/root]", "p.yaml"),
      authenticator: createAuthenticator({ dataDir }),
      logger: silentLogger,
      openDatabase: async () => database,
      catalogueConfig: { pageTokenKey: undefined, secretsKey: undefined, seedDemo: false },
    });
    expect(module.name).toBe("catalogue");
    expect(module.isReady()).toBe(false);
    const name = "workspaces/global/daiEngineProfiles/x";
    // Without the host's interceptor there is no principal.
    const bare = createClient(
      DAIEngineProfileService,
      createRouterTransport((r) => module.register(r)),
    );
    await expectCode(bare.getDAIEngineProfile({ name }), Code.Unauthenticated);
    const root = { name: "users/root", subject: "root", displayName: "Root", roles: [], admin: true };
    const asRoot: Interceptor = (next) => (req) => {
      req.contextValues.set(principalKey, root);
      return next(req);
    };
    const client = createClient(
      DAIEngineProfileService,
      createRouterTransport((r) => module.register(r), { router: { interceptors: [asRoot] } }),
    );
    await expectCode(client.getDAIEngineProfile({ name }), Code.Unavailable);
    await module.start();
    await expectCode(client.getDAIEngineProfile({ name }), Code.NotFound, name);
    expect(module.isReady()).toBe(true);
    for (const name of ["page-token", "secrets"]) {
      expect(
        Buffer.from((await readFile(path.join(dataDir, "keys", `${name}.key`), "utf8")).trim(), "base64"),
      ).toHaveLength(32);
    }
    await module.stop();
    expect(module.isReady()).toBe(false);
    await expectCode(client.getDAIEngineProfile({ name }), Code.Unavailable);
  });

  it("fails to start with a clear error when the database cannot be migrated", async () => {
    const database = await createTestDatabase("cat_broken");
    await database.destroy();
    const module = createCatalogueModule({
      config: readCommonEnv({ AIEM_DATA_DIR: dataDir }),
      bus,
      policy: parsePolicy("", "p.yaml"),
      logger: silentLogger,
      authenticator: createAuthenticator({ dataDir }),
      openDatabase: async () => database,
      catalogueConfig: { pageTokenKey: undefined, secretsKey: undefined, seedDemo: false },
    });
    await expect(module.start()).rejects.toThrow();
    expect(module.isReady()).toBe(false);
  });
});

describe("migrations", () => {
  it("give versions written before the version order their sort key", async () => {
    const database = await createTestDatabase("cat_migrate");
    try {
      const { "0003_version_order": _later, ...before } = catalogueMigrations;
      await migrateToLatest(database, before);
      for (const id of ["1.9.0", "1.11.10", "1.11.4.1"]) {
        const name = `workspaces/old/daiEngineVersions/${id}`;
        const resource = create(DAIEngineVersionSchema, { name, image: `acme/dai:${id}`, createTime: { seconds: 1n } });
        await sql`insert into dai_engine_versions (workspace, id, name, deprecated, image, create_time, update_time, resource)
          values ('old', ${id}, ${name}, false, ${resource.image}, now(), now(), ${toBinary(DAIEngineVersionSchema, resource)})`.execute(
          database.db,
        );
      }
      const h = await createCatalogueHarness("migrated", { database, seedDemo: false });
      try {
        const { items } = await kindApi(h.as("member"), KIND_DESCRIPTORS.daiEngineVersions as never).list("old");
        expect(items.map((v) => v.name.split("/").pop())).toEqual(["1.11.10", "1.11.4.1", "1.9.0"]);
      } finally {
        await h.close();
      }
    } finally {
      await database.destroy();
    }
  });
});

describe("demo catalogue", () => {
  it("is created once per database; a deleted demo resource stays deleted", async () => {
    const database = await createTestDatabase("cat_seed");
    try {
      const first = await createCatalogueHarness("seed1", { database, seedDemo: true });
      const viewer = first.as("stranger");
      for (const { d, id, aliases } of demoCatalogue()) {
        const got = await kindApi(viewer, d).get(`workspaces/global/${d.kind}/${id}`);
        expect(got.creator).toBe("users/system");
        if (aliases) expect(got.aliases).toEqual(aliases);
      }
      // Every profile is for administrators to list; the rest anyone lists.
      for (const d of ALL_KINDS) {
        const reader = d.family === "profile" ? first.as("admin") : viewer;
        expect((await kindApi(reader, d).list("global")).items).toHaveLength(1);
      }
      expect((await kindApi(viewer, ALL_KINDS[3]!).get("workspaces/global/daiEngineVersions/latest")).name).toBe(
        "workspaces/global/daiEngineVersions/1.11.0",
      );
      expect((await kindApi(viewer, ALL_KINDS[4]!).get("workspaces/global/h2oEngineVersions/latest")).name).toBe(
        "workspaces/global/h2oEngineVersions/3.46.0",
      );
      // Usable right away: assigned to anyone, enabled.
      expect((await kindApi(viewer, ALL_KINDS[0]!).listAssigned("global")).items.map((p) => p.name)).toEqual([
        "workspaces/global/daiEngineProfiles/default",
      ]);
      await kindApi(first.as("admin"), ALL_KINDS[0]!).delete("workspaces/global/daiEngineProfiles/default");
      await first.close();

      const second = await createCatalogueHarness("seed2", { database, seedDemo: true });
      await expectCode(
        kindApi(second.as("admin"), ALL_KINDS[0]!).get("workspaces/global/daiEngineProfiles/default"),
        Code.NotFound,
      );
      expect((await kindApi(second.as("admin"), ALL_KINDS[1]!).list("global")).items).toHaveLength(1);
      await second.close();
    } finally {
      await database.destroy();
    }
  });

  it("is not created with AIEM_SEED_DEMO=false", async () => {
    const h = await createCatalogueHarness("noseed", { seedDemo: false });
    try {
      for (const d of ALL_KINDS) expect((await kindApi(h.as("admin"), d).list("global")).items).toEqual([]);
    } finally {
      await h.close();
    }
  });
});
