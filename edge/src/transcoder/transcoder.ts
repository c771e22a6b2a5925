// REST/JSON transcoding: the `google.api.http` rules of the given services, read from their
// descriptors once at start-up, become a route trie; each matched request is turned into the
// method's request message, sent through the service's Connect Transport, and the response (or
// stream of responses) comes back as JSON.
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { DescMethodUnary, DescService, JsonObject, Registry } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor, type Transport } from "@connectrpc/connect";
import { drained } from "@aiem/kit/server";
import { forwardedRequestHeaders } from "../headers.js";
import { silentLogger, type EdgeLogger } from "../logger.js";
import { type LargeBytes, base64Texts, jsonPieces, largeBytes, messageToJson, pieceLength } from "./bytes-json.js";
import { replyError } from "./error-reply.js";
import { readBody, responseHeaders } from "./http-io.js";
import { streamNdjson } from "./ndjson-stream.js";
import { buildRequest } from "./request-builder.js";
import { buildRouteTable, type RestRoute, type RouteEntry } from "./route-table.js";
import { fillUnpopulated } from "./unpopulated.js";
import { HttpError } from "./status.js";

export type { RestRoute } from "./route-table.js";

// The same shapes as connect-node's NodeHandlerFn (not exported by name there), so handlers
// plug into node:http, node:http2 and connectNodeAdapter alike.
export type NodeRequest = IncomingMessage | Http2ServerRequest;
export type NodeResponse = (Omit<ServerResponse, "write"> | Omit<Http2ServerResponse, "write">) & {
  write(chunk: string | Uint8Array, callback?: (err: Error | null | undefined) => void): boolean;
  write(
    chunk: string | Uint8Array,
    encoding: BufferEncoding,
    callback?: (err: Error | null | undefined) => void,
  ): boolean;
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

export interface Transcoder {
  readonly handle: NodeHandler;
  readonly routes: readonly RestRoute[];
}

export const DEFAULT_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * The steps of a REST call: match the route (route-table.ts), read the body (http-io.ts), build
 * the request message (request-builder.ts), call the method, and write the response as JSON, or
 * as NDJSON for a stream (ndjson-stream.ts); a failure is answered by error-reply.ts.
 */

export function createTranscoder(options: TranscoderOptions): Transcoder {
  const registry = options.registry;
  const logger = options.logger ?? silentLogger;
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const jsonWrite = { alwaysEmitImplicit: true, registry } as const;
  const { trie, routes } = buildRouteTable(options.services, options.interceptors, logger);

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
        new ConnectError(
          `${httpMethod} is not allowed on ${path}; use ${found.allowed.join(", ")}`,
          Code.Unimplemented,
        ),
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
      const response = await transport.unary(route.method as DescMethodUnary, abort.signal, undefined, header, message);
      // Large bytes values (a file read) go out as base64 piece by piece: never as one string,
      // nor inside the whole JSON text, nor in the buffer that text would become.
      const large = largeBytes();
      const pieces = jsonPieces(encode(route, response.message, large), large);
      const out = responseHeaders(response.header);
      out["content-type"] = "application/json";
      out["content-length"] = String(pieces.reduce((n, p) => n + pieceLength(p), 0));
      res.writeHead(200, out);
      for (const piece of pieces) {
        if (typeof piece === "string") {
          if (!res.write(piece)) await drained(res);
          continue;
        }
        for (const text of base64Texts(piece)) {
          if (res.destroyed) break;
          if (!res.write(text, "latin1")) await drained(res);
        }
      }
      res.end();
      return;
    }
    await streamNdjson(route, res, abort, header, message, { encode, logger, registry });
  }

  // `response_body` picks one field of the response; otherwise the whole message is the body.
  function encode(route: RouteEntry, message: unknown, large?: LargeBytes): string {
    const json = fillUnpopulated(route.output, messageToJson(route.output, message, jsonWrite, large) as JsonObject);
    if (!route.responseField) return JSON.stringify(json);
    return JSON.stringify(json[route.responseField.jsonName] ?? null);
  }

  const handle: NodeHandler = (req, res) => {
    serve(req, res).catch((reason: unknown) => replyError(req, res, reason, { logger, registry }));
  };
  return { handle, routes };
}
