// The wrapper every RPC handler of every service runs in: input checks first, then the handler,
// with any failure that is not already a ConnectError logged and answered as INTERNAL.
import type { DescMessage, DescService } from "@bufbuild/protobuf";
import type { ConnectRouter, HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { Code, ConnectError, internalError, invalidArgument } from "../errors.js";
import type { Logger } from "../logger.js";
import { forwardable } from "./forwarding.js";

export interface GuardOptions {
  readonly logger: Logger;
  /** Names the service in the log line: `<label> call failed`. */
  readonly label: string;
}

/**
 * Wraps a handler of any kind. Requests holding NUL characters are refused up front (PostgreSQL
 * text cannot hold them, and nothing legitimate needs them); a client stream's messages are
 * checked one by one as the handler takes them, so a bad one fails the call where it arrives.
 * Anything thrown that is not a ConnectError is logged with its class, message and stack only
 * (requests can carry environments and secrets, so they are never logged) and answered as
 * INTERNAL without details.
 */
export function guardHandler<I, O>(
  options: GuardOptions,
  method: string,
  schema: DescMessage,
  fn: (req: I, ctx: HandlerContext) => O,
): (req: I, ctx: HandlerContext) => O {
  const fail = (err: unknown): never => {
    if (err instanceof ConnectError) throw err;
    if (databaseUnavailable(err)) {
      options.logger.warn(`${options.label} call failed: the database is unavailable`, {
        method,
        error: describeError(err),
      });
      throw new ConnectError("the database is unavailable; retry shortly", Code.Unavailable);
    }
    options.logger.error(`${options.label} call failed`, { method, error: describeError(err) });
    throw internalError("internal error", err);
  };
  return ((req: I, ctx: HandlerContext) => {
    try {
      let checked = req;
      if (isAsyncIterable(req)) checked = eachChecked(schema, req) as I;
      else rejectNul(schema, req as unknown as Record<string, unknown>, "");
      const result = fn(checked, ctx) as unknown;
      if (isAsyncIterable(result)) return guardStream(result, fail) as O;
      if (result instanceof Promise) return result.catch(fail) as O;
      return result as O;
    } catch (err) {
      return fail(err);
    }
  }) as (req: I, ctx: HandlerContext) => O;
}

/**
 * The handlers of a service: one per method, under the method's local name, taking the generated
 * request type and answering the generated response type, so a missing, misspelt or mistyped
 * handler fails the type check. A service whose type was erased to plain `DescService` (a list of
 * several services) cannot be checked, and takes any object: its handlers are still looked up at
 * registration.
 */
export type GuardedHandlers<S extends DescService> =
  | ServiceImpl<S>
  | (string extends keyof S["method"] ? Readonly<Record<string, unknown>> : never);

/**
 * Registers `service` with every method guarded. Handlers are looked up by the method's local
 * name (`createProcess`) or, failing that, its proto name (`CreateProcess`); a method without
 * one is a programming error, thrown at registration rather than answered UNIMPLEMENTED. A
 * handler that throws ServedElsewhere has its call carried out by the replica that owns the work.
 */
export function registerGuarded<S extends DescService>(
  router: ConnectRouter,
  service: S,
  handlers: GuardedHandlers<S>,
  options: GuardOptions,
): void {
  const byName = handlers as Readonly<Record<string, unknown>>;
  const impl: Record<string, unknown> = {};
  for (const method of service.methods) {
    const handler = byName[method.localName] ?? byName[method.name];
    if (typeof handler !== "function") throw new Error(`no handler for ${service.typeName}.${method.name}`);
    const forwarded = forwardable(method, handler as (req: unknown, ctx: HandlerContext) => unknown);
    impl[method.localName] = guardHandler(options, `${service.typeName}/${method.name}`, method.input, forwarded);
  }
  // Built method by method from the descriptor, so its type is the loose one; every method of
  // `service` has its guarded handler, which is what ServiceImpl<S> says.
  router.service(service, impl as Partial<ServiceImpl<S>>);
}

/**
 * The database went away under a call (restarting, unreachable): UNAVAILABLE, which clients retry,
 * rather than INTERNAL. PostgreSQL's class 08 (connection exception) and 57P01-57P03 (shutting
 * down, cannot connect now), and the driver's own words for a dropped or refused connection.
 */
export function databaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (
      typeof code === "string" &&
      (code.startsWith("08") || ["57P01", "57P02", "57P03", "ECONNREFUSED", "ECONNRESET"].includes(code))
    )
      return true;
    const message = e instanceof Error ? e.message : "";
    if (
      /^Connection terminated|^Client has encountered a connection error|timeout exceeded when trying to connect/.test(
        message,
      )
    )
      return true;
  }
  return false;
}

/** Throws INVALID_ARGUMENT naming the first string field, list item or map key holding U+0000. */
export function rejectNul(schema: DescMessage, message: Record<string, unknown>, prefix: string): void {
  for (const field of schema.fields) {
    const path = prefix ? `${prefix}.${field.name}` : field.name;
    const value = message[field.localName];
    if (value === undefined || value === null) continue;
    switch (field.fieldKind) {
      case "scalar":
        if (typeof value === "string" && value.includes("\0")) throw nulIn(path);
        break;
      case "list":
        for (const [i, item] of (value as unknown[]).entries()) {
          if (typeof item === "string" && item.includes("\0")) throw nulIn(`${path}[${i}]`);
          if (field.listKind === "message") rejectNul(field.message, item as Record<string, unknown>, `${path}[${i}]`);
        }
        break;
      case "map":
        for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
          if (key.includes("\0") || (typeof item === "string" && item.includes("\0"))) throw nulIn(path);
          if (field.mapKind === "message")
            rejectNul(field.message, item as Record<string, unknown>, `${path}[${JSON.stringify(key)}]`);
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

const nulIn = (path: string) => invalidArgument(path, "must not contain NUL characters");

async function* eachChecked(schema: DescMessage, messages: AsyncIterable<unknown>): AsyncGenerator<unknown> {
  for await (const message of messages) {
    rejectNul(schema, message as Record<string, unknown>, "");
    yield message;
  }
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
function describeError(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { name: err.name, message: err.message, stack: err.stack };
  return { message: String(err) };
}
