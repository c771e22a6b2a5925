// What every handler of the module shares: the started database, read model and runtime, the
// policy, page tokens, the clock, the writer that wakes the outbox relay and the reconciler, and
// the wrapper that turns every handler failure into a proper Connect error.
import type { DescMessage, Message } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { PageTokenCodec } from "@aiem/kit/aip";
import type { Policy } from "@aiem/kit/authz";
import type { Database } from "@aiem/kit/db";
import { ConnectError, internalError, invalidArgument, unavailable } from "@aiem/kit/errors";
import type { Logger } from "@aiem/kit/logger";
import type { CatalogueReadModel } from "@aiem/kit/catalogue-view";
import type { ActivityTracker } from "./activity.js";
import type { EngineSettings } from "./config.js";
import type { EngineRuntime } from "./runtime/runtime.js";
import type { Executor, PresentContext } from "./store.js";

export interface ServiceState {
  database?: Database;
  tokens?: PageTokenCodec;
  catalogue?: CatalogueReadModel;
  runtime?: EngineRuntime;
  /** Called after a committed write: wakes the outbox relay and the reconciler. */
  afterWrite?: () => void;
}

export interface ServiceContext {
  readonly policy: Policy;
  readonly logger: Logger;
  readonly settings: EngineSettings;
  readonly activity: ActivityTracker;
  database(): Database;
  tokens(): PageTokenCodec;
  catalogue(): CatalogueReadModel;
  runtime(): EngineRuntime;
  now(): Date;
  publicUrl(): string;
  presentContext(): PresentContext;
  /** Runs `fn` in a transaction, then wakes the relay and the reconciler. */
  write<T>(fn: (trx: Executor) => Promise<T>): Promise<T>;
}

export function createServiceContext(options: {
  policy: Policy;
  logger: Logger;
  settings: EngineSettings;
  activity: ActivityTracker;
  state: ServiceState;
  defaultPublicUrl: string;
}): ServiceContext {
  const { state } = options;
  const notRunning = () => unavailable("the engine service is not running; retry shortly");
  const publicUrl = () => {
    const p = options.settings.publicUrl;
    const url = typeof p === "function" ? p() : p;
    return (url ?? options.defaultPublicUrl).replace(/\/+$/, "");
  };
  const ctx: ServiceContext = {
    policy: options.policy,
    logger: options.logger,
    settings: options.settings,
    activity: options.activity,
    database() {
      if (!state.database) throw notRunning();
      return state.database;
    },
    tokens() {
      if (!state.tokens) throw notRunning();
      return state.tokens;
    },
    catalogue() {
      if (!state.catalogue) throw notRunning();
      return state.catalogue;
    },
    runtime() {
      if (!state.runtime) throw notRunning();
      return state.runtime;
    },
    now: () => new Date(),
    publicUrl,
    presentContext: () => ({ now: new Date(), publicUrl: publicUrl(), catalogue: state.catalogue, pendingActivity: options.activity.latest }),
    async write(fn) {
      const result = await ctx.database().db.transaction().execute(fn);
      state.afterWrite?.();
      return result;
    },
  };
  return ctx;
}

/**
 * Wraps a handler: requests holding NUL characters are refused up front (PostgreSQL text cannot
 * hold them), and anything that is not already a ConnectError is logged and answered as INTERNAL
 * without details, so no SQL or stack trace reaches a client.
 */
export function guard<I extends Message, O>(
  ctx: ServiceContext,
  method: string,
  schema: DescMessage,
  fn: (req: I, hctx: HandlerContext) => Promise<O>,
): (req: I, hctx: HandlerContext) => Promise<O> {
  return async (req, hctx) => {
    try {
      rejectNul(schema, req as unknown as Record<string, unknown>, "");
      return await fn(req, hctx);
    } catch (err) {
      if (err instanceof ConnectError) throw err;
      ctx.logger.error("engine call failed", { method, error: err });
      throw internalError("internal error", err);
    }
  };
}

function rejectNul(schema: DescMessage, message: Record<string, unknown>, prefix: string): void {
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
        for (const item of value as unknown[]) {
          if (typeof item === "string" && item.includes("\0")) throw bad();
          if (field.listKind === "message") rejectNul(field.message, item as Record<string, unknown>, path);
        }
        break;
      case "map":
        for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
          if (key.includes("\0") || (typeof item === "string" && item.includes("\0"))) throw bad();
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
