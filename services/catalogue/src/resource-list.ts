import type { SelectQueryBuilder } from "kysely";
import { paginate, type PaginateOptions } from "@aiem/kit/aip";
import type { KindScope } from "./kind-scope.js";
import { decode, nameTiebreaker, present } from "./store.js";

/**
 * One page of a kind's resources as clients see them, under the kind's plural field. `query`
 * selects the `resource` column of the rows the caller may see.
 */
export async function listPage<DB, TB extends keyof DB>(
  { context, d, fieldTable }: KindScope,
  query: SelectQueryBuilder<DB, TB, { resource: Uint8Array }>,
  request: Omit<PaginateOptions, "table" | "tiebreaker" | "tokens">,
) {
  const page = await paginate(query, {
    ...request,
    table: fieldTable,
    tiebreaker: nameTiebreaker,
    tokens: context.tokens(),
  });
  return {
    [d.pluralLocal]: page.rows.map((row) => present(d, decode(d, row.resource))),
    nextPageToken: page.nextPageToken,
  };
}
