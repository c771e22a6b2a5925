// List paging benchmark (issue 3): 100,000 engine-like rows in real PostgreSQL.
//   npx tsx bench/kit-list.bench.ts
// Uses DATABASE_URL or postgres://postgres@127.0.0.1:5432/test, in a schema of its own that is
// dropped at the end. Prints medians for a filtered first page, the page after it by token,
// keyset vs OFFSET paging at row 90,000, and the cost of parsing and compiling a 10-term filter.
import { randomBytes } from "node:crypto";
import type { AnyDatabase } from "@aiem/kit/db";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import {
  createEngineTable,
  engineFields,
  engineTiebreaker,
  insertEngineRows,
  makeEngineRows,
} from "../services/kit/src/aip/engine-table.fixture.js";
import { filterToSql } from "../services/kit/src/aip/filter-sql.js";
import { createPageTokenCodec } from "../services/kit/src/aip/page-token.js";
import { type PaginateOptions, paginate } from "../services/kit/src/aip/paginate.js";

const ROWS = 100_000;
const DEPTH = 90_000;
const ITERATIONS = 200;
const url = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
const schema = `bench_kit_list_${randomBytes(4).toString("hex")}`;

function stats(samples: number[]): { median: number; p95: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)]!, p95: s[Math.floor(s.length * 0.95)]! };
}

async function time(label: string, fn: () => Promise<unknown>): Promise<{ median: number; p95: number }> {
  for (let i = 0; i < 20; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  const r = stats(samples);
  console.log(`${label.padEnd(52)} median ${r.median.toFixed(3)} ms   p95 ${r.p95.toFixed(3)} ms`);
  return r;
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 4 });
  const db = new Kysely<AnyDatabase>({ dialect: new PostgresDialect({ pool }) });
  try {
    const seed0 = performance.now();
    await createEngineTable(db);
    await insertEngineRows(db, makeEngineRows(ROWS, 42, ["bench"]));
    await sql`analyze engines`.execute(db);
    console.log(`seeded ${ROWS} rows in ${((performance.now() - seed0) / 1000).toFixed(1)} s (schema ${schema})`);

    const tokens = createPageTokenCodec({ key: randomBytes(32) });
    const base = () => db.selectFrom("engines").selectAll().where("workspace", "=", "bench");
    const options = (o: Partial<PaginateOptions>): PaginateOptions => ({
      parent: "workspaces/bench",
      scope: "daiEngines",
      table: engineFields,
      tiebreaker: engineTiebreaker,
      tokens,
      pageSize: 50,
      ...o,
    });
    const filter = "state = STATE_RUNNING AND cpu >= 2";

    const first = await paginate(base(), options({ filter }));
    if (first.rows.length !== 50 || !first.nextPageToken) throw new Error("expected a full first page");
    const page1 = await time(`filtered page 1 (${filter}, newest first)`, () => paginate(base(), options({ filter })));
    const page2 = await time("filtered page 2 by token", () =>
      paginate(base(), options({ filter, pageToken: first.nextPageToken })),
    );

    // A token for the row just before DEPTH in the default order, as paging there would leave it.
    const at = await sql<{ t: string; id: string }>`
      select to_char(create_time at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as t, id
      from engines where workspace = 'bench' order by create_time desc, id desc offset ${DEPTH - 1} limit 1`.execute(
      db,
    );
    const row = at.rows[0]!;
    const deepToken = tokens.encode([row.t, row.id], {
      scope: "daiEngines",
      parent: "workspaces/bench",
      filter: "",
      orderBy: "create_time desc, id desc",
    });
    const deep = await paginate(base(), options({ pageToken: deepToken }));
    const offsetRows = await base()
      .orderBy("create_time", "desc")
      .orderBy("id", "desc")
      .offset(DEPTH)
      .limit(50)
      .execute();
    if (deep.rows.map((r) => r.id).join() !== offsetRows.map((r) => r.id).join()) {
      throw new Error("keyset and OFFSET disagree at depth");
    }
    const keyset = await time(`keyset page at row ${DEPTH.toLocaleString("en")} (no filter)`, () =>
      paginate(base(), options({ pageToken: deepToken })),
    );
    const offset = await time(`OFFSET ${DEPTH} LIMIT 50 (no filter, baseline)`, () =>
      base().orderBy("create_time", "desc").orderBy("id", "desc").offset(DEPTH).limit(50).execute(),
    );

    const tenTerms =
      'state = STATE_RUNNING AND cpu >= 2 AND gpu < 3 AND memory_bytes > 1073741824 AND display_name = "engine*" ' +
      'AND create_time > "2024-01-01T00:00:00Z" AND delete_time:* AND reconciling = false ' +
      'AND max_idle_duration <= 3600s AND creator = "users/alice"';
    const n = 20_000;
    for (let i = 0; i < 2_000; i++) filterToSql(tenTerms, engineFields);
    let t0 = performance.now();
    for (let i = 0; i < n; i++) filterToSql(tenTerms, engineFields);
    const compileUs = ((performance.now() - t0) * 1000) / n;
    t0 = performance.now();
    for (let i = 0; i < n; i++)
      db.selectFrom("engines").selectAll().where(filterToSql(tenTerms, engineFields).where!).compile();
    const withSqlTextUs = ((performance.now() - t0) * 1000) / n;

    console.log("");
    console.log(
      `filtered page 1 median ${page1.median.toFixed(3)} ms, page 2 median ${page2.median.toFixed(3)} ms (target < 5 ms)`,
    );
    console.log(
      `at row ${DEPTH}: keyset ${keyset.median.toFixed(3)} ms vs OFFSET ${offset.median.toFixed(3)} ms: OFFSET is ${(offset.median / keyset.median).toFixed(1)}x slower`,
    );
    console.log(
      `10-term filter parse + compile: ${compileUs.toFixed(2)} us (target < 50 us); including kysely SQL text: ${withSqlTextUs.toFixed(2)} us`,
    );
  } finally {
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db).catch(() => {});
    await db.destroy();
  }
}

await main();
