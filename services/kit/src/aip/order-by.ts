// AIP-132 order_by: a comma-separated list of fields from the table, each optionally followed by
// `desc` (or `asc`). A unique tiebreaker is always appended so the order is total, which keyset
// page tokens need.
import { invalidArgument, quote } from "../errors.js";
import { type FieldSpec, type FieldTable, lookupField } from "./fields.js";

export const DEFAULT_ORDER_BY = "create_time desc";
export const MAX_ORDER_BY_FIELDS = 8;

export interface OrderKey {
  readonly name: string;
  readonly spec: FieldSpec;
  readonly desc: boolean;
}

/** A unique, non-null key that ends every order, e.g. the row id; need not be public. */
export interface Tiebreaker {
  readonly name: string;
  readonly spec: FieldSpec;
}

export interface OrderBy {
  readonly keys: readonly OrderKey[];
  /** `create_time desc, uid desc`: the effective order, for binding page tokens. */
  readonly canonical: string;
}

export interface OrderByOptions {
  readonly tiebreaker: Tiebreaker;
  /** Used when order_by is empty; default `create_time desc`. */
  readonly defaultOrderBy?: string;
  /** The request field named in errors; default `order_by`. */
  readonly field?: string;
}

/**
 * Parses order_by against the table's sortable fields and appends the tiebreaker, in the
 * direction of the last key so a single composite index serves the whole order.
 */
export function parseOrderBy(text: string | undefined, table: FieldTable, options: OrderByOptions): OrderBy {
  const field = options.field ?? "order_by";
  const source = text && text.trim() !== "" ? text : (options.defaultOrderBy ?? DEFAULT_ORDER_BY);
  if (source.length > 1024) throw invalidArgument(field, "is longer than 1024 characters");
  const keys: OrderKey[] = [];
  const items = source.split(",");
  if (items.length > MAX_ORDER_BY_FIELDS)
    throw invalidArgument(field, `may list at most ${MAX_ORDER_BY_FIELDS} fields`);
  for (let i = 0; i < items.length; i++) {
    const words = items[i]!.trim()
      .split(/\s+/)
      .filter((w) => w !== "");
    if (words.length === 0) throw invalidArgument(field, `field ${i + 1} is empty`);
    if (words.length > 2) {
      throw invalidArgument(
        field,
        `${quote(items[i]!.trim())} is not "field" or "field desc"; separate fields with commas`,
      );
    }
    const [name, dir] = words as [string, string | undefined];
    let desc = false;
    if (dir !== undefined) {
      const d = dir.toLowerCase();
      if (d !== "desc" && d !== "asc")
        throw invalidArgument(
          field,
          `unknown direction ${quote(dir)} after ${quote(name)}; use desc or asc, and separate fields with commas`,
        );
      desc = d === "desc";
    }
    const spec = lookupField(table, name);
    if (!spec || spec.sortable === false) {
      const sortable = Object.keys(table).filter((k) => table[k]!.sortable !== false);
      throw invalidArgument(field, `cannot sort by ${quote(name)}; sort by ${sortable.join(", ")}`);
    }
    if (keys.some((k) => k.name === name)) throw invalidArgument(field, `lists ${quote(name)} more than once`);
    keys.push({ name, spec: spec.orderSql ? { ...spec, sql: spec.orderSql } : spec, desc });
  }
  const { tiebreaker } = options;
  if (!keys.some((k) => k.name === tiebreaker.name || k.spec === tiebreaker.spec)) {
    keys.push({ name: tiebreaker.name, spec: tiebreaker.spec, desc: keys[keys.length - 1]!.desc });
  }
  return { keys, canonical: keys.map((k) => (k.desc ? `${k.name} desc` : k.name)).join(", ") };
}
