import { request as httpRequest, type IncomingMessage } from "node:http";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { isHopByHop, spliceUpgrade, type HttpRoute } from "@aiem/kit/server";
import type { NodeHandler, NodeRequest, NodeResponse } from "../transcoder/transcoder.js";
import type { PartName } from "./parts.js";
import { createReplicaPool, type ReplicaPool } from "./replica-pool.js";

/** Prefixes of plain HTTP that each part serves beside its RPCs. */
export const PART_HTTP_PREFIXES: Readonly<Record<PartName, readonly string[]>> = {
  catalogue: [],
  // `/workspaces/`: DAI and H2O engines by name, the paths of their api_url and login_url.
  engine: ["/engines/", "/workspaces/"],
  // `/v1/workspaces/`: the streaming file routes (…/filesystem:upload, …/filesystem:download),
  // which reach a module only when no REST rule matched the path.
  sandbox: ["/sandboxes/", "/v1/workspaces/"],
};

/**
 * Prefixes under which a part takes WebSocket upgrades only (plain HTTP there is another part's):
 * `/v1/workspaces/`: the engine log streams (…/daiEngines/<id>:stream_logs).
 */
export const PART_UPGRADE_PREFIXES: Readonly<Record<PartName, readonly string[]>> = {
  catalogue: [],
  engine: ["/v1/workspaces/"],
  sandbox: [],
};

/** Sends a request to the first route whose prefix its path starts with, else to `next`. */
export function createHttpRoutesHandler(routes: readonly HttpRoute[], next: NodeHandler): NodeHandler {
  if (routes.length === 0) return next;
  return (req, res) => {
    const path = req.url ?? "/";
    const route = routes.find((r) => !r.upgradeOnly && path.startsWith(r.prefix));
    // The edge narrows `write` on its response type; the route gets the response as node made it.
    if (route) route.handler(req, res as Parameters<HttpRoute["handler"]>[1]);
    else next(req, res);
  };
}

/**
 * The HTTP routes of parts in other processes, proxied to them as they are. A part's value is its
 * URL, or its replicas' URLs comma-separated (or their pool, when the caller keeps one).
 */
export function remoteHttpRoutes(remotes: Partial<Record<PartName, string | ReplicaPool>>): HttpRoute[] {
  return Object.entries(remotes).flatMap(([part, base]) => {
    const pool = typeof base === "string" ? createReplicaPool(base) : base;
    const routes: HttpRoute[] = PART_HTTP_PREFIXES[part as PartName].map((prefix) => ({
      prefix,
      handler: proxyTo(pool),
      upgrade: proxyUpgradeTo(pool),
    }));
    for (const prefix of PART_UPGRADE_PREFIXES[part as PartName])
      routes.push({ prefix, handler: proxyTo(pool), upgrade: proxyUpgradeTo(pool), upgradeOnly: true });
    return routes;
  });
}

// HTTP/1.1 to the part's port (it serves HTTP/1 and HTTP/2 alike); hop-by-hop headers dropped.
// The Host header is kept: engines check a WebSocket's Origin against it, and cookies and
// redirects are the browser's origin's.
function proxyTo(pool: ReplicaPool): NodeHandler {
  return (req: NodeRequest, res: NodeResponse) => {
    const base = pool.pick();
    const target = new URL(base);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || name.startsWith(":") || isHopByHop(name)) continue;
      headers[name] = value;
    }
    const authority = req.headers[":authority"];
    if (typeof authority === "string") headers.host = authority;
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (answer) => {
        const out: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value !== undefined && !isHopByHop(name)) out[name] = value;
        }
        res.writeHead(answer.statusCode ?? 502, out);
        answer.pipe(res as NodeJS.WritableStream);
      },
    );
    upstream.on("error", () => {
      pool.markDown(base);
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: 14, message: "the part serving this path is unavailable", details: [] }));
    });
    res.on("close", () => upstream.destroy());
    (req as NodeJS.ReadableStream).pipe(upstream);
  };
}

// An upgrade request (WebSocket) replayed on a plain TCP connection to the part, then spliced:
// the part's route answers the handshake itself.
function proxyUpgradeTo(pool: ReplicaPool): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    const base = pool.pick();
    const target = new URL(base);
    const upstream = connect(Number(target.port || 80), target.hostname);
    const lines = [`${req.method ?? "GET"} ${req.url ?? "/"} HTTP/1.1`];
    // From `headers`, not `rawHeaders`: the edge may have removed or set some (content-origins.ts).
    for (const [name, value] of Object.entries(req.headers)) {
      for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) lines.push(`${name}: ${v}`);
    }
    upstream.once("error", () => pool.markDown(base));
    spliceUpgrade(upstream, socket, lines, head, () => {
      const body = JSON.stringify({ code: 14, message: "the part serving this path is unavailable", details: [] });
      socket.end(
        `HTTP/1.1 502 Bad Gateway\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
    });
  };
}
