/**
 * Idempotent event handling, keyed by event id.
 *
 * Delivery is at-least-once (redelivery after a failure, a lost acknowledgement, the outbox relay
 * publishing again after a crash), so consumers make their effect once per event id:
 *
 * - `createIdempotentHandler` (services with a database): records (consumer, event id) in the
 *   consumer's own `processed_events` table in the same transaction as the handler's writes. The
 *   effect and the record commit together, so a redelivery finds the record and does nothing; a
 *   concurrent duplicate waits on the primary key and then skips.
 * - `createMemoryIdempotentHandler` (in-process bus, effects that live in memory such as read
 *   models): a bounded LRU set of ids, lost on restart together with the memory it protects.
 */
import { sql, type Kysely, type Migration, type Transaction } from "kysely";
import type { AnyDatabase } from "../db/index.js";
import type { Database } from "../db/database.js";
import type { EventHandler, EventMessage } from "./event-bus.js";

export const PROCESSED_EVENTS_TABLE = "processed_events";

export interface ProcessedEventsTable {
  consumer: string;
  event_id: string;
  processed_at: Date;
}

/** Creates `processed_events`; add it to the consuming service's migrations under its own name. */
export const processedEventsMigration: Migration = {
  async up(db: Kysely<AnyDatabase>) {
    await db.schema
      .createTable(PROCESSED_EVENTS_TABLE)
      .addColumn("consumer", "text", (c) => c.notNull())
      .addColumn("event_id", "text", (c) => c.notNull())
      .addColumn("processed_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addPrimaryKeyConstraint("processed_events_pkey", ["consumer", "event_id"])
      .execute();
    await db.schema
      .createIndex("processed_events_processed_at_idx")
      .on(PROCESSED_EVENTS_TABLE)
      .column("processed_at")
      .execute();
  },
  async down(db: Kysely<AnyDatabase>) {
    await db.schema.dropTable(PROCESSED_EVENTS_TABLE).execute();
  },
};

export interface IdempotentHandlerOptions<DB> {
  database: Database<DB>;
  /** Consumer name: the same event may be handled once by each consumer. */
  consumer: string;
  /**
   * How long (ms) processed ids are remembered; must exceed how long a duplicate can still arrive
   * (the events stream keeps messages 7 days by default). Default 8 days.
   */
  retention?: number;
}

export type TransactionalEventHandler<DB> = (msg: EventMessage, trx: Transaction<DB>) => Promise<void>;

export function createIdempotentHandler<DB>(
  options: IdempotentHandlerOptions<DB>,
  handler: TransactionalEventHandler<DB>,
): EventHandler {
  const { database, consumer } = options;
  const retention = options.retention ?? 8 * 24 * 3600_000;
  let lastPrune = 0;
  return async (msg) => {
    if (!msg.id) throw new Error(`event on ${msg.subject} has no id`);
    await database.db.transaction().execute(async (trx) => {
      const claimed = await sql<{ event_id: string }>`
        insert into processed_events (consumer, event_id) values (${consumer}, ${msg.id})
        on conflict do nothing returning event_id`.execute(trx);
      if (claimed.rows.length === 0) return;
      await handler(msg, trx);
    });
    // Housekeeping rides along with normal traffic, at most hourly, outside the handler's transaction.
    const now = Date.now();
    if (now - lastPrune > 3600_000) {
      lastPrune = now;
      await pruneProcessedEvents(database, { consumer, olderThan: retention }).catch(() => {});
    }
  };
}

export async function pruneProcessedEvents(
  database: Database,
  options: { consumer?: string; olderThan: number },
): Promise<number> {
  const cutoff = new Date(Date.now() - options.olderThan);
  const result = await sql`
    delete from processed_events
    where processed_at < ${cutoff} ${options.consumer === undefined ? sql`` : sql`and consumer = ${options.consumer}`}`.execute(
    database.db,
  );
  return Number(result.numAffectedRows ?? 0n);
}

export interface MemoryIdempotentOptions {
  /** Ids remembered (least recently seen forgotten first). Default 100 000. */
  capacity?: number;
}

export function createMemoryIdempotentHandler(
  handler: EventHandler,
  options: MemoryIdempotentOptions = {},
): EventHandler {
  const capacity = options.capacity ?? 100_000;
  const done = new Set<string>();
  const running = new Map<string, Promise<void>>();
  return async (msg) => {
    if (!msg.id) throw new Error(`event on ${msg.subject} has no id`);
    // A concurrent delivery of the same id: wait for it, and only run if it failed.
    for (let other = running.get(msg.id); other; other = running.get(msg.id)) await other.catch(() => {});
    if (done.has(msg.id)) {
      done.delete(msg.id);
      done.add(msg.id);
      return;
    }
    const attempt = handler(msg);
    running.set(msg.id, attempt);
    try {
      await attempt;
      done.add(msg.id);
      if (done.size > capacity) done.delete(done.values().next().value!);
    } finally {
      running.delete(msg.id);
    }
  };
}
