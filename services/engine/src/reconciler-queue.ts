// The reconciler's work queue in the engines table: a row is due when `next_reconcile_at` has
// passed, and a claim takes due rows with FOR UPDATE SKIP LOCKED and marks them with a lease.
import { sql } from "kysely";
import type { Database } from "@aiem/kit/db";
import { S } from "./kinds.js";
import { ENGINES, type EngineRow } from "./store.js";

export interface QueueScope {
  readonly database: Database;
  /** The runtime's placement: only its engines (and unplaced ones) are claimed. */
  readonly placement: string;
  /** This reconciler's lease owner. */
  readonly owner: string;
  readonly leaseMs: number;
}

export async function claimDue(scope: QueueScope, limit: number): Promise<EngineRow[]> {
  const result = await sql<EngineRow>`
    update engines
       set lease_owner = ${scope.owner},
           lease_until = now() + make_interval(secs => ${scope.leaseMs / 1000}),
           placement = coalesce(placement, ${scope.placement})
     where uid in (
       select uid from engines
        where next_reconcile_at <= now()
          and (placement is null or placement = ${scope.placement})
          and (lease_until is null or lease_until < now())
        order by next_reconcile_at
        limit ${limit}
        for update skip locked)
    returning *`.execute(scope.database.db);
  return result.rows;
}

export async function msUntilNextDue(scope: QueueScope): Promise<number> {
  const r = await sql<{ ms: number | string | null }>`
    select extract(epoch from (min(next_reconcile_at) - now())) * 1000 as ms
      from engines
     where next_reconcile_at is not null
       and (placement is null or placement = ${scope.placement})
       and (lease_until is null or lease_until < now())`.execute(scope.database.db);
  const ms = r.rows[0]?.ms;
  return ms === null || ms === undefined ? Infinity : Number(ms);
}

export async function makeDueNow(scope: QueueScope, uids: readonly string[]): Promise<void> {
  await scope.database.db
    .updateTable(ENGINES)
    .set({ next_reconcile_at: sql`now()` })
    .where("uid", "in", uids)
    .execute();
}

/** Releases a failed step's claim with a back-off, so another attempt (or replica) can try. */
export async function retryLater(scope: QueueScope, uid: string, at: Date): Promise<void> {
  await scope.database.db
    .updateTable(ENGINES)
    .set({ lease_owner: null, lease_until: null, next_reconcile_at: at })
    .where("uid", "=", uid)
    .where("lease_owner", "=", scope.owner)
    .execute();
}

/**
 * Readies the queue when a reconciler starts. Leases of an earlier life of this runtime instance
 * are void unless the placement is shared (then they may be another live replica's and run out by
 * themselves); everything not settled, and every engine that should run, is looked at again.
 */
export async function resumeQueue(scope: QueueScope, shared: boolean): Promise<void> {
  if (!shared) {
    await scope.database.db
      .updateTable(ENGINES)
      .set({ lease_owner: null, lease_until: null })
      .where("placement", "=", scope.placement)
      .where("lease_owner", "is not", null)
      .execute();
  }
  await sql`
    update engines set next_reconcile_at = now()
     where (placement is null or placement = ${scope.placement})
       and (reconciling or storage_resizing or state = ${S.RUNNING})`.execute(scope.database.db);
}
