// REST/JSON transcoding: the `google.api.http` rules of the given services, read from their
// descriptors once at start-up, become a route trie; each matched request is turned into the
// method's request message, sent through the service's Connect Transport, and the response (or
// stream of responses) comes back as JSON.
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import {
  getOption,
  toJson,
  type JsonObject,
  type DescField,
  type DescMessage,
  type DescMethod,
  type DescMethodStreaming,
  type DescMethodUnary,
  type DescService,
  type Registry,
} from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type Interceptor, type Transport } from "@connectrpc/connect";
import { createAsyncIterable, runStreamingCall, runUnaryCall } from "@connectrpc/connect/protocol";
import { http } from "@aiem/proto/google/api/annotations_pb.js";
import type { HttpRule } from "@aiem/proto/google/api/http_pb.js";
import { copyApplicationHeaders, forwardedRequestHeaders } from "../headers.js";
import { silentLogger, type EdgeLogger } from "../logger.js";
import { parsePathTemplate, type PathTemplate } from "./path-template.js";
import { buildRequest, createRequestPlan, type RequestPlan } from "./request-builder.js";
import { createRouteTrie } from "./route-trie.js";
import { fillUnpopulated } from "./unpopulated.js";
import { HttpError, httpStatusOf, statusJson } from "./status.js";

// The same shapes as connect-node's NodeHandlerFn (not exported by name there), so handlers
// plug into node:http, node:http2 and connectNodeAdapter alike.
export type NodeRequest = IncomingMessage | Http2ServerRequest;
export type NodeResponse = (Omit<ServerResponse, "write"> | Omit<Http2ServerResponse, "write">) & {
  write(chunk: string | Uint8Array, callback?: (err: Error | null | undefined) => void): boolean;
  write(chunk: string | Uint8Array, encoding: BufferEncoding, callback?: (err: Error | null | undefined) => void): boolean;
  writeHead(status: number, headers?: OutgoingHttpHeaders): unknown;
};
export type NodeHandler = (req: NodeRequest, res: NodeResponse) => void;

export interface TranscodedService {
  /** The service; its methods' `google.api.http` options are the routes. */
  readonly service: DescService;
  /** Where its calls go: an in-process router transport or a client transport. */
  readonly transport: Transport;
}

export interface TranscoderOptions {
  readonly services: readonly TranscodedService[];
  /** Resolves `google.protobuf.Any` in bodies and error details. */
  readonly registry?: Registry;
  /** Run around every call, as on the Connect side of the edge. */
  readonly interceptors?: readonly Interceptor[];
  /** Largest request body accepted; larger ones get 413. Default 4 MiB. */
  readonly bodyLimitBytes?: number;
  readonly logger?: EdgeLogger;
  /** Serves requests whose path matches no rule at all; without it they get 404. */
  readonly fallback?: NodeHandler;
  /**
   * Throws (UNAUTHENTICATED) when the request's credentials are missing or invalid. Run only
   * when the request cannot be decoded, so that such a caller hears about its credentials, as
   * it would for a well-formed request, and not about the request's shape.
   */
  readonly checkCredentials?: (header: Headers) => Promise<void>;
}

/** One REST route, for listings and docs. */
export interface RestRoute {
  readonly httpMethod: string;
  readonly path: string;
  readonly body: string;
  /** `package.Service.Method` */
  readonly method: string;
}

export interface Transcoder {
  readonly handle: NodeHandler;
  readonly routes: readonly RestRoute[];
}

interface RouteEntry {
  readonly method: DescMethod;
  readonly template: PathTemplate;
  readonly plan: RequestPlan;
  readonly call: CallTarget;
  readonly output: DescMessage;
  readonly responseField: DescField | undefined;
  readonly serverStreaming: boolean;
}

interface CallTarget {
  readonly transport: Transport;
  readonly service: DescService;
}

export const DEFAULT_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
const STREAM_HEADER_DELAY_MS = 1_000;

export function createTranscoder(options: TranscoderOptions): Transcoder {
  const registry = options.registry;
  const logger = options.logger ?? silentLogger;
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const trie = createRouteTrie<RouteEntry>((r) => `${r.method.parent.typeName}.${r.method.name}`);
  const routes: RestRoute[] = [];
  const jsonWrite = { alwaysEmitImplicit: true, registry } as const;

  for (const { service, transport } of options.services) {
    const target: CallTarget = {
      transport: options.interceptors?.length ? withInterceptors(transport, [...options.interceptors]) : transport,
      service,
    };
    for (const method of service.methods) {
      const rule = getOption(method, http);
      for (const binding of flattenRule(rule)) {
        if (method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming") {
          logger.warn("http rule on a client-streaming method is not served over REST", {
            method: `${service.typeName}.${method.name}`,
          });
          continue;
        }
        const template = parsePathTemplate(binding.path);
        const responseField = binding.responseBody
          ? method.output.fields.find((f) => f.name === binding.responseBody)
          : undefined;
        if (binding.responseBody && !responseField) {
          throw new Error(`${service.typeName}.${method.name}: response_body "${binding.responseBody}" does not exist`);
        }
        const entry: RouteEntry = {
          method,
          template,
          plan: createRequestPlan(method, template, binding.body),
          call: target,
          output: method.output,
          responseField,
          serverStreaming: method.methodKind === "server_streaming",
        };
        trie.add(binding.httpMethod, template, entry);
        routes.push({
          httpMethod: binding.httpMethod,
          path: binding.path,
          body: binding.body,
          method: `${service.typeName}.${method.name}`,
        });
      }
    }
  }

  function sendError(req: NodeRequest, res: NodeResponse, reason: unknown): void {
    let error: ConnectError;
    let status: number;
    let extra: Readonly<Record<string, string>> = {};
    if (reason instanceof HttpError) {
      error = reason.error;
      status = reason.httpStatus;
      extra = reason.headers;
    } else if (reason instanceof ConnectError) {
      error = reason;
      status = httpStatusOf(error.code);
    } else {
      logger.error("transcoder failure", { error: String(reason), url: req.url });
      error = new ConnectError("internal error", Code.Internal);
      status = 500;
    }
    if (res.headersSent || res.destroyed) {
      if (!res.writableEnded) res.end();
      return;
    }
    const body = JSON.stringify(statusJson(error, registry));
    res.writeHead(status, {
      ...extra,
      ...responseHeaders(error.metadata),
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
    });
    res.end(body);
  }

  async function serve(req: NodeRequest, res: NodeResponse): Promise<void> {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const query = q < 0 ? "" : url.slice(q + 1);
    const httpMethod = req.method ?? "GET";
    const found = trie.match(httpMethod, path);
    if (found.kind === "none") {
      if (options.fallback) return options.fallback(req, res);
      throw new HttpError(404, new ConnectError(`no route for ${httpMethod} ${path}`, Code.NotFound));
    }
    if (found.kind === "method") {
      throw new HttpError(
        405,
        new ConnectError(`${httpMethod} is not allowed on ${path}; use ${found.allowed.join(", ")}`, Code.Unimplemented),
        { allow: found.allowed.join(", ") },
      );
    }
    const route = found.route;
    const bodyText = await readBody(req, bodyLimit);
    let message: Record<string, unknown>;
    try {
      message = buildRequest(route.plan, found.segments, query, bodyText, registry);
    } catch (reason) {
      await options.checkCredentials?.(forwardedRequestHeaders(req.headers));
      throw reason;
    }

    const abort = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) abort.abort(new ConnectError("the client went away", Code.Canceled));
    };
    res.once("close", onClose);
    const header = forwardedRequestHeaders(req.headers);
    const { transport } = route.call;
    if (!route.serverStreaming) {
      const response = await transport.unary(
        route.method as DescMethodUnary,
        abort.signal,
        undefined,
        header,
        message,
      );
      const body = encode(route, response.message);
      const out = responseHeaders(response.header);
      out["content-type"] = "application/json";
      out["content-length"] = String(Buffer.byteLength(body));
      res.writeHead(200, out);
      res.end(body);
      return;
    }
    await stream(route, res, abort, header, message);
  }

  async function stream(
    route: RouteEntry,
    res: NodeResponse,
    abort: AbortController,
    header: Headers,
    message: Record<string, unknown>,
  ): Promise<void> {
    // Hold the status line until the first message (or a short while), so a call that fails
    // straight away (not found, permission denied) still gets its proper HTTP status instead of
    // 200 and an error line, while a quiet stream still shows its headers to the client soon.
    const started = (async () => {
      const response = await route.call.transport.stream(
        route.method as DescMethodStreaming,
        abort.signal,
        undefined,
        header,
        createAsyncIterable([message]),
      );
      const messages = response.message[Symbol.asyncIterator]();
      return { header: response.header, messages, first: await messages.next() };
    })();
    let timer: NodeJS.Timeout | undefined;
    let early: Awaited<typeof started> | undefined;
    try {
      early = await Promise.race([
        started,
        new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), STREAM_HEADER_DELAY_MS))),
      ]);
    } finally {
      clearTimeout(timer);
    }
    const out = early ? responseHeaders(early.header) : {};
    out["content-type"] = "application/x-ndjson";
    out["cache-control"] = "no-store";
    out["x-accel-buffering"] = "no";
    res.writeHead(200, out);
    if (!early && "flushHeaders" in res) res.flushHeaders();
    try {
      const { messages, first } = early ?? (await started);
      let next = first;
      while (!next.done) {
        if (!res.write(`{"result":${encode(route, next.value)}}\n`)) await drained(res);
        if (abort.signal.aborted) return;
        next = await messages.next();
      }
    } catch (reason) {
      if (abort.signal.aborted || res.destroyed) return;
      const error = reason instanceof ConnectError ? reason : toInternal(reason);
      res.end(`{"error":${JSON.stringify(statusJson(error, registry))}}\n`);
      return;
    }
    res.end();
  }

  // `response_body` picks one field of the response; otherwise the whole message is the body.
  function encode(route: RouteEntry, message: unknown): string {
    const json = fillUnpopulated(route.output, toJson(route.output, message as never, jsonWrite) as JsonObject);
    if (!route.responseField) return JSON.stringify(json);
    return JSON.stringify(json[route.responseField.jsonName] ?? null);
  }

  function toInternal(reason: unknown): ConnectError {
    logger.error("transcoder stream failure", { error: String(reason) });
    return new ConnectError("internal error", Code.Internal);
  }

  const handle: NodeHandler = (req, res) => {
    serve(req, res).catch((reason: unknown) => sendError(req, res, reason));
  };
  return { handle, routes };
}

interface Binding {
  readonly httpMethod: string;
  readonly path: string;
  readonly body: string;
  readonly responseBody: string;
}

function flattenRule(rule: HttpRule): Binding[] {
  const out: Binding[] = [];
  const visit = (r: HttpRule) => {
    const { case: kind, value } = r.pattern;
    if (kind === "custom") out.push({ httpMethod: value.kind.toUpperCase(), path: value.path, body: r.body, responseBody: r.responseBody });
    else if (kind !== undefined) out.push({ httpMethod: kind.toUpperCase(), path: value, body: r.body, responseBody: r.responseBody });
    for (const extra of r.additionalBindings) visit(extra);
  };
  visit(rule);
  return out;
}

function responseHeaders(from: Headers): Record<string, string> {
  const h = new Headers();
  copyApplicationHeaders(from, h);
  const out: Record<string, string> = {};
  h.forEach((v, k) => (out[k] = v));
  return out;
}

function drained(res: NodeResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/** Reads the body as text; rejects with 413 past `limit` bytes. */
function readBody(req: NodeRequest, limit: number): Promise<string> {
  const tooLarge = () =>
    new HttpError(
      413,
      new ConnectError(`the request body is larger than the limit of ${limit} bytes`, Code.ResourceExhausted),
      req.httpVersionMajor === 1 ? { connection: "close" } : {},
    );
  const declared = Number(req.headers["content-length"] ?? Number.NaN);
  if (declared > limit) {
    req.resume();
    return Promise.reject(tooLarge());
  }
  if (declared === 0 || (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] === undefined && req.httpVersionMajor === 1)) {
    return Promise.resolve("");
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"));
    };
    const onError = (e: Error) => {
      cleanup();
      reject(e);
    };
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}

/** Applies interceptors to calls made directly on a transport, as a client would. */
function withInterceptors(transport: Transport, interceptors: Interceptor[]): Transport {
  return {
    unary(method, signal, timeoutMs, header, input, contextValues) {
      return runUnaryCall({
        interceptors,
        signal,
        timeoutMs,
        req: {
          stream: false,
          service: method.parent,
          method,
          requestMethod: "POST",
          url: `/${method.parent.typeName}/${method.name}`,
          header: new Headers(header),
          contextValues: contextValues ?? createContextValues(),
          message: input,
        },
        next: (req) => transport.unary(req.method, req.signal, timeoutMs, req.header, req.message, req.contextValues),
      });
    },
    stream(method, signal, timeoutMs, header, input, contextValues) {
      return runStreamingCall({
        interceptors,
        signal,
        timeoutMs,
        req: {
          stream: true,
          service: method.parent,
          method,
          requestMethod: "POST",
          url: `/${method.parent.typeName}/${method.name}`,
          header: new Headers(header),
          contextValues: contextValues ?? createContextValues(),
          message: input,
        },
        next: (req) => transport.stream(req.method, req.signal, timeoutMs, req.header, req.message, req.contextValues),
      });
    },
  };
}
