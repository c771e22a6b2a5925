// The outbox relay's loop: rounds while rows wait, a poll when idle, a wake to go at once, backoff
// while the bus fails, and now and then a clean-up of published rows.
import { sql } from "kysely";
import type { Database } from "../db/database.js";
import { backoffDelay, errorFields, sleep, type EventBusLogger } from "./event-bus.js";
import type { SerialRound } from "./outbox-rounds.js";
import type { OutboxWaker } from "./outbox-waker.js";

export interface RelayLoopOptions {
  readonly database: Database;
  readonly serialRound: SerialRound;
  readonly waker: OutboxWaker;
  readonly logger: EventBusLogger;
  readonly pollInterval: number;
  readonly batchSize: number;
  readonly backoff: readonly number[];
  /** Published rows older than this (ms) are deleted, every `cleanupInterval` ms. */
  readonly retention: number;
  readonly cleanupInterval: number;
}

/** Deletes published rows past their retention, at most once per interval. */
function createCleanup(database: Database, retention: number, interval: number): () => Promise<void> {
  let lastCleanup = 0;
  return async () => {
    const now = Date.now();
    if (now - lastCleanup < interval) return;
    lastCleanup = now;
    await sql`delete from outbox where published_at < ${new Date(now - retention)}`.execute(database.db);
  };
}

export async function runRelayLoop(options: RelayLoopOptions, signal: AbortSignal): Promise<void> {
  const { serialRound, waker, logger } = options;
  const cleanup = createCleanup(options.database, options.retention, options.cleanupInterval);
  let failures = 0;
  let woken = false;
  while (!signal.aborted) {
    let published = 0;
    try {
      published = await serialRound(woken);
      woken = false;
      if (failures > 0) logger.warn("outbox relay publishing again", { after: failures });
      failures = 0;
      await cleanup();
    } catch (err) {
      failures++;
      if (failures === 1 || failures % 20 === 0)
        logger.warn("outbox relay cannot publish; retrying", { failures, ...errorFields(err) });
      await sleep(backoffDelay(options.backoff, failures), signal);
      continue;
    }
    // A full batch means more may be waiting: go again at once.
    if (published >= options.batchSize) continue;
    // Woken during the round: the new rows may have committed after our claim, so look again.
    if (waker.take()) {
      woken = true;
      continue;
    }
    await sleep(options.pollInterval, AbortSignal.any([signal, waker.signal]));
    // A wake that ended the sleep is answered by the round that follows (its claim comes after
    // the commit that woke it): taken now, or the same wake would call for a second round.
    woken = waker.take();
  }
}
