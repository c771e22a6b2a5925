// What the handlers of every service share while the service runs: the policy and logger, the
// started database and page-token codec, the clock and a writer that lets background work
// (the outbox relay, a reconciler) know at once that something was committed.
import type { Kysely, Transaction } from "kysely";
import type { AnyDatabase } from "../db/index.js";
import type { PageTokenCodec } from "../aip/page-token.js";
import type { Policy } from "../authz/policy.js";
import type { Database } from "../db/database.js";
import { unavailable } from "../errors.js";
import type { Logger } from "../logger.js";

/** Filled in by the module's start() and cleared by its stop(). */
export interface ServiceCoreState {
  database?: Database;
  tokens?: PageTokenCodec;
  /**
   * Called after each committed write(); the write answers once what it returns settles (the
   * catalogue's: once its events are published, so readers can catch up with them).
   */
  afterWrite?: () => void | Promise<void>;
}

export interface ServiceCore {
  readonly policy: Policy;
  readonly logger: Logger;
  /** The started database; UNAVAILABLE before start() finished or after stop(). */
  database(): Database;
  tokens(): PageTokenCodec;
  now(): Date;
  /** Runs `fn` in a transaction, then calls (and awaits) `afterWrite`. */
  write<T>(fn: (trx: Transaction<AnyDatabase>) => Promise<T>): Promise<T>;
  /**
   * Runs `fn`, which makes one statement, outside a transaction (a statement is atomic on its
   * own), then calls `afterWrite`: two round trips fewer than write(), begin and commit.
   */
  writeStatement<T>(fn: (db: Kysely<AnyDatabase>) => Promise<T>): Promise<T>;
}

export function createServiceCore(options: {
  /** Names the service in the UNAVAILABLE message: "the <label> is not running; retry shortly". */
  label: string;
  policy: Policy;
  logger: Logger;
  state: ServiceCoreState;
  now?: () => Date;
}): ServiceCore {
  const { state } = options;
  const notRunning = () => unavailable(`the ${options.label} is not running; retry shortly`);
  const database = () => {
    if (!state.database) throw notRunning();
    return state.database;
  };
  return {
    policy: options.policy,
    logger: options.logger,
    database,
    tokens() {
      if (!state.tokens) throw notRunning();
      return state.tokens;
    },
    now: options.now ?? (() => new Date()),
    async write(fn) {
      const result = await database().db.transaction().execute(fn);
      await state.afterWrite?.();
      return result;
    },
    async writeStatement(fn) {
      const result = await fn(database().db);
      await state.afterWrite?.();
      return result;
    },
  };
}

/**
 * A module's start(): concurrent callers share one attempt; a failed attempt is forgotten so the
 * host can call start() again; reset() (from stop()) allows a fresh start.
 */
export function createStartOnce(start: () => Promise<void>): { start(): Promise<void>; reset(): void } {
  let starting: Promise<void> | undefined;
  return {
    start() {
      starting ??= start().catch((err: unknown) => {
        starting = undefined;
        throw err;
      });
      return starting;
    },
    reset() {
      starting = undefined;
    },
  };
}
