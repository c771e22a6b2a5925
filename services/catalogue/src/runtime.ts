// What every handler of the module shares: the database once started, the policy, page tokens,
// the clock, and the wrapper that turns every handler failure into a proper Connect error.
import { create, type DescMessage, type Message } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { PageTokenCodec } from "@aiem/kit/aip";
import type { Policy } from "@aiem/kit/authz";
import type { Database } from "@aiem/kit/db";
import { unavailable } from "@aiem/kit/errors";
import { guardHandler } from "@aiem/kit/server";
import type { Logger } from "@aiem/kit/logger";
import type { Executor } from "./store.js";

export interface Runtime {
  readonly policy: Policy;
  readonly logger: Logger;
  /** The started database; UNAVAILABLE before start() finished or after stop(). */
  database(): Database;
  tokens(): PageTokenCodec;
  now(): Date;
  /** Runs `fn` in a transaction, then lets the outbox relay publish what it enqueued at once. */
  write<T>(fn: (trx: Executor) => Promise<T>): Promise<T>;
}

export interface RuntimeState {
  database?: Database;
  tokens?: PageTokenCodec;
  wake?: () => void;
}

export function createRuntime(policy: Policy, logger: Logger, state: RuntimeState, now: () => Date = () => new Date()): Runtime {
  const database = () => {
    if (!state.database) throw unavailable("the catalogue is not running; retry shortly");
    return state.database;
  };
  return {
    policy,
    logger,
    database,
    tokens() {
      if (!state.tokens) throw unavailable("the catalogue is not running; retry shortly");
      return state.tokens;
    },
    now,
    async write(fn) {
      const result = await database().db.transaction().execute(fn);
      state.wake?.();
      return result;
    },
  };
}

/** The kit's handler guard, logging as the catalogue (see guardHandler). */
export function guard<I extends Message, O>(
  runtime: Runtime,
  method: string,
  schema: DescMessage,
  fn: (req: I, ctx: HandlerContext) => Promise<O>,
): (req: I, ctx: HandlerContext) => Promise<O> {
  return guardHandler(runtime.logger, method, schema, fn);
}

/** An empty message of `schema` when a request leaves a message field unset. */
export function orEmpty<T extends Message>(schema: DescMessage, value: T | undefined): T {
  return value ?? (create(schema) as T);
}
