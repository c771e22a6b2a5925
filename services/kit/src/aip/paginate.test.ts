import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { FieldTable } from "./fields.js";
import { type Tiebreaker, parseOrderBy } from "./order-by.js";
import { createPageTokenCodec } from "./page-token.js";
import { type ListOptions, keysetCondition, normalizePageSize, planList } from "./paginate.js";
import { compileOnlyDb, invalidArgumentMessage } from "./test-support.js";

const db = compileOnlyDb;

const table: FieldTable = {
  cpu: { type: "int", sql: sql.ref("cpu") },
  create_time: { type: "timestamp", sql: sql.ref("create_time") },
  delete_time: { type: "timestamp", sql: sql.ref("delete_time"), nullable: true },
  reconciling: { type: "bool", sql: sql.ref("reconciling") },
};
const tiebreaker: Tiebreaker = { name: "id", spec: { type: "string", sql: sql.ref("id") } };
const tokens = createPageTokenCodec({ key: new Uint8Array(32).fill(1) });
const opts = (o: Partial<ListOptions> = {}): ListOptions => ({
  parent: "workspaces/a",
  table,
  tiebreaker,
  tokens,
  ...o,
});

function where(
  orderBy: string,
  values: Array<string | boolean | null>,
): { sql: string; parameters: readonly unknown[] } {
  const { keys } = parseOrderBy(orderBy, table, { tiebreaker });
  const c = db.selectFrom("t").selectAll().where(keysetCondition(keys, values)).compile();
  return { sql: c.sql.replace('select * from "t" where ', ""), parameters: c.parameters };
}

const rejected = invalidArgumentMessage;

describe("page size", () => {
  it("defaults, caps and rejects", () => {
    expect(normalizePageSize(undefined)).toBe(50);
    expect(normalizePageSize(0)).toBe(50);
    expect(normalizePageSize(1)).toBe(1);
    expect(normalizePageSize(1000)).toBe(1000);
    expect(normalizePageSize(1001)).toBe(1000);
    expect(normalizePageSize(2 ** 31 - 1)).toBe(1000);
    expect(rejected(() => normalizePageSize(-1))).toBe("page_size: must not be negative");
    expect(rejected(() => normalizePageSize(1.5))).toBe("page_size: must be a whole number");
    expect(rejected(() => normalizePageSize(Number.NaN))).toBe("page_size: must be a whole number");
  });
});

describe("keyset condition", () => {
  it("uses a row comparison when every key is NOT NULL and in one direction", () => {
    expect(where("", ["2024-01-01T00:00:00.000001Z", "e1"])).toEqual({
      sql: '("create_time", "id") < (CAST($1 AS timestamptz), $2)',
      parameters: ["2024-01-01T00:00:00.000001Z", "e1"],
    });
    expect(where("cpu", ["2", "e1"]).sql).toBe('("cpu", "id") > (CAST($1 AS bigint), $2)');
  });

  it("uses an OR-chain with a leading range for mixed directions", () => {
    expect(where("cpu, create_time desc", ["2", "2024-01-01T00:00:00Z", "e1"]).sql).toBe(
      '("cpu" >= CAST($1 AS bigint) AND ("cpu" > CAST($2 AS bigint) OR ("cpu" = CAST($3 AS bigint) AND "create_time" < CAST($4 AS timestamptz)) OR ("cpu" = CAST($5 AS bigint) AND "create_time" = CAST($6 AS timestamptz) AND "id" < $7)))',
    );
    expect(where("reconciling desc, cpu", [true, "2", "e1"]).parameters[0]).toBe(true);
  });

  it("places NULL last ascending and first descending", () => {
    expect(where("delete_time", ["2024-01-01T00:00:00Z", "e1"]).sql).toBe(
      '(("delete_time" > CAST($1 AS timestamptz) OR "delete_time" IS NULL) OR ("delete_time" = CAST($2 AS timestamptz) AND "id" > $3))',
    );
    // After a NULL ascending, only the tiebreaker can advance.
    expect(where("delete_time", [null, "e1"]).sql).toBe('("delete_time" IS NULL AND "id" > $1)');
    expect(where("delete_time desc", ["2024-01-01T00:00:00Z", "e1"]).sql).toBe(
      '("delete_time" < CAST($1 AS timestamptz) OR ("delete_time" = CAST($2 AS timestamptz) AND "id" < $3))',
    );
    expect(where("delete_time desc", [null, "e1"]).sql).toBe(
      '("delete_time" IS NOT NULL OR ("delete_time" IS NULL AND "id" < $1))',
    );
  });
});

describe("list plan", () => {
  it("checks page_size, filter, order_by and page_token before any query", () => {
    expect(rejected(() => planList(opts({ pageSize: -5 })))).toMatch(/^page_size: /);
    expect(rejected(() => planList(opts({ filter: "cpu >" })))).toMatch(/^filter: /);
    expect(rejected(() => planList(opts({ orderBy: "cpu sideways" })))).toMatch(/^order_by: /);
    expect(rejected(() => planList(opts({ pageToken: "abc" })))).toMatch(/^page_token: is not a valid page token/);
  });

  it("rejects a validly signed token whose values do not fit the order", () => {
    const binding = { parent: "workspaces/a", filter: "", orderBy: "create_time desc, id desc" };
    for (const values of [
      ["e1"],
      ["not a time", "e1"],
      [null, "e1"],
      ["2024-01-01T00:00:00Z", null],
      ["2024-01-01T00:00:00Z", 5 as never],
    ]) {
      const pageToken = tokens.encode(values as never, binding);
      expect(
        rejected(() => planList(opts({ pageToken }))),
        JSON.stringify(values),
      ).toMatch(/^page_token: is not a valid page token/);
    }
    const good = tokens.encode(["2024-01-01T00:00:00.000000Z", "e1"], binding);
    expect(planList(opts({ pageToken: good })).after).toEqual(["2024-01-01T00:00:00.000000Z", "e1"]);
  });

  it("applies filter, keyset, key columns, order and limit", () => {
    const binding = { parent: "workspaces/a", filter: 'cpu >= "2"', orderBy: "cpu, id" };
    const pageToken = tokens.encode(["4", "e9"], binding);
    const plan = planList(opts({ filter: "cpu >= 2", orderBy: "cpu", pageSize: 10, pageToken }));
    const c = plan.apply(db.selectFrom("t").select("id")).compile();
    expect(c.sql).toBe(
      'select "id", CAST("cpu" AS text) as "__aip_k0", "id" as "__aip_k1" from "t" where "cpu" >= CAST($1 AS bigint) and ("cpu", "id") > (CAST($2 AS bigint), $3) order by "cpu" asc, "id" asc limit $4',
    );
    expect(c.parameters).toEqual(["2", "4", "e9", 11]);
  });

  it("finish trims the extra row, strips key columns and signs the last row's keys", () => {
    const plan = planList(opts({ pageSize: 2, orderBy: "cpu" }));
    const rows = [
      { id: "a", __aip_k0: "1", __aip_k1: "a" },
      { id: "b", __aip_k0: "2", __aip_k1: "b" },
      { id: "c", __aip_k0: "3", __aip_k1: "c" },
    ];
    const page = plan.finish(rows);
    expect(page.rows).toEqual([{ id: "a" }, { id: "b" }]);
    expect(tokens.decode(page.nextPageToken, { parent: "workspaces/a", filter: "", orderBy: "cpu, id" })).toEqual([
      "2",
      "b",
    ]);
    const last = plan.finish([{ id: "x", __aip_k0: "1", __aip_k1: "x" }]);
    expect(last).toEqual({ rows: [{ id: "x" }], nextPageToken: "" });
  });
});
