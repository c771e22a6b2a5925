// Engine service benchmark (issue 6).
//   npx tsx bench/engine.bench.ts [--skip-lifecycle] [--skip-list]
//
// 1. Create to RUNNING for a DAI engine on the stand-in server, median of 20, through the REST
//    edge of the real host (PGlite, or PostgreSQL when DATABASE_URL is set), as a client sees it:
//    from sending the create until a GET shows STATE_RUNNING (polled every 5 ms).
// 2. 200 engines created at once: the time until all 200 run.
// 3. A DAI engine list filtered by state over 100,000 engines in real PostgreSQL (DATABASE_URL or
//    postgres://postgres@127.0.0.1:5432/test): the ListDAIEngines handler (page, totalSize and the
//    engines as protobuf) against the kit's raw page of bench/kit-list.bench.ts on its own fixture
//    table, with the same query shape (`state = STATE_RUNNING AND cpu >= 2`, 50 a page, newest
//    first), in the same run.
import { randomBytes } from "node:crypto";
import type { AnyDatabase } from "@aiem/kit/db";
import { parseArgs } from "node:util";
import { create, toBinary } from "@bufbuild/protobuf";
import { createContextValues, type HandlerContext } from "@connectrpc/connect";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { createPageTokenCodec, paginate, type PaginateOptions } from "../services/kit/src/aip/index.js";
import { embeddedPolicy } from "../services/kit/src/authz/index.js";
import { migrateToLatest, openDatabase } from "../services/kit/src/db/index.js";
import { createMemoryEventBus } from "../services/kit/src/events/index.js";
import { silentLogger } from "../services/kit/src/logger.js";
import { principalKey } from "../services/kit/src/server/index.js";
import {
  createEngineTable,
  engineFields,
  engineTiebreaker,
  insertEngineRows,
  makeEngineRows,
} from "../services/kit/src/aip/engine-table.fixture.js";
import { createCatalogueReadModel } from "../services/kit/src/catalogue-view/index.js";
import { DAIEngineSchema } from "@aiem/proto/enginemanager/v1/dai_engine_pb.js";
import { ListDAIEnginesRequestSchema } from "@aiem/proto/enginemanager/v1/dai_engine_service_pb.js";
import { createActivityTracker } from "../services/engine/src/activity.js";
import { engineSettings } from "../services/engine/src/config.js";
import { createServiceContext } from "../services/engine/src/context.js";
import { createDAIEngineHandlers } from "../services/engine/src/dai-engine-handlers.js";
import { DAI } from "../services/engine/src/kinds.js";
import { engineMigrations } from "../services/engine/src/migrations.js";
import { kindFieldTable, uidTiebreaker } from "../services/engine/src/store.js";
import { catalogueFixture, startEngineTestHost } from "../services/engine/src/testing/index.js";

const { values: args } = parseArgs({
  options: { "skip-lifecycle": { type: "boolean" }, "skip-list": { type: "boolean" } },
});
const PG_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";

function stats(samples: number[]): { median: number; p95: number; min: number; max: number } {
  const s = [...samples].sort((a, b) => a - b);
  return {
    median: s[Math.floor(s.length / 2)]!,
    p95: s[Math.floor(s.length * 0.95)]!,
    min: s[0]!,
    max: s[s.length - 1]!,
  };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function lifecycle(): Promise<void> {
  const stack = process.env.DATABASE_URL ? "PostgreSQL" : "PGlite";
  const h = await startEngineTestHost({ settings: engineSettings({ jupyterCommand: "none" }) });
  try {
    await catalogueFixture(h, "daiEngineProfiles", "bench", {
      enabled: true,
      cpuConstraint: { min: "1", default: "1" },
    });
    await catalogueFixture(h, "daiEngineVersions", "1.11.0", { image: "h2oai/dai:1.11.0" });
    const body = {
      profile: "workspaces/global/daiEngineProfiles/bench",
      daiEngineVersion: "workspaces/global/daiEngineVersions/1.11.0",
    };
    const token = await h.token("alice");
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const createOne = async (id: string) => {
      const res = await fetch(`${h.url}/v1/workspaces/team-a/daiEngines?daiEngineId=${id}`, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
      });
      if (res.status !== 200) throw new Error(`create ${id}: ${res.status} ${await res.text()}`);
    };
    const stateOf = async (id: string) =>
      (
        (await (await fetch(`${h.url}/v1/workspaces/team-a/daiEngines/${id}`, { headers })).json()) as {
          daiEngine: { state: string };
        }
      ).daiEngine.state;

    // 1. One at a time: create, then poll until it runs.
    const samples: number[] = [];
    for (let i = 0; i < 22; i++) {
      const id = `one-${i}`;
      const t0 = performance.now();
      await createOne(id);
      while ((await stateOf(id)) !== "STATE_RUNNING") await sleep(5);
      if (i >= 2) samples.push(performance.now() - t0); // the first two warm up the host
    }
    const one = stats(samples);
    console.log(
      `[${stack}] create to RUNNING, one DAI engine at a time (20 runs): median ${one.median.toFixed(0)} ms, p95 ${one.p95.toFixed(0)} ms, min ${one.min.toFixed(0)} ms, max ${one.max.toFixed(0)} ms`,
    );

    // 2. 200 at once.
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 200 }, (_, i) => createOne(`many-${i}`)));
    const created = performance.now() - t0;
    let running = 0;
    while (running < 200) {
      const res = await fetch(
        `${h.url}/v1/workspaces/team-a/daiEngines?pageSize=1&filter=${encodeURIComponent('state = STATE_RUNNING AND dai_engine_id = "many-*"')}`,
        { headers },
      );
      running = ((await res.json()) as { totalSize: number }).totalSize;
      if (performance.now() - t0 > 600_000) throw new Error(`only ${running} of 200 engines run after 10 minutes`);
      if (running < 200) await sleep(100);
    }
    const total = performance.now() - t0;
    console.log(
      `[${stack}] 200 DAI engines created at once: all 200 accepted in ${(created / 1000).toFixed(1)} s, all RUNNING after ${(total / 1000).toFixed(1)} s`,
    );
  } finally {
    await h.stop();
  }
}

async function listRatio(): Promise<void> {
  const ROWS = 100_000;
  const ITERATIONS = 200;
  const suffix = randomBytes(4).toString("hex");
  const kitSchema = `bench_engine_kit_${suffix}`;
  const filter = "state = STATE_RUNNING AND cpu >= 2";
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${kitSchema}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: PG_URL, options: `-c search_path=${kitSchema}`, max: 4 });
  const kitDb = new Kysely<AnyDatabase>({ dialect: new PostgresDialect({ pool }) });
  const database = await openDatabase(
    { kind: "pg", url: PG_URL },
    { schema: `bench_engine_${suffix}`, dropSchemaOnDestroy: true },
  );
  try {
    const rows = makeEngineRows(ROWS, 42, ["bench"]);
    const seed0 = performance.now();
    await createEngineTable(kitDb);
    await insertEngineRows(kitDb, rows);
    // Vacuumed as autovacuum would leave a table in steady state (visibility map set).
    await sql`vacuum analyze engines`.execute(kitDb);
    await migrateToLatest(database, engineMigrations);
    // The same rows as engines of the service: its columns, and a DAI engine as the stored resource.
    const resource = toBinary(
      DAIEngineSchema,
      create(DAIEngineSchema, { displayName: "bench", config: { a: "b" }, annotations: { team: "bench" } }),
    );
    for (let i = 0; i < rows.length; i += 1000) {
      await database.db
        .insertInto("engines")
        .values(
          rows.slice(i, i + 1000).map((r) => ({
            uid: `00000000-0000-4000-8000-${r.id.slice(1).padStart(12, "0")}`,
            type: "daiEngines",
            workspace: "bench",
            engine_id: r.id,
            name: r.name,
            display_name: r.display_name,
            creator: r.creator,
            creator_display_name: r.creator.slice(6),
            profile: "workspaces/global/daiEngineProfiles/default",
            version: "1.11.0",
            version_name: "workspaces/global/daiEngineVersions/1.11.0",
            state: r.state === "STATE_UNSPECIFIED" ? "STATE_STARTING" : r.state,
            desired: "RUNNING",
            reconciling: r.reconciling,
            cpu: r.cpu,
            gpu: r.gpu,
            memory_bytes: r.memory_bytes,
            storage_bytes: 17179869184n,
            max_idle_ms: r.max_idle_ms,
            max_running_ms: 28_800_000n,
            create_time: r.create_time,
            update_time: r.create_time,
            delete_time: r.delete_time,
            resource,
          })),
        )
        .execute();
    }
    await sql`vacuum analyze engines`.execute(database.db);
    console.log(`seeded ${ROWS} rows in each of two tables in ${((performance.now() - seed0) / 1000).toFixed(1)} s`);

    const tokens = createPageTokenCodec({ key: randomBytes(32) });
    const kitOptions: PaginateOptions = {
      parent: "workspaces/bench",
      scope: "daiEngines",
      table: engineFields,
      tiebreaker: engineTiebreaker,
      tokens,
      pageSize: 50,
      filter,
    };
    const kitPage = () =>
      paginate(kitDb.selectFrom("engines").selectAll().where("workspace", "=", "bench"), kitOptions);

    // The service's list handler, as the host calls it (an administrator sees every engine).
    const bus = createMemoryEventBus({ logger: silentLogger });
    const catalogue = createCatalogueReadModel({ bus });
    await catalogue.ready;
    const settings = engineSettings();
    const activity = createActivityTracker({ database: () => database, flushMs: 1000, logger: silentLogger });
    const context = createServiceContext({
      policy: embeddedPolicy(),
      logger: silentLogger,
      settings,
      activity,
      state: { database, tokens, catalogue },
      defaultPublicUrl: "http://127.0.0.1:8080",
    });
    const handlers = createDAIEngineHandlers(context);
    const ctx = {
      values: createContextValues().set(principalKey, {
        name: "users/root",
        subject: "root",
        displayName: "root",
        roles: [],
        admin: true,
      }),
    } as unknown as HandlerContext;
    const handlerPage = () =>
      handlers.listDAIEngines(
        create(ListDAIEnginesRequestSchema, { parent: "workspaces/bench", pageSize: 50, filter }),
        ctx,
      ) as Promise<{ daiEngines: unknown[]; totalSize: number }>;
    const servicePage = () =>
      paginate(
        database.db.selectFrom("engines").selectAll().where("workspace", "=", "bench").where("type", "=", "daiEngines"),
        {
          ...kitOptions,
          table: kindFieldTable(DAI),
          tiebreaker: uidTiebreaker,
        },
      );

    const first = await handlerPage();
    if (first.daiEngines.length !== 50) throw new Error("expected a full page");
    const time = async (label: string, fn: () => Promise<unknown>) => {
      for (let i = 0; i < 20; i++) await fn();
      const samples: number[] = [];
      for (let i = 0; i < ITERATIONS; i++) {
        const t0 = performance.now();
        await fn();
        samples.push(performance.now() - t0);
      }
      const r = stats(samples);
      console.log(`${label.padEnd(62)} median ${r.median.toFixed(3)} ms   p95 ${r.p95.toFixed(3)} ms`);
      return r;
    };
    // Interleaved rounds, so drift on a busy machine hits both sides alike.
    const kit: number[] = [];
    const page: number[] = [];
    const handler: number[] = [];
    for (let round = 0; round < 3; round++) {
      kit.push((await time(`kit raw page (${filter}), round ${round + 1}`, kitPage)).median);
      page.push((await time(`engine table, same page, no totalSize, round ${round + 1}`, servicePage)).median);
      handler.push(
        (await time(`ListDAIEngines handler (page + totalSize + protobuf), round ${round + 1}`, handlerPage)).median,
      );
    }
    const med = (xs: number[]) => stats(xs).median;
    console.log("");
    console.log(`totalSize of the filter: ${first.totalSize} of ${ROWS}`);
    console.log(
      `list filtered by state over ${ROWS} engines: handler ${med(handler).toFixed(3)} ms vs kit raw page ${med(kit).toFixed(3)} ms: ratio ${(med(handler) / med(kit)).toFixed(2)}`,
    );
    console.log(
      `  of which the page query on the engine table: ${med(page).toFixed(3)} ms (ratio ${(med(page) / med(kit)).toFixed(2)}); the rest is totalSize and decoding 50 engines`,
    );
    await catalogue.stop();
    await bus.close();
  } finally {
    await database.destroy();
    await sql`drop schema if exists ${sql.id(kitSchema)} cascade`.execute(kitDb).catch(() => {});
    await kitDb.destroy();
  }
}

if (!args["skip-lifecycle"]) await lifecycle();
if (!args["skip-list"]) await listRatio();
