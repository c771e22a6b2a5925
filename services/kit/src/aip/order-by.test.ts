import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { FieldTable } from "./fields.js";
import { type Tiebreaker, parseOrderBy } from "./order-by.js";
import { invalidArgumentMessage } from "./test-support.js";

const table: FieldTable = {
  name: { type: "string", sql: sql.ref("name") },
  cpu: { type: "int", sql: sql.ref("cpu") },
  create_time: { type: "timestamp", sql: sql.ref("create_time") },
  state: { type: "enum", sql: sql.ref("state"), enumValues: ["STATE_RUNNING"] },
  config: { type: "string", sql: sql.ref("config"), sortable: false },
};
const tiebreaker: Tiebreaker = { name: "uid", spec: { type: "string", sql: sql.ref("uid") } };

const canonical = (text: string | undefined, defaultOrderBy?: string) =>
  parseOrderBy(text, table, { tiebreaker, defaultOrderBy }).canonical;

function error(text: string): string {
  return invalidArgumentMessage(() => parseOrderBy(text, table, { tiebreaker }));
}

describe("order_by", () => {
  it("defaults to create_time desc with the tiebreaker in the same direction", () => {
    expect(canonical(undefined)).toBe("create_time desc, uid desc");
    expect(canonical("")).toBe("create_time desc, uid desc");
    expect(canonical("   ")).toBe("create_time desc, uid desc");
    expect(canonical("", "name")).toBe("name, uid");
  });

  it("keeps the listed fields and directions, then the tiebreaker", () => {
    expect(canonical("cpu")).toBe("cpu, uid");
    expect(canonical("cpu desc, name")).toBe("cpu desc, name, uid");
    expect(canonical("  state ,create_time   DESC ")).toBe("state, create_time desc, uid desc");
    expect(canonical("name asc")).toBe("name, uid");
    const keys = parseOrderBy("cpu desc", table, { tiebreaker }).keys;
    expect(keys.map((k) => [k.name, k.desc])).toEqual([
      ["cpu", true],
      ["uid", true],
    ]);
    expect(keys[0]!.spec).toBe(table.cpu);
  });

  it("does not add the tiebreaker twice", () => {
    const withUid = { ...table, uid: tiebreaker.spec };
    expect(parseOrderBy("uid, cpu", withUid, { tiebreaker }).canonical).toBe("uid, cpu");
  });

  it("rejects bad lists, naming order_by and the field", () => {
    expect(error("nope")).toBe('order_by: cannot sort by "nope"; sort by name, cpu, create_time, state');
    expect(error("config")).toMatch(/^order_by: cannot sort by "config"/);
    expect(error("constructor")).toMatch(/^order_by: cannot sort by "constructor"/);
    expect(error("cpu sideways")).toBe(
      'order_by: unknown direction "sideways" after "cpu"; use desc or asc, and separate fields with commas',
    );
    expect(error("cpu desc desc")).toMatch(/^order_by: "cpu desc desc" is not "field" or "field desc"/);
    expect(error("cpu name")).toMatch(/separate fields with commas/);
    expect(error("cpu,,name")).toBe("order_by: field 2 is empty");
    expect(error("cpu,")).toBe("order_by: field 2 is empty");
    expect(error("cpu, cpu desc")).toBe('order_by: lists "cpu" more than once');
    expect(error(Array.from({ length: 9 }, () => "cpu").join(","))).toBe("order_by: may list at most 8 fields");
    expect(error("x".repeat(2000))).toBe("order_by: is longer than 1024 characters");
    expect(error("cpu; DROP TABLE t")).toMatch(/^order_by: /);
  });

  it("names a custom field", () => {
    expect(() => parseOrderBy("nope", table, { tiebreaker, field: "sort" })).toThrow(/\] sort: cannot sort/);
  });
});
