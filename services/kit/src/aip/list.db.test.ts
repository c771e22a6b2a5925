// Filters, order_by and page tokens against a real database (PGlite, or PostgreSQL when
// DATABASE_URL is set), checked against plain JavaScript over the same rows.
import { randomBytes } from "node:crypto";
import type { AnyDatabase } from "../db/index.js";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAllPages } from "../testing/list-pages.js";
import { createTestDatabase } from "../testing/test-database.js";
import {
  type EngineRow,
  createEngineTable,
  engineFields,
  engineTiebreaker,
  insertEngineRows,
  makeEngineRows,
} from "./engine-table.fixture.js";
import { createPageTokenCodec } from "./page-token.js";
import { type PaginateOptions, paginate } from "./paginate.js";

type Db = Awaited<ReturnType<typeof createTestDatabase>>;

const tokens = createPageTokenCodec({ key: randomBytes(32) });
const rows = makeEngineRows(240, 7);
// Rows whose order depends on sub-millisecond digits: a page boundary here must not lose one.
rows.push(
  {
    ...rows[0]!,
    id: "m1",
    dai_engine_id: "m1",
    name: "workspaces/w1/daiEngines/m1",
    create_time: "2024-01-10T00:00:00.000100Z",
  },
  {
    ...rows[0]!,
    id: "m2",
    dai_engine_id: "m2",
    name: "workspaces/w1/daiEngines/m2",
    create_time: "2024-01-10T00:00:00.000900Z",
  },
  {
    ...rows[0]!,
    id: "m3",
    dai_engine_id: "m3",
    name: "workspaces/w1/daiEngines/m3",
    create_time: "2024-01-10T00:00:00.000500Z",
  },
);

type Pred = (r: EngineRow) => boolean;
// Create and delete times are fixed-width ISO strings in UTC, so they compare as text.
const startsWith = (s: string) => (r: EngineRow) => r.display_name.startsWith(s);

const FILTERS: Array<[string, Pred]> = [
  ["", () => true],
  ["state = STATE_RUNNING AND cpu >= 2", (r) => r.state === "STATE_RUNNING" && r.cpu >= 2],
  [
    "state = STATE_RUNNING OR state = STATE_PAUSED AND cpu < 3",
    (r) => (r.state === "STATE_RUNNING" || r.state === "STATE_PAUSED") && r.cpu < 3,
  ],
  [
    "state = (STATE_FAILED OR STATE_DELETING) gpu > 0",
    (r) => (r.state === "STATE_FAILED" || r.state === "STATE_DELETING") && r.gpu > 0,
  ],
  ["NOT reconciling = true", (r) => !r.reconciling],
  ["-reconciling = true AND -(cpu > 4)", (r) => !r.reconciling && !(r.cpu > 4)],
  ['display_name = "100%*"', startsWith("100%")],
  ['display_name = "*_b"', (r) => r.display_name.endsWith("_b")],
  ['display_name : "%"', (r) => r.display_name.includes("%")],
  ['display_name : "_"', (r) => r.display_name.includes("_")],
  [`display_name = "'; DROP TABLE engines; --"`, (r) => r.display_name === "'; DROP TABLE engines; --"],
  [`display_name = '" OR 1=1 --'`, (r) => r.display_name === '" OR 1=1 --'],
  ['display_name = "a\\\\b"', (r) => r.display_name === "a\\b"],
  ['display_name = "x\\*y"', (r) => r.display_name === "x*y"],
  ['display_name = "x\\**"', (r) => r.display_name.startsWith("x*")],
  ['display_name != "*a"', (r) => !r.display_name.endsWith("a")],
  ['display_name = "caf\u00e9"', (r) => r.display_name === "caf\u00e9"],
  ["display_name:*", (r) => r.display_name !== ""],
  ['display_name > "engine b"', (r) => r.display_name > "engine b"],
  ["delete_time:*", (r) => r.delete_time !== null],
  ["NOT delete_time:*", (r) => r.delete_time === null],
  [
    'delete_time > "2024-02-01T00:00:00Z"',
    (r) => r.delete_time !== null && r.delete_time > "2024-02-01T00:00:00.000000Z",
  ],
  [
    "NOT delete_time > 2024-02-01T00:00:00Z",
    (r) => !(r.delete_time !== null && r.delete_time > "2024-02-01T00:00:00.000000Z"),
  ],
  ['delete_time != "2024-02-01T00:00:00Z"', () => true],
  [
    'create_time >= 2024-01-15T00:00:00Z AND create_time < "2024-02-01T01:00:00.5+01:00"',
    (r) => r.create_time >= "2024-01-15T00:00:00.000000Z" && r.create_time < "2024-02-01T00:00:00.500000Z",
  ],
  ["create_time = 2024-01-10T00:00:00.0005Z", (r) => r.create_time === "2024-01-10T00:00:00.000500Z"],
  ["memory_bytes >= 8589934592", (r) => r.memory_bytes >= 8589934592n],
  ["memory_bytes < 9223372036854775807", () => true],
  ["max_idle_duration <= 3600s", (r) => r.max_idle_ms <= 3_600_000n],
  [
    "max_idle_duration = 600.5s OR max_idle_duration = 1800.5s",
    (r) => r.max_idle_ms === 600_500n || r.max_idle_ms === 1_800_500n,
  ],
  ['name = "workspaces/w1/*"', (r) => r.workspace === "w1"],
  ['creator = users/alice OR creator = "users/bob"', (r) => r.creator === "users/alice" || r.creator === "users/bob"],
  ["cpu = -1", () => false],
  ["gpu > 0 reconciling = false", (r) => r.gpu > 0 && !r.reconciling],
  [
    "reconciling != true AND (cpu = 1 OR cpu = 8 OR NOT state = STATE_RUNNING)",
    (r) => !r.reconciling && (r.cpu === 1 || r.cpu === 8 || r.state !== "STATE_RUNNING"),
  ],
  ["dai_engine_id = e0000*", (r) => r.dai_engine_id.startsWith("e0000")],
];

type Cmp = (a: EngineRow, b: EngineRow) => number;
const cmp = <T>(a: T, b: T): number => (a < b ? -1 : a > b ? 1 : 0);
// NULL sorts last ascending and first descending, as in PostgreSQL.
const nullLast = (a: string | null, b: string | null): number =>
  a === b ? 0 : a === null ? 1 : b === null ? -1 : cmp(a, b);
const desc =
  (c: Cmp): Cmp =>
  (a, b) =>
    -c(a, b);
const byId: Cmp = (a, b) => cmp(a.id, b.id);
const chain =
  (...cs: Cmp[]): Cmp =>
  (a, b) => {
    for (const c of cs) {
      const d = c(a, b);
      if (d) return d;
    }
    return 0;
  };

const ORDERS: Array<[string, Cmp]> = [
  [
    "",
    chain(
      desc((a, b) => cmp(a.create_time, b.create_time)),
      desc(byId),
    ),
  ],
  ["create_time", chain((a, b) => cmp(a.create_time, b.create_time), byId)],
  [
    "cpu, display_name desc",
    chain(
      (a, b) => cmp(a.cpu, b.cpu),
      desc((a, b) => cmp(a.display_name, b.display_name)),
      desc(byId),
    ),
  ],
  ["delete_time", chain((a, b) => nullLast(a.delete_time, b.delete_time), byId)],
  [
    "delete_time desc, cpu",
    chain(
      desc((a, b) => nullLast(a.delete_time, b.delete_time)),
      (a, b) => cmp(a.cpu, b.cpu),
      byId,
    ),
  ],
  [
    "reconciling desc, memory_bytes",
    chain(
      desc((a, b) => cmp(a.reconciling, b.reconciling)),
      (a, b) => cmp(a.memory_bytes, b.memory_bytes),
      byId,
    ),
  ],
  [
    "max_idle_duration desc",
    chain(
      desc((a, b) => cmp(a.max_idle_ms, b.max_idle_ms)),
      desc(byId),
    ),
  ],
  [
    "state, gpu desc, create_time",
    chain(
      (a, b) => cmp(a.state, b.state),
      desc((a, b) => cmp(a.gpu, b.gpu)),
      (a, b) => cmp(a.create_time, b.create_time),
      byId,
    ),
  ],
  ["id desc", desc(byId)],
];

describe("list paging against the database", () => {
  let database: Db;
  let db: Kysely<AnyDatabase>;

  beforeAll(async () => {
    database = await createTestDatabase("aip_list");
    db = database.db;
    await createEngineTable(db);
    await insertEngineRows(db, rows);
  });

  afterAll(async () => {
    await database?.destroy();
  });

  const base = () => db.selectFrom("engines").select(["id"]);
  const options = (o: Partial<PaginateOptions>): PaginateOptions => ({
    parent: "workspaces/-",
    table: { ...engineFields, id: engineTiebreaker.spec },
    tiebreaker: engineTiebreaker,
    tokens,
    scope: "engines",
    ...o,
  });

  async function all(filter: string, orderBy: string, pageSize: number): Promise<string[]> {
    const { items } = await listAllPages(async (pageToken) => {
      const page = await paginate(base(), options({ filter, orderBy, pageSize, pageToken }));
      expect(page.rows.length).toBeLessThanOrEqual(pageSize);
      for (const r of page.rows) expect(Object.keys(r)).toEqual(["id"]);
      if (page.nextPageToken) expect(page.rows.length).toBe(pageSize);
      return { items: page.rows, nextPageToken: page.nextPageToken };
    });
    return items.map((r) => r.id);
  }

  it.each(FILTERS)("filter %j matches the JavaScript evaluation, page by page", async (filter, pred) => {
    const expected = rows
      .filter(pred)
      .sort(ORDERS[0]![1])
      .map((r) => r.id);
    expect(await all(filter, "", 17)).toEqual(expected);
  });

  it.each(ORDERS)("order_by %j pages through every row once, in order", async (orderBy, order) => {
    const some = ["", "state = STATE_RUNNING AND cpu >= 2", 'delete_time > "2024-02-01T00:00:00Z"'];
    for (const [filter, pred] of FILTERS.filter(([f]) => some.includes(f))) {
      const expected = rows
        .filter(pred)
        .sort(order)
        .map((r) => r.id);
      expect(await all(filter, orderBy, 13)).toEqual(expected);
    }
  });

  it("keeps sub-millisecond order across a page boundary", async () => {
    const expected = rows
      .filter((r) => r.create_time.startsWith("2024-01-10T00:00:00.000"))
      .sort(ORDERS[1]![1])
      .map((r) => r.id);
    expect(expected).toEqual(["m1", "m3", "m2"]);
    expect(
      await all('create_time < "2024-01-10T00:00:01Z" AND create_time >= "2024-01-10T00:00:00Z"', "create_time", 1),
    ).toEqual(expected);
  });

  it("treats injection-shaped filters as values and leaves the table alone", async () => {
    for (const filter of [
      `display_name = "x'; DELETE FROM engines; --"`,
      `display_name = "') OR ('1'='1"`,
      `creator : "%' OR '1'='1"`,
      `display_name = "\\\\'; DROP TABLE engines; --*"`,
    ]) {
      const page = await paginate(base(), options({ filter, pageSize: 1000 }));
      expect(page.rows).toEqual([]);
    }
    const { n } = await db.selectFrom("engines").select(db.fn.countAll().as("n")).executeTakeFirstOrThrow();
    expect(Number(n)).toBe(rows.length);
  });

  it("reports the total size of the filtered collection", async () => {
    const page = await paginate(base(), options({ filter: "state = STATE_RUNNING", pageSize: 5, totalSize: true }));
    expect(page.totalSize).toBe(rows.filter((r) => r.state === "STATE_RUNNING").length);
    expect(page.rows).toHaveLength(5);
  });

  it("accepts a token with another page size, the same filter reformatted, and the default order spelled out", async () => {
    const first = await paginate(base(), options({ filter: "cpu>=2 AND state=STATE_RUNNING", pageSize: 3 }));
    const again = await paginate(
      base(),
      options({
        filter: 'cpu >= 2   state = "STATE_RUNNING"',
        orderBy: "create_time desc",
        pageSize: 4,
        pageToken: first.nextPageToken,
      }),
    );
    const expected = rows
      .filter((r) => r.cpu >= 2 && r.state === "STATE_RUNNING")
      .sort(ORDERS[0]![1])
      .map((r) => r.id);
    expect(again.rows.map((r) => r.id)).toEqual(expected.slice(3, 7));
  });

  it("rejects a token reused with another filter, order, parent or collection", async () => {
    const first = await paginate(base(), options({ filter: "cpu >= 2", pageSize: 3 }));
    for (const o of [
      { filter: "cpu >= 3" },
      { filter: "cpu >= 2", orderBy: "create_time" },
      { filter: "cpu >= 2", parent: "workspaces/w1" },
      { filter: "cpu >= 2", scope: "h2oEngines" },
    ]) {
      const err = await paginate(base(), options({ ...o, pageToken: first.nextPageToken })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.InvalidArgument);
      expect((err as ConnectError).rawMessage).toMatch(/^page_token: was issued for a different/);
    }
  });

  it("validates every list field before querying", async () => {
    const cases: Array<[Partial<PaginateOptions>, RegExp]> = [
      [{ pageSize: -1 }, /^page_size: must not be negative/],
      [{ filter: "nope = 1" }, /^filter: unknown field "nope".* at position 1$/],
      [{ orderBy: "nope desc" }, /^order_by: cannot sort by "nope"/],
      [{ pageToken: "garbage" }, /^page_token: is not a valid page token/],
    ];
    for (const [o, message] of cases) {
      const err = await paginate(base(), options(o)).catch((e: unknown) => e);
      expect((err as ConnectError).code).toBe(Code.InvalidArgument);
      expect((err as ConnectError).rawMessage).toMatch(message);
    }
  });

  it("returns everything on one page with no token when it fits", async () => {
    const page = await paginate(base(), options({ pageSize: 0, filter: "cpu = 1" }));
    const n = rows.filter((r) => r.cpu === 1).length;
    expect(n).toBeLessThan(50);
    expect(page.rows).toHaveLength(n);
    expect(page.nextPageToken).toBe("");
  });
});
