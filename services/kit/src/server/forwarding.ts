// Calls about work pinned to another replica (a sandbox whose agent runs on its host) are carried
// out there: the handler throws ServedElsewhere with the owner's URL once it knows, and the guard
// sends the same request on with the caller's credentials and hands back the owner's answer. A
// forwarded call is never forwarded again (ownership moving meanwhile answers UNAVAILABLE), so two
// replicas that disagree cannot bounce a call between them.
import { request as httpRequest, type IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { DescMethod } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createClient,
  type Client,
  type HandlerContext,
  type Transport,
} from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { traceContextInterceptor } from "../observability/trace-context.js";
import { isHopByHop } from "./hop-by-hop.js";
import type { HttpHandler } from "./service-module.js";

/** Header marking a call one replica forwarded to another. */
export const FORWARDED_HEADER = "aiem-forwarded";

/** Thrown by a handler when the resource it serves is owned by the live replica at `url`. */
export class ServedElsewhere extends Error {
  constructor(
    readonly url: string,
    what: string,
  ) {
    super(`${what} is served by the replica at ${url}`);
    this.name = "ServedElsewhere";
  }
}

const transports = new Map<string, Transport>();

function transportTo(url: string): Transport {
  let transport = transports.get(url);
  if (!transport) {
    // A hop between replicas: compressing would only burn CPU on both ends (issue 15).
    transport = createGrpcTransport({ baseUrl: url, acceptCompression: [], interceptors: [traceContextInterceptor] });
    transports.set(url, transport);
  }
  return transport;
}

function forwardHeaders(ctx: HandlerContext): Headers {
  const headers = new Headers({ [FORWARDED_HEADER]: "1" });
  const auth = ctx.requestHeader.get("authorization");
  if (auth) headers.set("authorization", auth);
  return headers;
}

function refuseSecondHop(ctx: HandlerContext, err: ServedElsewhere): void {
  if (ctx.requestHeader.has(FORWARDED_HEADER)) {
    throw new ConnectError(`${err.message}, which this replica was told it serves; retry shortly`, Code.Unavailable);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: a client of whichever service the call belongs to, its methods called by name
type AnyClient = Client<any>;

/**
 * The owner's answers pass through as they are; an owner that does not take the connection (killed,
 * not yet restarted, its lease not yet run out) is said in the caller's terms.
 */
function ownerSilent(e: unknown, elsewhere: ServedElsewhere): unknown {
  for (let c: unknown = e, depth = 0; c && depth < 5; c = (c as { cause?: unknown }).cause, depth++) {
    if ((c as NodeJS.ErrnoException).code === "ECONNREFUSED") {
      return new ConnectError(
        `${elsewhere.message}, which does not answer (down or restarting); retry shortly`,
        Code.Unavailable,
      );
    }
  }
  return e;
}

function clientFor(method: DescMethod, url: string): AnyClient {
  return createClient(method.parent, transportTo(url));
}

/**
 * Wraps a handler so that ServedElsewhere is answered by the owner (bidirectional streams are
 * left as they are: nothing of ours uses them).
 * A server stream is forwarded only when the handler gave up before its first message, which is
 * where a handler decides who serves it.
 */
export function forwardable(
  method: DescMethod,
  fn: (req: unknown, ctx: HandlerContext) => unknown,
): (req: unknown, ctx: HandlerContext) => unknown {
  if (method.methodKind === "unary") {
    return async (req: unknown, ctx: HandlerContext) => {
      try {
        return await fn(req, ctx);
      } catch (err) {
        if (!(err instanceof ServedElsewhere)) throw err;
        refuseSecondHop(ctx, err);
        const call = clientFor(method, err.url)[method.localName] as (req: unknown, opts: object) => Promise<unknown>;
        return await call(req, { headers: forwardHeaders(ctx), signal: ctx.signal }).catch((e: unknown) => {
          throw ownerSilent(e, err);
        });
      }
    };
  }
  if (method.methodKind === "server_streaming") {
    return (req: unknown, ctx: HandlerContext) =>
      forwardStream(method, fn(req, ctx) as AsyncIterable<unknown>, req, ctx);
  }
  if (method.methodKind === "client_streaming") {
    return (requests: unknown, ctx: HandlerContext) =>
      forwardClientStream(method, fn, requests as AsyncIterable<unknown>, ctx);
  }
  return fn;
}

/**
 * A client stream names what it is about in its first message, so a handler reads that one
 * before it can know who serves the call. The first message is kept; should the handler give up
 * with ServedElsewhere having read no further, the owner gets it and then the rest of the stream.
 */
async function forwardClientStream(
  method: DescMethod,
  fn: (req: unknown, ctx: HandlerContext) => unknown,
  requests: AsyncIterable<unknown>,
  ctx: HandlerContext,
): Promise<unknown> {
  const source = requests[Symbol.asyncIterator]();
  const kept: unknown[] = [];
  let readPastFirst = false;
  const watched: AsyncIterable<unknown> = {
    [Symbol.asyncIterator]: () => ({
      async next() {
        const next = await source.next();
        if (!next.done) {
          if (kept.length === 0) kept.push(next.value);
          else readPastFirst = true;
        }
        return next;
      },
      async return(value?: unknown) {
        return (await source.return?.(value)) ?? { done: true, value: undefined };
      },
    }),
  };
  try {
    return await fn(watched, ctx);
  } catch (err) {
    if (!(err instanceof ServedElsewhere)) throw err;
    refuseSecondHop(ctx, err);
    if (readPastFirst) throw new ConnectError(`${err.message}; retry shortly`, Code.Unavailable);
    async function* replay(): AsyncGenerator<unknown> {
      yield* kept;
      for (let next = await source.next(); !next.done; next = await source.next()) yield next.value;
    }
    const call = clientFor(method, err.url)[method.localName] as (
      req: AsyncIterable<unknown>,
      opts: object,
    ) => Promise<unknown>;
    return await call(replay(), { headers: forwardHeaders(ctx), signal: ctx.signal }).catch((e: unknown) => {
      throw ownerSilent(e, err);
    });
  }
}

async function* forwardStream(
  method: DescMethod,
  source: AsyncIterable<unknown>,
  req: unknown,
  ctx: HandlerContext,
): AsyncGenerator<unknown> {
  const it = source[Symbol.asyncIterator]();
  let first: IteratorResult<unknown>;
  try {
    first = await it.next();
  } catch (err) {
    if (!(err instanceof ServedElsewhere)) throw err;
    refuseSecondHop(ctx, err);
    const call = clientFor(method, err.url)[method.localName] as (req: unknown, opts: object) => AsyncIterable<unknown>;
    try {
      yield* call(req, { headers: forwardHeaders(ctx), signal: ctx.signal });
    } catch (e) {
      throw ownerSilent(e, err);
    }
    return;
  }
  try {
    for (let next = first; !next.done; next = await it.next()) yield next.value;
  } finally {
    await it.return?.();
  }
}

/**
 * Sends a plain HTTP request (a sandbox's port, a file transfer) on to the replica at `url` as it
 * is, and its answer back. The browser's Host goes along: the owner serves the same origin (its
 * sessions are scoped to it, its redirects and cookies are that origin's). Returns false, sending nothing, when the request was already forwarded
 * once: the caller answers it as unavailable.
 */
export function forwardHttp(req: Parameters<HttpHandler>[0], res: Parameters<HttpHandler>[1], url: string): boolean {
  if (req.headers[FORWARDED_HEADER] !== undefined) return false;
  const target = new URL(url);
  const headers: Record<string, string | string[]> = { [FORWARDED_HEADER]: "1" };
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined && !name.startsWith(":") && !isHopByHop(name)) headers[name] = value;
  }
  const authority = req.headers[":authority"];
  if (typeof authority === "string") headers.host = authority;
  const upstream = httpRequest(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
    (answer) => {
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers))
        if (value !== undefined && !isHopByHop(name)) out[name] = value;
      res.writeHead(answer.statusCode ?? 502, out);
      answer.pipe(res as NodeJS.WritableStream);
    },
  );
  upstream.on("error", () => {
    if (!res.headersSent) res.writeHead(503, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        code: Code.Unavailable,
        message: "the replica serving this sandbox did not answer; retry shortly",
        details: [],
      }),
    );
  });
  res.on("close", () => upstream.destroy());
  (req as NodeJS.ReadableStream).pipe(upstream);
  return true;
}

/**
 * An upgrade request (a WebSocket) for work another replica runs: the request goes to the replica
 * at `url` as it came (its token, cookie and upgrade headers), and the two sockets are joined.
 * Returns false, doing nothing, when the request was already forwarded once.
 */
export function forwardUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, url: string): boolean {
  if (req.headers[FORWARDED_HEADER] !== undefined) return false;
  const target = new URL(url);
  const lines = [`${req.method ?? "GET"} ${req.url ?? "/"} HTTP/1.1`, `${FORWARDED_HEADER}: 1`];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
  spliceUpgrade(connect(Number(target.port), target.hostname), socket, lines, head);
  return true;
}

/**
 * Sends an upgrade request's head (`lines`, then what the client sent past it) on `upstream` once
 * it connects, and joins the two sockets: whatever ends one ends both. `unreachable` may answer
 * the client when the upstream failed before sending anything back.
 */
export function spliceUpgrade(
  upstream: Socket,
  socket: Duplex,
  lines: readonly string[],
  head: Buffer,
  unreachable?: () => void,
  pipeAnswer: (from: Socket, to: Duplex) => void = (from, to) => from.pipe(to),
): void {
  upstream.on("connect", () => {
    upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    pipeAnswer(upstream, socket);
    socket.pipe(upstream);
  });
  const close = () => {
    upstream.destroy();
    socket.destroy();
  };
  upstream.on("error", () => {
    if (upstream.bytesRead === 0 && socket.writable) unreachable?.();
    close();
  });
  socket.on("error", close);
  upstream.on("close", close);
  socket.on("close", close);
}
