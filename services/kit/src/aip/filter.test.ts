import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { FieldTable } from "./fields.js";
import { parseDuration, parseInt64, parseTimestamp } from "./fields.js";
import { type FilterNode, formatFilter, parseFilter } from "./filter-parser.js";
import { escapeLike, filterToSql } from "./filter-sql.js";
import { compileOnlyDb, invalidArgumentMessage } from "./test-support.js";

const db = compileOnlyDb;

const table: FieldTable = {
  name: { type: "string", sql: sql.ref("name") },
  display_name: { type: "string", sql: sql.ref("display_name") },
  state: { type: "enum", sql: sql.ref("state"), enumValues: ["STATE_RUNNING", "STATE_PAUSED"] },
  cpu: { type: "int", sql: sql.ref("cpu") },
  memory_bytes: { type: "int", sql: sql.ref("memory_bytes") },
  create_time: { type: "timestamp", sql: sql.ref("create_time") },
  delete_time: { type: "timestamp", sql: sql.ref("delete_time"), nullable: true },
  reconciling: { type: "bool", sql: sql.ref("reconciling") },
  max_idle_duration: { type: "duration", sql: sql.ref("max_idle_ms") },
  max_running_duration: { type: "duration", sql: sql.ref("max_running_s"), durationUnit: "s" },
  uid: { type: "string", sql: sql.ref("uid"), filterable: false },
};

function compile(filter: string): { sql: string; parameters: readonly unknown[] } {
  const { where } = filterToSql(filter, table);
  const q = db.selectFrom("t").selectAll();
  const c = (where ? q.where(where) : q).compile();
  return { sql: c.sql.replace('select * from "t" where ', ""), parameters: c.parameters };
}

function error(filter: string): string {
  const m = invalidArgumentMessage(() => filterToSql(filter, table));
  expect(m.startsWith("filter: ")).toBe(true);
  return m.slice("filter: ".length);
}

// A compact view of the AST for structure assertions.
function shape(node: FilterNode | undefined): unknown {
  if (!node) return null;
  switch (node.kind) {
    case "and":
    case "or":
      return [node.kind, ...node.children.map(shape)];
    case "not":
      return ["not", shape(node.child)];
    case "compare":
      return [node.field, node.op, shape(node.arg)];
    case "value":
      return `${node.prefixWildcard ? "*" : ""}${node.text}${node.suffixWildcard ? "*" : ""}`;
  }
}

describe("filter parser", () => {
  it("treats empty and blank filters as no filter", () => {
    expect(parseFilter("")).toBeUndefined();
    expect(parseFilter(undefined)).toBeUndefined();
    expect(parseFilter("  \n\t ")).toBeUndefined();
    expect(filterToSql("", table)).toEqual({ where: undefined, canonical: "" });
  });

  it("binds OR tighter than AND, and adjacency like AND", () => {
    const cases: [filter: string, shape: unknown][] = [
      ["a = 1 AND b = 2 OR c = 3", ["and", ["a", "=", "1"], ["or", ["b", "=", "2"], ["c", "=", "3"]]]],
      ["a = 1 OR b = 2 AND c = 3", ["and", ["or", ["a", "=", "1"], ["b", "=", "2"]], ["c", "=", "3"]]],
      ["a = 1 b = 2 OR c = 3", ["and", ["a", "=", "1"], ["or", ["b", "=", "2"], ["c", "=", "3"]]]],
      ["(a = 1 AND b = 2) OR c = 3", ["or", ["and", ["a", "=", "1"], ["b", "=", "2"]], ["c", "=", "3"]]],
    ];
    for (const [filter, expected] of cases) expect(shape(parseFilter(filter)), filter).toEqual(expected);
  });

  it("parses NOT, minus and every comparator", () => {
    expect(shape(parseFilter("NOT a = 1"))).toEqual(["not", ["a", "=", "1"]]);
    expect(shape(parseFilter("-a:x"))).toEqual(["not", ["a", ":", "x"]]);
    expect(shape(parseFilter("-(a = 1 OR b = 2)"))).toEqual(["not", ["or", ["a", "=", "1"], ["b", "=", "2"]]]);
    expect(shape(parseFilter("NOT NOT a=1"))).toEqual(["not", ["not", ["a", "=", "1"]]]);
    for (const op of ["=", "!=", "<", "<=", ">", ">=", ":"]) {
      expect(shape(parseFilter(`a${op}1`))).toEqual(["a", op, "1"]);
    }
  });

  it("reads values: negative numbers, strings with escapes, unquoted timestamps, wildcards, lists", () => {
    expect(shape(parseFilter("cpu > -1"))).toEqual(["cpu", ">", "-1"]);
    expect(shape(parseFilter(`a = "q\\"\\\\\\n" b = 'it\\'s'`))).toEqual([
      "and",
      ["a", "=", 'q"\\\n'],
      ["b", "=", "it's"],
    ]);
    expect(shape(parseFilter("t > 2024-01-01T10:00:00.5+02:00"))).toEqual(["t", ">", "2024-01-01T10:00:00.5+02:00"]);
    expect(shape(parseFilter('a = "*x*" b = y* c = *'))).toEqual([
      "and",
      ["a", "=", "*x*"],
      ["b", "=", "y*"],
      ["c", "=", "*"],
    ]);
    const v = parseFilter('a = "\\*x\\*"') as {
      arg: { text: string; prefixWildcard: boolean; suffixWildcard: boolean };
    };
    expect([v.arg.text, v.arg.prefixWildcard, v.arg.suffixWildcard]).toEqual(["*x*", false, false]);
    expect(shape(parseFilter("s = (A OR B) AND c = (NOT 1)"))).toEqual([
      "and",
      ["s", "=", ["or", "A", "B"]],
      ["c", "=", ["not", "1"]],
    ]);
    expect(shape(parseFilter("creator = users/alice@example.com"))).toEqual([
      "creator",
      "=",
      "users/alice@example.com",
    ]);
    // `==` means `=`: the official Python client documents `cpu != 5 OR gpu == 3`.
    expect(shape(parseFilter("cpu != 5 OR gpu == 3"))).toEqual(["or", ["cpu", "!=", "5"], ["gpu", "=", "3"]]);
    expect(formatFilter(parseFilter("gpu==3"))).toBe(formatFilter(parseFilter("gpu = 3")));
  });

  it("rejects broken syntax and says where", () => {
    expect(error('a = "abc')).toBe("unterminated string at position 5");
    expect(error('a = "x\\q"')).toBe("unknown escape \\q in a string (use \\\\ for a backslash) at position 7");
    expect(error("a === 1")).toBe('unexpected "=" where a value was expected at position 5');
    expect(error("a ! b")).toBe("unexpected ! (use != or NOT) at position 3");
    expect(error("a =")).toBe("expected a value, found the end of the filter at position 4");
    expect(error("a = = 1")).toBe('unexpected "=" where a value was expected at position 5');
    expect(error("= 1")).toBe('expected a field name, found "=" at position 1');
    expect(error("(a = 1")).toBe("expected ) to close the ( at position 1, found the end of the filter at position 7");
    expect(error("a = 1)")).toBe("unmatched ) at position 6");
    expect(error("()")).toBe("empty parentheses at position 2");
    expect(error("cpu")).toBe(
      'expected a comparison operator (=, !=, <, <=, >, >=, :) after "cpu", found the end of the filter at position 4',
    );
    expect(error("cpu = 1 and cpu = 2")).toBe("keywords are upper case: write AND at position 9");
    expect(error("has(cpu)")).toBe("functions are not supported at position 1");
    expect(error("cpu = 1 AND")).toBe("expected a field name, found the end of the filter at position 12");
    expect(error("cpu = 1 OR")).toBe("expected a field name, found the end of the filter at position 11");
    expect(error("NOT")).toBe("expected a term after NOT, found the end of the filter at position 4");
    expect(error("cpu = 1 $")).toBe('unexpected character "$" (quote values that hold it) at position 9');
    expect(error('"cpu" = 1')).toMatch(/^expected a field name, found a string/);
    expect(error("1cpu = 1")).toBe('expected a field name, found "1cpu" at position 1');
    expect(error("cpu = 1, cpu = 2")).toBe('unexpected "," at position 8');
    expect(error("cpu = (1 = 2)")).toBe('expected ) to close the ( at position 7, found "=" at position 10');
    expect(error("cpu > - 1")).toBe('expected a value, found "-" at position 7');
  });

  it("caps length, depth and size", () => {
    expect(error(`name = "${"x".repeat(4096)}"`)).toBe("is longer than 4096 bytes");
    expect(error(`name = "${"é".repeat(2045)}"`)).toBe("is longer than 4096 bytes");
    expect(parseFilter(`name = "${"é".repeat(2040)}"`)).toBeDefined();
    expect(parseFilter(`${"(".repeat(31)}cpu = 1${")".repeat(31)}`)).toBeDefined();
    expect(error(`${"(".repeat(33)}cpu = 1${")".repeat(33)}`)).toBe("nested deeper than 32 levels at position 33");
    expect(error(`${"NOT ".repeat(40)}cpu = 1`)).toBe("nested deeper than 32 levels at position 129");
    expect(error(`${"-".repeat(40)}cpu = 1`)).toMatch(/^nested deeper than 32 levels/);
    // 66 comparisons of two nodes each plus the AND: 133 nodes; 101 of them: 203.
    expect(parseFilter(Array.from({ length: 66 }, () => "cpu = 1").join(" AND "))).toBeDefined();
    expect(error(Array.from({ length: 101 }, () => "cpu = 1").join(" AND "))).toMatch(
      /^more than 200 terms and operators at position \d+$/,
    );
    expect(error(`cpu = (${Array.from({ length: 201 }, () => "1").join(" OR ")})`)).toMatch(/^more than 200 terms/);
  });

  it("formats a canonical text that ignores spacing, quoting and redundant parentheses", () => {
    const a = formatFilter(parseFilter("cpu>=2 AND (state=STATE_RUNNING)"));
    const b = formatFilter(parseFilter('  cpu >= "2"   state = "STATE_RUNNING" '));
    expect(a).toBe('cpu >= "2" AND state = "STATE_RUNNING"');
    expect(b).toBe(a);
    expect(formatFilter(parseFilter("a = 1 AND (b = 2 OR c = 3)"))).toBe('a = "1" AND b = "2" OR c = "3"');
    expect(formatFilter(parseFilter("(a = 1 AND b = 2) OR c = 3"))).toBe('(a = "1" AND b = "2") OR c = "3"');
    expect(formatFilter(parseFilter('NOT (a = 1 OR b = "x\\*")'))).toBe('NOT (a = "1" OR b = "x\\*")');
    expect(formatFilter(parseFilter("a = 1 OR b = 2"))).not.toBe(formatFilter(parseFilter("a = 1 AND b = 2")));
    expect(formatFilter(parseFilter('a = "x*"'))).not.toBe(formatFilter(parseFilter('a = "x\\*"')));
  });
});

describe("filter compiler", () => {
  it("compiles comparisons to bound parameters with typed casts", () => {
    expect(compile("state = STATE_RUNNING AND cpu >= 2")).toEqual({
      sql: '("state" = $1 AND "cpu" >= CAST($2 AS bigint))',
      parameters: ["STATE_RUNNING", "2"],
    });
    expect(compile("reconciling != true")).toEqual({ sql: '"reconciling" <> CAST($1 AS boolean)', parameters: [true] });
    expect(compile("reconciling = FALSE").parameters).toEqual([false]);
    expect(compile('create_time < "2024-01-01t00:00:00z"')).toEqual({
      sql: '"create_time" < CAST($1 AS timestamptz)',
      parameters: ["2024-01-01T00:00:00Z"],
    });
    expect(compile("max_idle_duration > 1.5s").parameters).toEqual(["1500"]);
    expect(compile("max_running_duration <= 3600s")).toEqual({
      sql: '"max_running_s" <= CAST($1 AS bigint)',
      parameters: ["3600"],
    });
    expect(compile("state:STATE_PAUSED").sql).toBe('"state" = $1');
    expect(compile("cpu:4").sql).toBe('"cpu" = CAST($1 AS bigint)');
  });

  it("keeps injection-shaped values out of the SQL text", () => {
    for (const filter of [
      `display_name = "'; DROP TABLE t; --"`,
      `display_name = "\\" OR 1=1 --"`,
      `name : "%' OR '1'='1"`,
      `display_name = "x\\"); DELETE FROM t; --*"`,
      `name = 'a' OR name = "b"`,
    ]) {
      const c = compile(filter);
      expect(c.sql).not.toMatch(/DROP|DELETE|1=1|'a'|"b"|OR '/);
      expect(c.sql).toMatch(/^[("a-z_ =<>$0-9A-Z\\')]*$/);
      expect(c.parameters.length).toBeGreaterThan(0);
    }
  });

  it("turns wildcards into escaped LIKE patterns", () => {
    expect(compile('display_name = "50%_off*"')).toEqual({
      sql: `"display_name" LIKE $1 ESCAPE '\\'`,
      parameters: ["50\\%\\_off%"],
    });
    expect(compile('display_name = "*a\\\\b"').parameters).toEqual(["%a\\\\b"]);
    expect(compile('display_name = "*mid*"').parameters).toEqual(["%mid%"]);
    expect(compile('display_name != "x*"').sql).toBe(`"display_name" NOT LIKE $1 ESCAPE '\\'`);
    expect(compile('display_name : "100%"')).toEqual({
      sql: `"display_name" LIKE $1 ESCAPE '\\'`,
      parameters: ["%100\\%%"],
    });
    expect(compile('display_name = "x\\*"')).toEqual({ sql: '"display_name" = $1', parameters: ["x*"] });
    expect(compile('display_name = "a_b"')).toEqual({ sql: '"display_name" = $1', parameters: ["a_b"] });
    expect(escapeLike("\\%_x")).toBe("\\\\\\%\\_x");
  });

  it("guards nullable fields so NOT and != stay two-valued", () => {
    expect(compile('delete_time > "2024-01-01T00:00:00Z"').sql).toBe(
      '("delete_time" IS NOT NULL AND "delete_time" > CAST($1 AS timestamptz))',
    );
    expect(compile('delete_time != "2024-01-01T00:00:00Z"').sql).toBe(
      '("delete_time" IS NULL OR "delete_time" <> CAST($1 AS timestamptz))',
    );
    expect(compile("delete_time:*").sql).toBe('("delete_time" IS NOT NULL)');
    expect(compile("NOT display_name:*")).toEqual({
      sql: '(NOT ("display_name" IS NOT NULL AND "display_name" <> $1))',
      parameters: [""],
    });
  });

  it("expands value lists into one comparison per value", () => {
    expect(compile("state = (STATE_RUNNING OR STATE_PAUSED)")).toEqual({
      sql: '("state" = $1 OR "state" = $2)',
      parameters: ["STATE_RUNNING", "STATE_PAUSED"],
    });
    expect(compile("cpu != (NOT 1)").sql).toBe('(NOT "cpu" <> CAST($1 AS bigint))');
  });

  it("rejects unknown and unfilterable fields, naming the allowed ones", () => {
    expect(error("cpu = 1 AND nope = 1")).toBe(
      'unknown field "nope"; filter on name, display_name, state, cpu, memory_bytes, create_time, delete_time, reconciling, max_idle_duration, max_running_duration at position 13',
    );
    expect(error("uid = x")).toMatch(/^unknown field "uid"/);
    expect(error("constructor = 1")).toMatch(/^unknown field "constructor"/);
    expect(error("__proto__ = 1")).toMatch(/^unknown field "__proto__"/);
    expect(error("toString = 1")).toMatch(/^unknown field "toString"/);
    expect(error("cpu.value = 1")).toMatch(/^unknown field "cpu.value"/);
  });

  it("checks integers, including overflow", () => {
    expect(compile("memory_bytes <= 9223372036854775807").parameters).toEqual(["9223372036854775807"]);
    expect(compile("memory_bytes >= -9223372036854775808").parameters).toEqual(["-9223372036854775808"]);
    expect(error("cpu = +3")).toMatch(/unexpected character "\+"/);
    expect(compile('cpu = "3"').parameters).toEqual(["3"]);
    expect(error("memory_bytes > 9223372036854775808")).toBe(
      '"9223372036854775808" is out of range for "memory_bytes" (a 64-bit integer) at position 16',
    );
    expect(error("memory_bytes > -9223372036854775809")).toMatch(/is out of range/);
    expect(error(`cpu = ${"9".repeat(400)}`)).toMatch(/is out of range/);
    expect(error("cpu = 2.5")).toBe('"cpu" needs an integer, not "2.5" at position 7');
    expect(error("cpu = 1e3")).toMatch(/needs an integer/);
    expect(error("cpu = two")).toMatch(/needs an integer/);
    expect(error("cpu = 0x10")).toMatch(/needs an integer/);
  });

  it("checks durations", () => {
    expect(error("max_idle_duration > 3600")).toMatch(
      /^"max_idle_duration": expected a duration in seconds such as 3600s/,
    );
    expect(error("max_idle_duration > 1h")).toMatch(/expected a duration/);
    expect(error("max_idle_duration > 0.0001s")).toMatch(/compared to the millisecond/);
    expect(error("max_running_duration > 0.5s")).toMatch(/compared to the second/);
    expect(error("max_idle_duration > 99999999999999999999s")).toMatch(/duration out of range/);
    expect(compile('max_idle_duration = "-2s"').parameters).toEqual(["-2000"]);
  });

  it("checks timestamps", () => {
    for (const bad of [
      "2024-02-30T00:00:00Z",
      "2023-02-29T00:00:00Z",
      "2024-13-01T00:00:00Z",
      "2024-01-01T24:00:00Z",
      "2024-01-01T00:60:00Z",
      "2024-01-01T00:00:60Z",
      "2024-01-01T00:00:00",
      "2024-01-01",
      "0000-01-01T00:00:00Z",
      "2024-01-01T00:00:00+25:00",
      "yesterday",
    ]) {
      expect(error(`create_time > "${bad}"`), bad).toMatch(/needs an RFC 3339 timestamp/);
    }
    expect(compile('create_time > "2024-02-29T23:59:59.123456789-07:30"').parameters).toEqual([
      "2024-02-29T23:59:59.123456789-07:30",
    ]);
  });

  it("checks booleans and enums, which only take equality", () => {
    expect(error("reconciling = yes")).toBe('"reconciling" needs true or false, not "yes" at position 15');
    expect(error("reconciling < true")).toBe('< does not apply to the boolean field "reconciling" at position 13');
    expect(error("state = RUNNING")).toBe(
      '"RUNNING" is not a value of "state"; use one of STATE_RUNNING, STATE_PAUSED at position 9',
    );
    expect(error("state > STATE_RUNNING")).toMatch(/^> does not apply to the enum field "state"/);
    expect(error("state = state_running")).toMatch(/is not a value of "state"/);
  });

  it("allows wildcards only at the ends of string equality", () => {
    expect(error('display_name = "a*b"')).toMatch(
      /^a wildcard \* is only allowed at the start or end of a value .* at position 18$/,
    );
    expect(error("display_name = a*b")).toMatch(/at position 17$/);
    expect(error('display_name : "a*"')).toMatch(
      /^wildcards only work with = and != on text fields, not with : on "display_name"/,
    );
    expect(error('display_name < "a*"')).toMatch(/^wildcards only work/);
    expect(error("cpu = 1*")).toMatch(/^wildcards only work/);
    expect(error("state = STATE_*")).toMatch(/^wildcards only work/);
  });
});

describe("literal parsers", () => {
  it("parseInt64", () => {
    expect(parseInt64("0")).toBe(0n);
    expect(parseInt64("-0")).toBe(0n);
    expect(parseInt64("9223372036854775807")).toBe(9223372036854775807n);
    expect(parseInt64("9223372036854775808")).toBeUndefined();
    expect(parseInt64("")).toBeUndefined();
    expect(parseInt64("1 ")).toBeUndefined();
  });

  it("parseDuration", () => {
    expect(parseDuration("0s", "ms")).toBe(0n);
    expect(parseDuration("1.000000000s", "s")).toBe(1n);
    expect(parseDuration("1.001s", "ms")).toBe(1001n);
    expect(parseDuration("9223372036854775s", "ms")).toBe(9223372036854775000n);
    expect(parseDuration("9223372036854776s", "ms")).toBe("duration out of range");
    expect(typeof parseDuration("1.0000000001s", "ms")).toBe("string");
  });

  it("parseTimestamp", () => {
    expect(parseTimestamp("2000-02-29T00:00:00Z")).toBe("2000-02-29T00:00:00Z");
    expect(parseTimestamp("1900-02-29T00:00:00Z")).toBeUndefined();
    expect(parseTimestamp("2024-04-31T00:00:00Z")).toBeUndefined();
    expect(parseTimestamp("2024-01-01T00:00:00.1234567891Z")).toBeUndefined();
  });
});
