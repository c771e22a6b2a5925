// List calls end to end: page size (AIP-158), filter (AIP-160), order_by (AIP-132) and keyset
// page tokens applied to a kysely select. Everything a client sends is checked before the database
// is touched; a bad request is INVALID_ARGUMENT naming the field.
//
// Keyset paging. Each page fetches page_size + 1 rows ordered by the order keys (tiebreaker last);
// the token carries the last returned row's key values, read back from the database as exact text
// (timestamps to the microsecond, int64 as decimal) so no row is skipped or repeated through
// JavaScript's millisecond Dates or float numbers. The next page is "rows after that tuple":
//  - all keys in one direction and NOT NULL: a row comparison, (a, id) < ($1, $2), which PostgreSQL
//    answers straight from a composite index;
//  - otherwise an OR-chain: a > $1 OR (a = $1 AND id > $2) ..., with NULL placed as PostgreSQL
//    sorts it by default (NULLS LAST ascending, NULLS FIRST descending, i.e. NULL is the largest
//    value): after a value v ascending means "> v or NULL"; after NULL ascending there is nothing
//    more for that key; descending after v means "< v"; after NULL means "IS NOT NULL". A redundant
//    range on the first key (a >= $1) keeps the planner on the index.
import { type Expression, type RawBuilder, type SelectQueryBuilder, type SqlBool, sql } from "kysely";
import { invalidArgument } from "../errors.js";
import { type FieldSpec, type FieldTable, bindValue, parseTimestamp } from "./fields.js";
import { type CompiledFilter, filterToSql } from "./filter-sql.js";
import { type OrderBy, type OrderKey, type Tiebreaker, parseOrderBy } from "./order-by.js";
import type { KeyValue, PageTokenBinding, PageTokenCodec } from "./page-token.js";

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

/** 0 or unset gives 50, above 1000 gives 1000, negative is INVALID_ARGUMENT. */
export function normalizePageSize(pageSize: number | undefined, field = "page_size"): number {
  if (pageSize === undefined || pageSize === 0) return DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(pageSize)) throw invalidArgument(field, "must be a whole number");
  if (pageSize < 0) throw invalidArgument(field, "must not be negative");
  return Math.min(pageSize, MAX_PAGE_SIZE);
}

export interface ListRequestFields {
  /** The parent of the collection (`workspaces/team-a`, or `workspaces/-`). */
  readonly parent: string;
  readonly pageSize?: number;
  readonly pageToken?: string;
  readonly filter?: string;
  readonly orderBy?: string;
}

/** The paging fields of a standard List request (AIP-132) and nothing else, for ListOptions. */
export function listRequestFields(req: ListRequestFields): ListRequestFields {
  return {
    parent: req.parent,
    pageSize: req.pageSize,
    pageToken: req.pageToken,
    filter: req.filter,
    orderBy: req.orderBy,
  };
}

export interface ListOptions extends ListRequestFields {
  /** Fields a client may filter and sort on. */
  readonly table: FieldTable;
  /** A unique NOT NULL key ending every order (row id or uid). */
  readonly tiebreaker: Tiebreaker;
  /** Order when order_by is empty; default `create_time desc`. */
  readonly defaultOrderBy?: string;
  readonly tokens: PageTokenCodec;
  /** The collection, bound into tokens (`daiEngines`). */
  readonly scope?: string;
}

export interface ListPage<O> {
  readonly rows: O[];
  /** Empty on the last page. */
  readonly nextPageToken: string;
  /** Rows matching the filter, all pages together; only when asked for. */
  readonly totalSize?: number;
}

export interface ListPlan {
  readonly pageSize: number;
  readonly filter: CompiledFilter;
  readonly orderBy: OrderBy;
  /** Key values of the previous page's last row; undefined on the first page. */
  readonly after: readonly KeyValue[] | undefined;
  /** Adds the filter, keyset, key columns, order and limit (page_size + 1) to a select. */
  apply<DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /** Turns the rows of the applied query into a page: trims the extra row, builds the token. */
  finish<O>(rows: O[]): ListPage<O>;
}

const KEY_PREFIX = "__aip_k";

// The exact text of a key value as the token carries it.
function keyColumn(spec: FieldSpec): RawBuilder<unknown> {
  switch (spec.type) {
    case "timestamp":
      return sql`to_char(${spec.sql} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
    case "int":
    case "duration":
      return sql`CAST(${spec.sql} AS text)`;
    default:
      return sql`${spec.sql}`;
  }
}

function validKeyValue(spec: FieldSpec, v: KeyValue): boolean {
  if (v === null) return spec.nullable === true;
  switch (spec.type) {
    case "bool":
      return typeof v === "boolean";
    case "int":
    case "duration":
      return typeof v === "string" && /^-?[0-9]{1,19}$/.test(v);
    case "timestamp":
      return typeof v === "string" && parseTimestamp(v) !== undefined;
    case "string":
    case "enum":
      return typeof v === "string";
  }
}

function bound(key: OrderKey, v: string | boolean): RawBuilder<unknown> {
  return bindValue(key.spec, v);
}

function and(parts: RawBuilder<SqlBool>[]): RawBuilder<SqlBool> {
  return parts.length === 1 ? parts[0]! : sql<SqlBool>`(${sql.join(parts, sql` AND `)})`;
}

/** The condition "strictly after this tuple" in the given order. */
export function keysetCondition(keys: readonly OrderKey[], values: readonly KeyValue[]): Expression<SqlBool> {
  const first = keys[0]!;
  const uniform = keys.every((k) => !k.spec.nullable && k.desc === first.desc) && values.every((v) => v !== null);
  if (uniform) {
    const cols = sql.join(keys.map((k) => k.spec.sql));
    const vals = sql.join(keys.map((k, i) => bound(k, values[i] as string | boolean)));
    return sql<SqlBool>`(${cols}) ${sql.raw(first.desc ? "<" : ">")} (${vals})`;
  }
  const disjuncts: RawBuilder<SqlBool>[] = [];
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const v = values[i]!;
    let after: RawBuilder<SqlBool> | undefined;
    if (!key.desc) {
      if (v !== null) {
        after = key.spec.nullable
          ? sql<SqlBool>`(${key.spec.sql} > ${bound(key, v)} OR ${key.spec.sql} IS NULL)`
          : sql<SqlBool>`${key.spec.sql} > ${bound(key, v)}`;
      }
    } else {
      after = v === null ? sql<SqlBool>`${key.spec.sql} IS NOT NULL` : sql<SqlBool>`${key.spec.sql} < ${bound(key, v)}`;
    }
    if (!after) continue;
    const equal = keys.slice(0, i).map((k, j) => {
      const w = values[j]!;
      return w === null ? sql<SqlBool>`${k.spec.sql} IS NULL` : sql<SqlBool>`${k.spec.sql} = ${bound(k, w)}`;
    });
    disjuncts.push(and([...equal, after]));
  }
  if (disjuncts.length === 0) return sql<SqlBool>`FALSE`;
  const chain = disjuncts.length === 1 ? disjuncts[0]! : sql<SqlBool>`(${sql.join(disjuncts, sql` OR `)})`;
  const v0 = values[0];
  if (first.spec.nullable || v0 === null || v0 === undefined) return chain;
  return sql<SqlBool>`(${first.spec.sql} ${sql.raw(first.desc ? "<=" : ">=")} ${bound(first, v0)} AND ${chain})`;
}

/**
 * Validates every list field and returns a plan to apply to a query. Use it directly when the
 * rows come from somewhere paginate() cannot reach; otherwise call paginate().
 */
export function planList(options: ListOptions): ListPlan {
  const pageSize = normalizePageSize(options.pageSize);
  const filter = filterToSql(options.filter, options.table);
  const orderBy = parseOrderBy(options.orderBy, options.table, {
    tiebreaker: options.tiebreaker,
    defaultOrderBy: options.defaultOrderBy,
  });
  const binding: PageTokenBinding = {
    scope: options.scope,
    parent: options.parent,
    filter: filter.canonical,
    orderBy: orderBy.canonical,
  };
  let after: KeyValue[] | undefined;
  if (options.pageToken) {
    after = options.tokens.decode(options.pageToken, binding);
    if (after.length !== orderBy.keys.length || !orderBy.keys.every((k, i) => validKeyValue(k.spec, after![i]!))) {
      throw invalidArgument(
        "page_token",
        "is not a valid page token; pass the next_page_token of the previous response unchanged",
      );
    }
  }
  const keys = orderBy.keys;

  return {
    pageSize,
    filter,
    orderBy,
    after,
    apply(query) {
      // The builder's row type is unaffected by what is added here (key columns are removed
      // again in finish), so work on an untyped view.
      // biome-ignore lint/suspicious/noExplicitAny: the builder is widened to add conditions; finish() restores the row type
      let q = query as unknown as SelectQueryBuilder<any, any, any>;
      if (filter.where) q = q.where(filter.where);
      if (after) q = q.where(keysetCondition(keys, after));
      q = q.select(keys.map((k, i) => keyColumn(k.spec).as(`${KEY_PREFIX}${i}`)));
      for (const k of keys) q = q.orderBy(k.spec.sql, k.desc ? "desc" : "asc");
      return q.limit(pageSize + 1) as unknown as typeof query;
    },
    finish(rows) {
      const more = rows.length > pageSize;
      const page = more ? rows.slice(0, pageSize) : rows;
      let nextPageToken = "";
      if (more) {
        const last = page[page.length - 1] as Record<string, unknown>;
        nextPageToken = options.tokens.encode(
          keys.map((_, i) => (last[`${KEY_PREFIX}${i}`] ?? null) as KeyValue),
          binding,
        );
      }
      for (const row of page) {
        const r = row as Record<string, unknown>;
        for (let i = 0; i < keys.length; i++) delete r[`${KEY_PREFIX}${i}`];
      }
      return { rows: page, nextPageToken };
    },
  };
}

export interface PaginateOptions extends ListOptions {
  /** Also count every row matching the filter (engine lists report totalSize). */
  readonly totalSize?: boolean;
}

/**
 * Runs one page of a list. `query` selects the rows of the collection, already narrowed to the
 * parent and to what the caller may see; it must not have its own order, limit or offset.
 */
export async function paginate<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  options: PaginateOptions,
): Promise<ListPage<O>> {
  const plan = planList(options);
  const pageQuery = plan.apply(query).execute();
  if (!options.totalSize) return plan.finish(await pageQuery);
  // biome-ignore lint/suspicious/noExplicitAny: the count adds a condition and replaces the selection: the row type no longer applies
  let counted = query as unknown as SelectQueryBuilder<any, any, any>;
  if (plan.filter.where) counted = counted.where(plan.filter.where);
  const countQuery = counted.clearSelect().select(sql<string | number>`count(*)`.as("total")).executeTakeFirstOrThrow();
  const [rows, count] = await Promise.all([pageQuery, countQuery]);
  return { ...plan.finish(rows), totalSize: Number((count as { total: string | number }).total) };
}
