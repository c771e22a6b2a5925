// What every handler of the module shares: the database once started, the policy, page tokens,
// the clock, and the wrapper that turns every handler failure into a proper Connect error.
import type { DescMessage, Message } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { Kysely, Transaction } from "kysely";
import type { PageTokenCodec } from "@aiem/kit/aip";
import type { Policy } from "@aiem/kit/authz";
import type { Database } from "@aiem/kit/db";
import { unavailable } from "@aiem/kit/errors";
import { guardHandler } from "@aiem/kit/server";
import type { Logger } from "@aiem/kit/logger";

export type Executor = Kysely<any> | Transaction<any>;

export interface ServiceContext {
  readonly policy: Policy;
  readonly logger: Logger;
  /** The started database; UNAVAILABLE before start() finished or after stop(). */
  database(): Database;
  tokens(): PageTokenCodec;
  now(): Date;
  /** Runs `fn` in a transaction, then lets the outbox relay publish what it enqueued at once. */
  write<T>(fn: (trx: Transaction<any>) => Promise<T>): Promise<T>;
}

export interface ContextState {
  database?: Database;
  tokens?: PageTokenCodec;
  wake?: () => void;
}

export function createServiceContext(policy: Policy, logger: Logger, state: ContextState): ServiceContext {
  const database = () => {
    if (!state.database) throw unavailable("the sandbox service is not running; retry shortly");
    return state.database;
  };
  return {
    policy,
    logger,
    database,
    tokens() {
      if (!state.tokens) throw unavailable("the sandbox service is not running; retry shortly");
      return state.tokens;
    },
    now: () => new Date(),
    async write(fn) {
      const result = await database().db.transaction().execute(fn);
      state.wake?.();
      return result;
    },
  };
}

/** The kit's handler guard, logging as the sandbox service (see guardHandler). */
export function guard<I extends Message, O>(
  context: ServiceContext,
  method: string,
  schema: DescMessage,
  fn: (req: I, ctx: HandlerContext) => O,
): (req: I, ctx: HandlerContext) => O {
  return guardHandler(context.logger, method, schema, fn);
}
