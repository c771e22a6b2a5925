import { request as httpRequest } from "node:http";
import type { HttpRoute } from "@aiem/kit/server";
import type { NodeHandler, NodeRequest, NodeResponse } from "../transcoder/transcoder.js";
import type { PartName } from "./parts.js";
import { createReplicaPool, type ReplicaPool } from "./replica-pool.js";

/** Prefixes of plain HTTP that each part serves beside its RPCs. */
export const PART_HTTP_PREFIXES: Readonly<Record<PartName, readonly string[]>> = {
  catalogue: [],
  // `/workspaces/`: H2O engines by name, the context path of the official client's h2o.connect config.
  engine: ["/engines/", "/workspaces/"],
  // `/v1/workspaces/`: the streaming file routes (…/filesystem:upload, …/filesystem:download),
  // which reach a module only when no REST rule matched the path.
  sandbox: ["/sandboxes/", "/v1/workspaces/"],
};

/** Sends a request to the first route whose prefix its path starts with, else to `next`. */
export function createHttpRoutesHandler(routes: readonly HttpRoute[], next: NodeHandler): NodeHandler {
  if (routes.length === 0) return next;
  return (req, res) => {
    const path = req.url ?? "/";
    const route = routes.find((r) => path.startsWith(r.prefix));
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
    return PART_HTTP_PREFIXES[part as PartName].map((prefix) => ({ prefix, handler: proxyTo(pool) }));
  });
}

// HTTP/1.1 to the part's port (it serves HTTP/1 and HTTP/2 alike); hop-by-hop headers dropped.
function proxyTo(pool: ReplicaPool): NodeHandler {
  return (req: NodeRequest, res: NodeResponse) => {
    const base = pool.pick();
    const target = new URL(base);
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || name.startsWith(":") || hopByHop.has(name)) continue;
      headers[name] = value;
    }
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
      (answer) => {
        const out: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value !== undefined && !hopByHop.has(name)) out[name] = value;
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

const hopByHop = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer", "host"]);
