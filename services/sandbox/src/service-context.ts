// What every handler of the module shares: the database once started, the policy, page tokens,
// the clock, and the wrapper that turns every handler failure into a proper Connect error.
import type { DescMessage, Message } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { Kysely, Transaction } from "kysely";
import type { PageTokenCodec } from "@aiem/kit/aip";
import type { Policy } from "@aiem/kit/authz";
import type { Database } from "@aiem/kit/db";
import { ConnectError, internalError, invalidArgument, unavailable } from "@aiem/kit/errors";
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

/**
 * Wraps a handler: requests holding NUL characters in strings are refused up front (PostgreSQL
 * text cannot hold them), and anything that is not already a ConnectError is logged and answered
 * as INTERNAL without details. Requests are never logged: process requests carry environments.
 */
export function guard<I extends Message, O>(
  context: ServiceContext,
  method: string,
  schema: DescMessage,
  fn: (req: I, ctx: HandlerContext) => O,
): (req: I, ctx: HandlerContext) => O {
  return ((req: I, ctx: HandlerContext) => {
    const fail = (err: unknown): never => {
      if (err instanceof ConnectError) throw err;
      context.logger.error("sandbox call failed", { method, error: describe(err) });
      throw internalError("internal error");
    };
    try {
      rejectNul(schema, req as unknown as Record<string, unknown>, "");
      const result = fn(req, ctx) as unknown;
      if (isAsyncIterable(result)) return guardStream(result, fail) as O;
      if (result instanceof Promise) return result.catch(fail) as O;
      return result as O;
    } catch (err) {
      return fail(err);
    }
  }) as (req: I, ctx: HandlerContext) => O;
}

async function* guardStream<T>(source: AsyncIterable<T>, fail: (err: unknown) => never): AsyncGenerator<T> {
  try {
    yield* source;
  } catch (err) {
    fail(err);
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value;
}

// Only the error's class, message and stack: never an object that might hold request data.
function describe(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { name: err.name, message: err.message, stack: err.stack };
  return { message: String(err) };
}

/** Throws INVALID_ARGUMENT naming the first string field (or map key) that contains U+0000. */
export function rejectNul(schema: DescMessage, message: Record<string, unknown>, prefix: string): void {
  for (const field of schema.fields) {
    const path = prefix ? `${prefix}.${field.name}` : field.name;
    const value = message[field.localName];
    if (value === undefined || value === null) continue;
    switch (field.fieldKind) {
      case "scalar":
        if (typeof value === "string" && value.includes("\0")) throw invalidArgument(path, "must not contain NUL characters");
        break;
      case "list":
        for (const [i, item] of (value as unknown[]).entries()) {
          if (typeof item === "string" && item.includes("\0")) throw invalidArgument(`${path}[${i}]`, "must not contain NUL characters");
          if (field.listKind === "message") rejectNul(field.message, item as Record<string, unknown>, `${path}[${i}]`);
        }
        break;
      case "map":
        for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
          if (key.includes("\0") || (typeof item === "string" && item.includes("\0"))) {
            throw invalidArgument(path, "must not contain NUL characters");
          }
          if (field.mapKind === "message") rejectNul(field.message, item as Record<string, unknown>, `${path}[${JSON.stringify(key)}]`);
        }
        break;
      case "message":
        rejectNul(field.message, value as Record<string, unknown>, path);
        break;
      case "enum":
        break;
    }
  }
}
