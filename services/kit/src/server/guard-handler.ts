import type { DescMessage } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { ConnectError, internalError, invalidArgument } from "../errors.js";
import type { Logger } from "../logger.js";

/**
 * Wraps a handler (unary or server streaming): requests holding NUL characters are refused up
 * front (PostgreSQL text cannot hold them, and nothing legitimate needs them), and anything that
 * is not already a ConnectError is logged and answered as INTERNAL without details, so no SQL or
 * stack trace reaches a client. Requests are never logged: some carry secrets or environments.
 */
export function guardHandler<I, O>(
  logger: Logger,
  method: string,
  schema: DescMessage,
  fn: (req: I, ctx: HandlerContext) => O,
): (req: I, ctx: HandlerContext) => O {
  const fail = (err: unknown): never => {
    if (err instanceof ConnectError) throw err;
    logger.error("call failed", { method, error: describe(err) });
    throw internalError("internal error");
  };
  return ((req: I, ctx: HandlerContext) => {
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
