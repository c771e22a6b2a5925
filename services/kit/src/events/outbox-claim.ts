// The outbox relay's claim: the next batch of rows to publish, taken only while no other relay of
// the schema holds a live lease on rows of its own, so relays never overtake each other.
import { sql } from "kysely";
import type { Database } from "../db/database.js";

export interface ClaimedRow {
  id: string;
  seq: bigint | number | string;
  subject: string;
  payload: Uint8Array;
  headers: Record<string, string> | string;
  tombstone: boolean;
}

/** Advisory lock class for the outbox claim ("AIEO"), distinct from the migrator's. */
const OUTBOX_LOCK_CLASS = 0x4149454f;

export interface OutboxClaimOptions {
  readonly database: Database;
  /** This relay's id, written on the rows it holds. */
  readonly owner: string;
  /** Milliseconds a claim is exclusive. */
  readonly lease: number;
  readonly batchSize: number;
}

/** The claim of one relay: `claim(known)` answers its next batch in `seq` order. */
export function createOutboxClaim(options: OutboxClaimOptions): (known: boolean) => Promise<ClaimedRow[]> {
  const { database, owner, lease, batchSize } = options;

  /**
   * Claims the next batch, or nothing when another relay is mid-batch. `known`: the caller knows
   * rows are waiting (it was woken after a commit), so the look for any, which is what an idle
   * poll costs, is skipped.
   */
  async function claim(known: boolean): Promise<ClaimedRow[]> {
    if (!known) {
      const pending = await sql<{
        x: number;
      }>`select 1 as x from outbox where published_at is null and failed_at is null limit 1`.execute(database.db);
      if (pending.rows.length === 0) return [];
    }
    const rows = database.kind === "pglite" ? await claimInOneStatement() : await claimAfterLock();
    return [...rows].sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1));
  }

  /**
   * PostgreSQL: the lock first, then (in statements that see every claim committed before the
   * lock was granted) the check for another relay's live lease, then the claim.
   */
  function claimAfterLock(): Promise<ClaimedRow[]> {
    return database.db.transaction().execute(async (trx) => {
      const lock = await sql<{
        ok: boolean;
      }>`select pg_try_advisory_xact_lock(${OUTBOX_LOCK_CLASS}, hashtext(current_schema())) as ok`.execute(trx);
      if (!lock.rows[0]?.ok) return [];
      const busy = await sql<{ x: number }>`
        select 1 as x from outbox
        where published_at is null and failed_at is null and locked_until > now() and locked_by <> ${owner}
        limit 1`.execute(trx);
      if (busy.rows.length > 0) return [];
      const rows = await sql<ClaimedRow>`
        update outbox set locked_until = now() + ${`${lease} milliseconds`}::interval, locked_by = ${owner}, attempts = attempts + 1
        where id in (
          select id from outbox where published_at is null and failed_at is null
          order by seq limit ${batchSize} for update skip locked)
        returning id, seq, subject, payload, headers, tombstone`.execute(trx);
      return rows.rows;
    });
  }

  /**
   * PGlite: the same checks and claim in one statement, one round trip instead of five. PGlite is
   * one session whose statements never overlap, so the statement's snapshot already holds every
   * claim another relay committed; on PostgreSQL it could predate one that commits just before
   * the lock is granted.
   */
  async function claimInOneStatement(): Promise<ClaimedRow[]> {
    const rows = await sql<ClaimedRow>`
      update outbox set locked_until = now() + ${`${lease} milliseconds`}::interval, locked_by = ${owner}, attempts = attempts + 1
      where (select pg_try_advisory_xact_lock(${OUTBOX_LOCK_CLASS}, hashtext(current_schema())))
        and not exists (
          select 1 from outbox
          where published_at is null and failed_at is null and locked_until > now() and locked_by <> ${owner})
        and id in (
          select id from outbox where published_at is null and failed_at is null
          order by seq limit ${batchSize} for update skip locked)
      returning id, seq, subject, payload, headers, tombstone`.execute(database.db);
    return rows.rows;
  }

  return claim;
}
