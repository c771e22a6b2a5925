// The outbox relay's rounds: claim a batch, publish it in order, record the outcome. One relay's
// rounds run one at a time, so a flush and the loop never publish the same batch.
import { sql } from "kysely";
import type { Database } from "../db/database.js";
import { sleep } from "./event-bus.js";
import type { ClaimedRow } from "./outbox-claim.js";
import { publishClaimed, type PublishClaimedOptions } from "./outbox-publish.js";

/** `tally.claimed` receives the rows the round claimed. Resolves with rows published; throws when the bus fails. */
export type SerialRound = (known?: boolean, tally?: { claimed: number }) => Promise<number>;

export function createSerialRound(
  publish: PublishClaimedOptions,
  claim: (known: boolean) => Promise<ClaimedRow[]>,
): SerialRound {
  async function round(known: boolean, tally?: { claimed: number }): Promise<number> {
    const rows = await claim(known);
    if (tally) tally.claimed = rows.length;
    if (rows.length === 0) return 0;
    return publishClaimed(publish, rows);
  }
  let lastRound: Promise<unknown> = Promise.resolve();
  return (known = false, tally) => {
    const next = lastRound.then(
      () => round(known, tally),
      () => round(known, tally),
    );
    // The chain only orders rounds; each caller sees its own round's failure through `next`.
    lastRound = next.catch(() => {});
    return next;
  };
}

/** The newest row waiting to be published, if any. */
async function newestPending(database: Database): Promise<bigint | undefined> {
  const r = await sql<{
    seq: string | null;
  }>`select max(seq)::text as seq from outbox where published_at is null and failed_at is null`.execute(database.db);
  const seq = r.rows[0]?.seq;
  return seq == null ? undefined : BigInt(seq);
}

/**
 * Publishes everything pending now, in rounds, and returns once none of it is left, waiting for a
 * round this relay or another one has in flight. Resolves with the number published.
 */
export async function flushOutbox(database: Database, batchSize: number, serialRound: SerialRound): Promise<number> {
  const target = await newestPending(database);
  let total = 0;
  if (target === undefined) return total;
  for (;;) {
    const n = await serialRound();
    total += n;
    if (n >= batchSize) continue;
    const left = await sql<{ x: number }>`
      select 1 as x from outbox where published_at is null and failed_at is null and seq <= ${target.toString()} limit 1`.execute(
      database.db,
    );
    if (left.rows.length === 0) return total;
    // Another relay holds the claim: wait for its round (or its lease) to end.
    await sleep(10);
  }
}
