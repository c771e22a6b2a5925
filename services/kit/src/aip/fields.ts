// Field tables: the allow-list of what a list call may filter and sort on, and how each public
// field maps to SQL. Filters, order_by and page tokens all go through these, so a client never
// names a column directly and every value reaches the database as a bound, typed parameter.
import { type Expression, type RawBuilder, sql } from "kysely";

export type FieldType = "string" | "int" | "bool" | "timestamp" | "duration" | "enum";

export interface FieldSpec {
  readonly type: FieldType;
  /** The SQL expression of the field, usually `sql.ref("table.column")`. */
  readonly sql: Expression<unknown>;
  /**
   * Set when the column can be NULL. Comparisons then guard with IS [NOT] NULL so NOT and !=
   * stay two-valued (an unset delete_time is "not equal" to any time), and keyset paging treats
   * NULL as larger than every value, as PostgreSQL sorts it.
   */
  readonly nullable?: boolean;
  /** Enum fields: the full value names (`STATE_RUNNING`), stored as the same text. */
  readonly enumValues?: readonly string[];
  /** Duration fields: the integer unit the column stores; default milliseconds (bigint). */
  readonly durationUnit?: "ms" | "s";
  /** Default true. */
  readonly filterable?: boolean;
  /** Default true. */
  readonly sortable?: boolean;
  /**
   * What `order_by` and page tokens use instead of `sql`, when a field sorts differently from
   * how filters compare it (version ids sort by their numeric segments, filters compare the text).
   * Of the field's type; it must be NOT NULL when `nullable` is unset.
   */
  readonly orderSql?: Expression<unknown>;
}

/** Public field name (snake_case, as in the API) to its spec. */
export type FieldTable = Readonly<Record<string, FieldSpec>>;

/** Looks a name up without ever matching inherited keys such as `constructor`. */
export function lookupField(table: FieldTable, name: string): FieldSpec | undefined {
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const INT = /^[+-]?[0-9]{1,30}$/;

/** Parses a decimal integer that fits int64; undefined for anything else, overflow included. */
export function parseInt64(text: string): bigint | undefined {
  if (!INT.test(text)) return undefined;
  const n = BigInt(text);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

const DURATION = /^([+-]?)([0-9]{1,20})(?:\.([0-9]{1,9}))?s$/;

/**
 * Parses a protobuf JSON duration (`3600s`, `1.5s`) into whole units of `unit`. Returns a string
 * describing the problem when the text is not a duration, is finer than the unit, or overflows.
 */
export function parseDuration(text: string, unit: "ms" | "s"): bigint | string {
  const m = DURATION.exec(text);
  if (!m) return "expected a duration in seconds such as 3600s or 1.5s";
  const frac = (m[3] ?? "").padEnd(9, "0");
  const digits = unit === "ms" ? 3 : 0;
  if (!/^0*$/.test(frac.slice(digits)))
    return unit === "ms" ? "durations are compared to the millisecond" : "durations are compared to the second";
  let n = BigInt(m[2]!) * (unit === "ms" ? 1000n : 1n) + (digits ? BigInt(frac.slice(0, digits)) : 0n);
  if (m[1] === "-") n = -n;
  if (n < INT64_MIN || n > INT64_MAX) return "duration out of range";
  return n;
}

const TIMESTAMP =
  /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?([Zz]|([+-])([0-9]{2}):([0-9]{2}))$/;

/**
 * Validates an RFC 3339 timestamp with a time zone and returns it with upper-case `T` and `Z`,
 * ready to cast to timestamptz; undefined when it is malformed or names an impossible date.
 */
export function parseTimestamp(text: string): string | undefined {
  const m = TIMESTAMP.exec(text);
  if (!m) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 1 || month < 1 || month > 12 || day < 1) return undefined;
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate();
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  if (day > (month === 2 && !leap ? 28 : daysInMonth)) return undefined;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return undefined;
  if (m[9] && (Number(m[10]) > 23 || Number(m[11]) > 59)) return undefined;
  return text.toUpperCase();
}

/**
 * A bound parameter of the field's type. Numbers travel as decimal text with an explicit cast so
 * int64 values keep full precision and an int4 column compared with a large value cannot fail.
 */
export function bindValue(spec: FieldSpec, value: string | boolean): RawBuilder<unknown> {
  switch (spec.type) {
    case "int":
    case "duration":
      return sql`CAST(${value} AS bigint)`;
    case "timestamp":
      return sql`CAST(${value} AS timestamptz)`;
    case "bool":
      return sql`CAST(${value} AS boolean)`;
    case "string":
    case "enum":
      // Untyped, so the parameter takes the column's type and collation.
      return sql`${value}`;
  }
}
