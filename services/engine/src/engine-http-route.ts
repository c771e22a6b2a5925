// The shape of the engine module's HTTP routes (the proxy, the name route, the log streams).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Duplex } from "node:stream";
import type { HttpRoute } from "@aiem/kit/server";

export type AnyRequest = IncomingMessage | Http2ServerRequest;
export type AnyResponse = ServerResponse | Http2ServerResponse;

/** An HTTP route that also takes over upgrade requests (WebSockets) under its prefix. */
export interface EngineHttpRoute extends HttpRoute {
  /** For the host's `upgrade` event on requests under `prefix`. */
  readonly upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
}
