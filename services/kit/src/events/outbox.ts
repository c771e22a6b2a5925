/**
 * Transactional outbox: a service writes its events into its own `outbox` table in the same
 * transaction as the change they describe, and a relay publishes them to the bus afterwards, with
 * the event id as the de-duplication id. Nothing is lost while the bus is down (rows wait), and a
 * row published twice (relay crash between publish and mark) is dropped by the bus's duplicate
 * window or, later, by idempotent consumers.
 *
 * Ordering: rows are published in `seq` order (insertion order, not created_at, which is the same
 * for every row of one transaction). Only one relay per schema works at a time: a claim is made
 * under a transaction-scoped advisory lock and is refused while another relay holds an unexpired
 * lease, so replicas cannot overtake each other. The publish itself happens outside any
 * transaction (on PGlite a transaction would block every other query of the process). The claim
 * is in outbox-claim.ts, the publishing of a claimed batch in outbox-publish.ts, the rounds and
 * flush in outbox-rounds.ts, the loop in outbox-relay-loop.ts.
 */
import { randomUUID } from "node:crypto";
import type { AnyDatabase } from "../db/index.js";
import { sql, type Generated, type Kysely, type Migration, type RawBuilder, type Transaction } from "kysely";
import type { Database } from "../db/database.js";
import {
  DEFAULT_BACKOFF,
  InvalidEventError,
  SUBJECT_ROOT,
  checkUserHeaders,
  consoleLogger,
  isLiteralSubject,
  type EventBus,
  type EventBusLogger,
} from "./event-bus.js";
import { traceContextRecord } from "../observability/trace-context.js";
import { createOutboxClaim } from "./outbox-claim.js";
import { runRelayLoop, type RelayLoopOptions } from "./outbox-relay-loop.js";
import { createSerialRound, flushOutbox } from "./outbox-rounds.js";
import { createOutboxWaker } from "./outbox-waker.js";

export const OUTBOX_TABLE = "outbox";

export interface OutboxTable {
  id: string;
  seq: Generated<bigint>;
  subject: string;
  payload: Uint8Array;
  headers: Generated<Record<string, string>>;
  tombstone: Generated<boolean>;
  created_at: Generated<Date>;
  published_at: Date | null;
  locked_until: Date | null;
  locked_by: string | null;
  attempts: Generated<number>;
  last_error: string | null;
  failed_at: Date | null;
}

/** Creates `outbox`; add it to the producing service's migrations under its own name. */
export const outboxMigration: Migration = {
  async up(db: Kysely<AnyDatabase>) {
    await db.schema
      .createTable(OUTBOX_TABLE)
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("seq", "bigserial", (c) => c.notNull().unique())
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("payload", "bytea", (c) => c.notNull())
      .addColumn("headers", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .addColumn("tombstone", "boolean", (c) => c.notNull().defaultTo(false))
      .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn("published_at", "timestamptz")
      .addColumn("locked_until", "timestamptz")
      .addColumn("locked_by", "text")
      .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("last_error", "text")
      .addColumn("failed_at", "timestamptz")
      .execute();
    // The relay's working set: small, however large the published history grows.
    await sql`create index outbox_unpublished_idx on outbox (seq) where published_at is null and failed_at is null`.execute(
      db,
    );
    await sql`create index outbox_published_at_idx on outbox (published_at) where published_at is not null`.execute(db);
  },
  async down(db: Kysely<AnyDatabase>) {
    await db.schema.dropTable(OUTBOX_TABLE).execute();
  },
};

export interface OutboxMessage {
  /** Event id; generated when absent. Use the id of the protobuf Event you encoded. */
  id?: string;
  subject: string;
  data: Uint8Array;
  headers?: Record<string, string>;
  tombstone?: boolean;
}

/**
 * Writes an event into the outbox. Call it with the transaction that makes the change, so both
 * commit or neither does. Returns the event id.
 */
export async function enqueue(
  trx: Transaction<AnyDatabase> | Kysely<AnyDatabase>,
  message: OutboxMessage,
): Promise<string> {
  const id = checkedId(message);
  await sql`
    insert into outbox (id, subject, payload, headers, tombstone)
    values (${id}, ${message.subject}, ${Buffer.from(message.data)}, ${rowHeaders(message)}::jsonb, ${message.tombstone === true})`.execute(
    trx,
  );
  return id;
}

/**
 * The outbox insert of `messages` as a data-modifying WITH query that adds the rows only when the
 * WITH query named `guard`, earlier in the same statement, returned a row. A change and its
 * events then commit as one statement: one round trip to the database where a transaction takes
 * four. Several messages are one insert, in the order given (the outbox's order), since WITH
 * queries of one statement run in no defined order.
 * `sql\`with changed as (${update}), event as (${enqueueWhen("changed", message)}) select * from changed\``.
 */
export function enqueueWhen(guard: string, ...messages: OutboxMessage[]): RawBuilder<unknown> {
  const rows = messages.map((message, i) => {
    const id = checkedId(message);
    // Typed here: the columns of a VALUES list of parameters would otherwise be text.
    return sql`(${i}::int, ${id}::text, ${message.subject}::text, ${Buffer.from(message.data)}::bytea, ${rowHeaders(message)}::jsonb, ${message.tombstone === true}::boolean)`;
  });
  return sql`
    insert into outbox (id, subject, payload, headers, tombstone)
    select id, subject, payload, headers, tombstone
    from (values ${sql.join(rows)}) as given (n, id, subject, payload, headers, tombstone)
    where exists (select 1 from ${sql.id(guard)})
    order by n`;
}

/**
 * The row's headers: the message's own and the trace context of the code that writes it (the
 * request whose transaction this is), which the relay's publish then continues.
 */
function rowHeaders(message: OutboxMessage): string {
  return JSON.stringify({ ...traceContextRecord(), ...message.headers });
}

function checkedId(message: OutboxMessage): string {
  if (!isLiteralSubject(message.subject) || !message.subject.startsWith(`${SUBJECT_ROOT}.`)) {
    throw new InvalidEventError(
      `outbox subject ${JSON.stringify(message.subject)} must be a literal ${SUBJECT_ROOT}.* subject`,
    );
  }
  checkUserHeaders(message.headers);
  return message.id ?? randomUUID();
}

/** Rows not yet published (failed rows excluded). */
export async function outboxBacklog(database: Database): Promise<number> {
  const r = await sql<{
    n: bigint | number;
  }>`select count(*) as n from outbox where published_at is null and failed_at is null`.execute(database.db);
  return Number(r.rows[0]?.n ?? 0);
}

export interface OutboxRelayOptions {
  database: Database;
  bus: Pick<EventBus, "publish">;
  /** Milliseconds between checks for new rows when idle. Default 250. */
  pollInterval?: number;
  /** Rows claimed per round. Default 100. */
  batchSize?: number;
  /** Milliseconds a claim is exclusive; after a crash another relay takes over when it expires. Default 30 000. */
  lease?: number;
  /** Delays (ms) between attempts while the bus is failing; the last repeats. */
  backoff?: readonly number[];
  /** Published rows older than this (ms) are deleted. Default 24 h. */
  retention?: number;
  /** Milliseconds between clean-ups. Default 10 minutes. */
  cleanupInterval?: number;
  /**
   * Milliseconds a wake() waits before the round it asks for. Default: 0 on PostgreSQL;
   * PGLITE_WAKE_DELAY on PGlite, whose statements run on the process's own thread.
   */
  wakeDelay?: number;
  logger?: EventBusLogger;
}

export interface OutboxRelay {
  start(): void;
  /** Stops after the current round. */
  stop(): Promise<void>;
  /** Checks for rows now instead of at the next poll (call after committing a transaction that enqueued). */
  wake(): void;
  /**
   * Publishes everything pending now, in rounds, and returns once none of it is left, waiting for a
   * round this relay or another one has in flight. Resolves with the number this call published;
   * throws if the bus fails.
   */
  flush(): Promise<number>;
  /**
   * Publishes what the caller has committed, for a write that answers only once its events are
   * out. Cheaper than flush() when this relay holds the claim: one round, no look for what is
   * pending before or left after. Throws if the bus fails.
   */
  publishCommitted(): Promise<void>;
}

/**
 * PGlite runs each statement on the event loop, so a round (a claim and a mark, ~1 ms each on
 * this machine) started at a commit holds up the answer of the call that committed and the calls
 * behind it. Waiting this long lets that answer go out first, and the commits that come close
 * together (a process's start and its end) share one round.
 */
const PGLITE_WAKE_DELAY = 10;

export function createOutboxRelay(options: OutboxRelayOptions): OutboxRelay {
  const { database, bus } = options;
  const batchSize = options.batchSize ?? 100;
  const logger = options.logger ?? consoleLogger;
  const owner = randomUUID();
  const claim = createOutboxClaim({ database, owner, lease: options.lease ?? 30_000, batchSize });
  const serialRound = createSerialRound({ database, bus, logger, owner }, claim);
  const waker = createOutboxWaker(options.wakeDelay ?? (database.kind === "pglite" ? PGLITE_WAKE_DELAY : 0));
  const loopOptions: RelayLoopOptions = {
    database,
    serialRound,
    waker,
    logger,
    pollInterval: options.pollInterval ?? 250,
    batchSize,
    backoff: options.backoff ?? DEFAULT_BACKOFF,
    retention: options.retention ?? 24 * 3600_000,
    cleanupInterval: options.cleanupInterval ?? 10 * 60_000,
  };
  let running: Promise<void> | undefined;
  let stopper = new AbortController();
  return {
    start() {
      if (running) return;
      stopper = new AbortController();
      running = runRelayLoop(loopOptions, stopper.signal);
    },
    async stop() {
      waker.cancel();
      stopper.abort();
      await running;
      running = undefined;
    },
    wake: () => waker.wake(),
    async publishCommitted() {
      // The round's claim comes after the caller's commit (rounds run one at a time, and this one
      // is queued now), so it sees the caller's rows unless another relay holds them. A claim
      // short of a full batch took every row waiting; all of them done, so are the caller's.
      const tally = { claimed: 0 };
      await serialRound(true, tally);
      if (tally.claimed > 0 && tally.claimed < batchSize) return;
      // Nothing claimed (published already, or another relay's claim) or a full batch: the sure way.
      await flushOutbox(database, batchSize, serialRound);
    },
    flush: () => flushOutbox(database, batchSize, serialRound),
  };
}
