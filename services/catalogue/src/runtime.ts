// What every handler of the module shares: the database once started, the policy, page tokens,
// the clock, and the wrapper that turns every handler failure into a proper Connect error.
import { create, type DescMessage, type Message } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { PageTokenCodec } from "@aiem/kit/aip";
import type { Policy } from "@aiem/kit/authz";
import type { Database } from "@aiem/kit/db";
import { ConnectError, internalError, invalidArgument, unavailable } from "@aiem/kit/errors";
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

/**
 * Wraps a handler: requests holding NUL characters are refused up front (PostgreSQL text cannot
 * hold them, and nothing legitimate needs them), and anything that is not already a ConnectError
 * is logged and answered as INTERNAL without details, so no SQL or stack trace reaches a client.
 */
export function guard<I extends Message, O>(
  runtime: Runtime,
  method: string,
  schema: DescMessage,
  fn: (req: I, ctx: HandlerContext) => Promise<O>,
): (req: I, ctx: HandlerContext) => Promise<O> {
  return async (req, ctx) => {
    try {
      rejectNul(schema, req as unknown as Record<string, unknown>, "");
      return await fn(req, ctx);
    } catch (err) {
      if (err instanceof ConnectError) throw err;
      runtime.logger.error("catalogue call failed", { method, error: err });
      throw internalError("internal error", err);
    }
  };
}

/** Throws INVALID_ARGUMENT naming the first string field (or map key) that contains U+0000. */
export function rejectNul(schema: DescMessage, message: Record<string, unknown>, prefix: string): void {
  for (const field of schema.fields) {
    const path = prefix ? `${prefix}.${field.name}` : field.name;
    const value = message[field.localName];
    if (value === undefined || value === null) continue;
    const bad = () => invalidArgument(path, "must not contain NUL characters");
    switch (field.fieldKind) {
      case "scalar":
        if (typeof value === "string" && value.includes("\0")) throw bad();
        break;
      case "list":
        for (const [i, item] of (value as unknown[]).entries()) {
          if (typeof item === "string" && item.includes("\0")) throw invalidArgument(`${path}[${i}]`, "must not contain NUL characters");
          if (field.listKind === "message") rejectNul(field.message, item as Record<string, unknown>, `${path}[${i}]`);
        }
        break;
      case "map":
        for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
          if (key.includes("\0") || (typeof item === "string" && item.includes("\0"))) throw bad();
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

/** An empty message of `schema` when a request leaves a message field unset. */
export function orEmpty<T extends Message>(schema: DescMessage, value: T | undefined): T {
  return value ?? (create(schema) as T);
}
