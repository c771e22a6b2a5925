// Carrying a request to the engine's own web server on this host once it was admitted: plain
// HTTP with its body and answer streamed both ways, or an upgrade (WebSocket) spliced through.
import { request as httpRequest, type IncomingMessage } from "node:http";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { pipeUserUpgradeAnswer, spliceUpgrade } from "@aiem/kit/server";
import type { AnyRequest, AnyResponse } from "./engine-http-route.js";
import { answerHeaders, requestHeaders } from "./proxy-headers.js";

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

/** Streams the request to the engine and its answer back; resolves once either side is done. */
export function forwardToEngine(
  req: AnyRequest,
  res: AnyResponse,
  endpoint: Endpoint,
  path: string,
  onError: (err: Error) => void,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const upstream = httpRequest(
      { host: endpoint.host, port: endpoint.port, method: req.method, path, headers: requestHeaders(req, false) },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answerHeaders(answer, res));
        answer.pipe(res as NodeJS.WritableStream);
        answer.on("end", resolve);
        answer.on("error", () => resolve());
      },
    );
    upstream.on("error", (err) => {
      onError(err);
      resolve();
    });
    res.on("close", () => {
      upstream.destroy();
      resolve();
    });
    (req as NodeJS.ReadableStream).pipe(upstream);
  });
}

/**
 * Splices an upgrade through to the engine. `touch` is called for traffic either way, at most
 * once a second, so that a long-lived WebSocket counts as activity while it is used.
 */
export function spliceToEngine(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  endpoint: Endpoint,
  path: string,
  touch: () => void,
): void {
  const upstream = connect(endpoint.port, endpoint.host);
  const lines = [`${req.method ?? "GET"} ${path} HTTP/1.1`];
  for (const [name, value] of Object.entries(requestHeaders(req, true))) {
    for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${v}`);
  }
  spliceUpgrade(upstream, socket, lines, head, undefined, pipeUserUpgradeAnswer);
  let touched = 0;
  const throttled = () => {
    const now = Date.now();
    if (now - touched > 1_000) {
      touched = now;
      touch();
    }
  };
  upstream.on("data", throttled);
  socket.on("data", throttled);
}
