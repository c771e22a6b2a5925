// CORS for every protocol on the edge port (REST, Connect, gRPC-Web), preflight included.
// The API authenticates with bearer tokens, never cookies, so credentials are not allowed and
// "any origin" is a safe default; a list of origins narrows it.
import { cors as connectCors } from "@connectrpc/connect";
import type { NodeRequest, NodeResponse } from "../transcoder/transcoder.js";

export interface CorsOptions {
  /** "*" (the default) or exact origins such as "https://app.example.com". */
  readonly allowedOrigins?: "*" | readonly string[];
  /**
   * Request headers a browser may send. Default: whatever the preflight asks for, which is
   * safe because the answer never allows credentials.
   */
  readonly allowedHeaders?: readonly string[];
  /** Response headers scripts may read, besides the Connect, gRPC-Web and Status ones. */
  readonly exposedHeaders?: readonly string[];
  /** How long a browser may cache a preflight answer. Default 7200. */
  readonly maxAgeSeconds?: number;
}

export interface Cors {
  /** Adds CORS headers; answers a preflight and returns true, or returns false to go on. */
  handle(req: NodeRequest, res: NodeResponse): boolean;
}

const allowedMethods = "GET, POST, PUT, PATCH, DELETE";

export function createCors(options: CorsOptions = {}): Cors {
  const origins = options.allowedOrigins ?? "*";
  const anyOrigin = origins === "*" || origins.includes("*");
  const originSet = new Set(origins === "*" ? [] : origins);
  const allowHeaders = options.allowedHeaders
    ? [...new Set([...connectCors.allowedHeaders, "Authorization", ...options.allowedHeaders])].join(", ")
    : undefined;
  const exposeHeaders = [
    ...new Set([...connectCors.exposedHeaders, "Allow", "Retry-After", ...(options.exposedHeaders ?? [])]),
  ].join(", ");
  const maxAge = String(options.maxAgeSeconds ?? 7200);

  function allowOrigin(origin: string): string | undefined {
    if (anyOrigin) return "*";
    return originSet.has(origin) ? origin : undefined;
  }

  return {
    handle(req, res) {
      const origin = req.headers.origin;
      if (typeof origin !== "string") return false;
      const allowed = allowOrigin(origin);
      if (!anyOrigin) res.setHeader("vary", "Origin");
      const preflight = req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined;
      if (!preflight) {
        if (allowed) {
          res.setHeader("access-control-allow-origin", allowed);
          res.setHeader("access-control-expose-headers", exposeHeaders);
        }
        return false;
      }
      if (!allowed) {
        const body = JSON.stringify({ code: 7, message: `origin ${origin} is not allowed`, details: [] });
        res.writeHead(403, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        res.end(body);
        return true;
      }
      const requested = req.headers["access-control-request-headers"];
      const headers: Record<string, string> = {
        "access-control-allow-origin": allowed,
        "access-control-allow-methods": allowedMethods,
        "access-control-max-age": maxAge,
      };
      const allowHeadersValue = allowHeaders ?? (typeof requested === "string" ? requested : undefined);
      if (allowHeadersValue) headers["access-control-allow-headers"] = allowHeadersValue;
      if (!anyOrigin) headers.vary = "Origin, Access-Control-Request-Method, Access-Control-Request-Headers";
      res.writeHead(204, headers);
      res.end();
      return true;
    },
  };
}
