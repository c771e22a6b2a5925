// Engine URLs through the edge: `/engines/<uid>/...` is forwarded to the engine's own web server
// (the DAI or H2O login page and API, Jupyter), WebSockets included. The caller authenticates
// with `Authorization: Bearer`, or once with `?token=` in the URL, which is traded for a session
// of that engine's origin (or path) in an HttpOnly cookie, never the token itself, and a redirect
// to the same URL without the token, so a browser can open the link. The caller must be able to see the engine and hold ACCESS on its kind. The
// Authorization header and our cookies never reach the engine, and its cookies stay on its own
// origin (see user-content.ts in the kit). Traffic counts as activity on the engine.
import { request as httpRequest, type IncomingMessage, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Duplex } from "node:stream";
import { connect } from "node:net";
import { ConnectError } from "@connectrpc/connect";
import { Action, type Policy } from "@aiem/kit/authz";
import {
  sealSession,
  secureOrigin,
  sessionCookie,
  sessionExpiry,
  sessionFromCookies,
  sessionScope,
} from "@aiem/kit/config";
import { Code } from "@aiem/kit/errors";
import type { Authenticator, Principal } from "@aiem/kit/identity";
import type { Logger } from "@aiem/kit/logger";
import {
  CREDENTIAL_HEADERS,
  cookiesForUserContent,
  forwardHttp,
  forwardUpgrade,
  pipeUserUpgradeAnswer,
  spliceUpgrade,
  userSetCookies,
  type HttpRoute,
} from "@aiem/kit/server";
import { canSee } from "./access.js";
import type { ActivityTracker } from "./activity.js";
import { S } from "./kinds.js";
import type { EngineRuntime } from "./runtime/runtime.js";
import type { EngineRow } from "./store.js";

export const ENGINE_PATH_PREFIX = "/engines/";
/** DAI and H2O engines by name: their `api_url` and `login_url`, and the context path of `h2o.connect`. */
export const NAME_PATH_PREFIX = "/workspaces/";
/** Stands in for an unknown name, so that it is refused exactly like an engine the caller may not see. */
const NO_ENGINE_UID = "00000000-0000-0000-0000-000000000000";
/**
 * Set by the edge, and only by it, on requests that came to an engine's own origin: only that
 * engine is served there (the H2O name path could otherwise name another).
 */
export const ENGINE_ORIGIN_HEADER = "x-aiem-engine-origin";

type AnyRequest = IncomingMessage | Http2ServerRequest;
type AnyResponse = ServerResponse | Http2ServerResponse;

/** An HTTP route that also takes over upgrade requests (WebSockets) under its prefix. */
export interface EngineHttpRoute extends HttpRoute {
  /** For the host's `upgrade` event on requests under `prefix`. */
  readonly upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
}

export interface EngineProxyOptions {
  readonly authenticator: Authenticator;
  readonly policy: Policy;
  readonly logger: Logger;
  /** The engine with this uid, if any (the database, once started). */
  readonly lookup: (
    uid: string,
  ) => Promise<
    Pick<EngineRow, "uid" | "name" | "type" | "workspace" | "creator" | "shared" | "state" | "placement"> | undefined
  >;
  readonly runtime: () => EngineRuntime | undefined;
  readonly activity: ActivityTracker;
  /** Seals and opens the sessions of engine origins (content-session.ts in the kit's config). */
  readonly sessionKey: () => Promise<Uint8Array>;
  /** The URL of the replica running the engine when it is not this one (see ServiceContext.servedAt). */
  readonly servedAt?: (row: { name: string; placement: string | null }) => Promise<string | undefined>;
}

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "proxy-authorization",
  "http2-settings",
]);

class ProxyError extends Error {
  constructor(
    readonly status: number,
    readonly code: Code,
    message: string,
  ) {
    super(message);
  }
}

interface Parsed {
  readonly uid: string;
  /** Path and query as forwarded (without our token). */
  readonly forwardPath: string;
  readonly queryToken: string | undefined;
  readonly needsSlash: boolean;
}

function parseTarget(rawUrl: string): Parsed | undefined {
  const url = new URL(rawUrl, "http://engine");
  const rest = url.pathname.slice(ENGINE_PATH_PREFIX.length);
  const slash = rest.indexOf("/");
  const uid = slash < 0 ? rest : rest.slice(0, slash);
  if (!/^[0-9a-f-]{36}$/.test(uid)) return undefined;
  const queryToken = url.searchParams.get("token") ?? undefined;
  url.searchParams.delete("token");
  const search = url.searchParams.toString();
  return { uid, forwardPath: `${url.pathname}${search ? `?${search}` : ""}`, queryToken, needsSlash: slash < 0 };
}

function bearer(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization;
  return typeof auth === "string" && /^bearer\s+/i.test(auth) ? auth.replace(/^bearer\s+/i, "").trim() : undefined;
}

function requestHeaders(req: AnyRequest, keepUpgrade: boolean): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(":")) continue;
    if (CREDENTIAL_HEADERS.has(name) || name === "cookie" || name === "host" || name === ENGINE_ORIGIN_HEADER) continue;
    if (HOP_BY_HOP.has(name) && !(keepUpgrade && (name === "upgrade" || name === "connection"))) continue;
    out[name] = value as string | string[];
  }
  const cookies = cookiesForUserContent(req.headers.cookie);
  if (cookies) out.cookie = cookies;
  const host = (req.headers[":authority"] as string | undefined) ?? req.headers.host;
  if (host) {
    out.host = host;
    out["x-forwarded-host"] = host;
  }
  const remote = req.socket?.remoteAddress;
  if (remote)
    out["x-forwarded-for"] = req.headers["x-forwarded-for"] ? `${req.headers["x-forwarded-for"]}, ${remote}` : remote;
  out["x-forwarded-proto"] = (req.headers["x-forwarded-proto"] as string | undefined) ?? "http";
  return out;
}

export function createEngineProxy(options: EngineProxyOptions): EngineHttpRoute {
  const { authenticator, policy, logger } = options;

  /** The scope of this engine's sessions: its own origin, or its path on a shared one. */
  function scopeOf(req: AnyRequest, uid: string): string {
    const host = String(req.headers[":authority"] ?? req.headers.host ?? "");
    return req.headers[ENGINE_ORIGIN_HEADER] !== undefined ? sessionScope(host) : sessionScope(host, `/engines/${uid}`);
  }

  async function authorize(
    req: AnyRequest,
    target: Parsed,
  ): Promise<{
    principal: Principal;
    /** The token of `?token=`, to be traded for a session. */
    queryToken: string | undefined;
    row: NonNullable<Awaited<ReturnType<EngineProxyOptions["lookup"]>>>;
  }> {
    const header = bearer(req.headers);
    const token = header ?? target.queryToken;
    let principal: Principal | undefined;
    if (token === undefined) {
      principal = sessionFromCookies(await options.sessionKey(), req.headers.cookie, scopeOf(req, target.uid));
      if (!principal)
        throw new ProxyError(
          401,
          Code.Unauthenticated,
          "sign in: send Authorization: Bearer <token>, or open the URL once with ?token=<token>",
        );
    } else {
      try {
        principal = await authenticator.authenticate(`Bearer ${token}`);
      } catch (err) {
        const e = ConnectError.from(err);
        throw new ProxyError(e.code === Code.Unavailable ? 503 : 401, e.code, e.rawMessage);
      }
    }
    const pinned = req.headers[ENGINE_ORIGIN_HEADER];
    if (pinned !== undefined && pinned !== target.uid)
      throw new ProxyError(404, Code.NotFound, "this origin serves only its own engine");
    const row = await options.lookup(target.uid);
    if (!row || !canSee(policy, principal, row))
      throw new ProxyError(404, Code.NotFound, `engine ${target.uid} not found`);
    if (!policy.allows(principal, Action.ACCESS, row.type, row.workspace)) {
      throw new ProxyError(
        403,
        Code.PermissionDenied,
        `permission denied: ${principal.name} lacks actions/enginemanager/${row.type}/ACCESS on workspaces/${row.workspace}`,
      );
    }
    if (row.state !== S.RUNNING) {
      const starting = row.state === S.STARTING || row.state === S.CONNECTING;
      throw new ProxyError(
        starting ? 503 : 400,
        starting ? Code.Unavailable : Code.FailedPrecondition,
        starting
          ? `${row.name} is ${row.state}; retry shortly`
          : `${row.name} is ${row.state}; it can be opened only while STATE_RUNNING`,
      );
    }
    return { principal, queryToken: header === undefined ? target.queryToken : undefined, row };
  }

  async function endpointOf(uid: string): Promise<{ host: string; port: number }> {
    const endpoint = await options.runtime()?.endpoint(uid);
    if (!endpoint) throw new ProxyError(503, Code.Unavailable, "the engine is not reachable yet; retry shortly");
    return endpoint;
  }

  function fail(res: AnyResponse, err: unknown): void {
    const e = err instanceof ProxyError ? err : new ProxyError(502, Code.Unavailable, "the engine did not answer");
    if (!(err instanceof ProxyError))
      logger.warn("engine proxy failed", { error: err instanceof Error ? err.message : String(err) });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = JSON.stringify({ code: e.code, message: e.message, details: [] });
    res.writeHead(e.status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  }

  async function handle(req: AnyRequest, res: AnyResponse): Promise<void> {
    const target = parseTarget(req.url ?? "/");
    if (!target)
      throw new ProxyError(404, Code.NotFound, "no engine at this path; engine URLs look like /engines/<uid>/");
    if (target.needsSlash) {
      res.writeHead(301, { location: target.forwardPath.replace(/^(\/engines\/[^/?]+)/, "$1/") });
      res.end();
      return;
    }
    const { principal, queryToken, row } = await authorize(req, target);
    const owner = await options.servedAt?.(row).catch((err: unknown) => {
      throw new ProxyError(503, Code.Unavailable, err instanceof Error ? err.message : String(err));
    });
    // The engine runs on another replica's host: the request goes there as it came, token included.
    if (owner && forwardHttp(req, res, owner)) return;
    if (owner) throw new ProxyError(503, Code.Unavailable, `${row.name} is served by another replica; retry shortly`);
    if (queryToken !== undefined) {
      // Keep the token out of the address bar and history, and out of the browser: a session of
      // this engine's origin (or path) alone stands for it from now on.
      const ownOrigin = req.headers[ENGINE_ORIGIN_HEADER] !== undefined;
      const host = String(req.headers[":authority"] ?? req.headers.host ?? "");
      const expires = sessionExpiry(queryToken);
      const cookie = sessionCookie(sealSession(await options.sessionKey(), principal, scopeOf(req, row.uid), expires), {
        path: ownOrigin ? "/" : `${ENGINE_PATH_PREFIX}${row.uid}/`,
        secure: ownOrigin
          ? secureOrigin(host, req.headers["x-forwarded-proto"])
          : req.headers["x-forwarded-proto"] === "https",
        expires,
      });
      if (req.method === "GET" || req.method === "HEAD") {
        res.writeHead(303, {
          location: target.forwardPath,
          "set-cookie": cookie,
          "cache-control": "no-store",
          "referrer-policy": "no-referrer",
        });
        res.end();
        return;
      }
      res.setHeader("set-cookie", cookie);
    }
    const endpoint = await endpointOf(row.uid);
    options.activity.touch(row.uid);
    await new Promise<void>((resolve) => {
      const upstream = httpRequest(
        {
          host: endpoint.host,
          port: endpoint.port,
          method: req.method,
          path: target.forwardPath,
          headers: requestHeaders(req, false),
        },
        (answer) => {
          const headers: Record<string, string | string[]> = {};
          for (const [name, value] of Object.entries(answer.headers)) {
            if (value !== undefined && !HOP_BY_HOP.has(name) && name !== "set-cookie") headers[name] = value;
          }
          // The engine's cookies stay on its origin and never pose as ours; ours go first.
          const existing = res.getHeader("set-cookie");
          const cookies = [
            ...(existing === undefined ? [] : Array.isArray(existing) ? existing.map(String) : [String(existing)]),
            ...userSetCookies(answer.headers["set-cookie"]),
          ];
          if (cookies.length > 0) headers["set-cookie"] = cookies;
          res.writeHead(answer.statusCode ?? 502, headers);
          answer.pipe(res as NodeJS.WritableStream);
          answer.on("end", resolve);
          answer.on("error", () => resolve());
        },
      );
      upstream.on("error", (err) => {
        fail(res, err);
        resolve();
      });
      res.on("close", () => {
        upstream.destroy();
        resolve();
      });
      (req as NodeJS.ReadableStream).pipe(upstream);
    });
  }

  async function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const target = parseTarget(req.url ?? "/");
    if (!target) throw new ProxyError(404, Code.NotFound, "no engine at this path");
    const { row } = await authorize(req, target);
    const owner = await options.servedAt?.(row).catch((err: unknown) => {
      throw new ProxyError(503, Code.Unavailable, err instanceof Error ? err.message : String(err));
    });
    if (owner) {
      if (forwardUpgrade(req, socket, head, owner)) return;
      throw new ProxyError(503, Code.Unavailable, "the engine moved between replicas; retry shortly");
    }
    const endpoint = await endpointOf(row.uid);
    options.activity.touch(row.uid);
    const upstream = connect(endpoint.port, endpoint.host);
    const headers = requestHeaders(req, true);
    const lines = [`${req.method ?? "GET"} ${target.forwardPath} HTTP/1.1`];
    for (const [name, value] of Object.entries(headers)) {
      for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${v}`);
    }
    spliceUpgrade(upstream, socket, lines, head, undefined, pipeUserUpgradeAnswer);
    let touched = 0;
    const touch = () => {
      const now = Date.now();
      if (now - touched > 1_000) {
        touched = now;
        options.activity.touch(row.uid);
      }
    };
    upstream.on("data", touch);
    socket.on("data", touch);
  }

  return {
    prefix: ENGINE_PATH_PREFIX,
    handler(req, res) {
      handle(req, res).catch((err: unknown) => fail(res, err));
    },
    upgrade(req, socket, head) {
      handleUpgrade(req, socket, head).catch((err: unknown) => {
        const e = err instanceof ProxyError ? err : new ProxyError(502, Code.Unavailable, "the engine did not answer");
        const body = JSON.stringify({ code: e.code, message: e.message, details: [] });
        socket.end(
          `HTTP/1.1 ${e.status} ${e.status === 401 ? "Unauthorized" : "Error"}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
      });
    },
  };
}

/**
 * DAI and H2O engines a second time at `/workspaces/<ws>/{daiEngines,h2oEngines}/<id>/...`, the
 * path of their `api_url` and `login_url` and the context path that the official client's
 * `get_connection_config()` hands to `h2o.connect`. The path is rewritten to the engine's
 * `/engines/<uid>/...` (where the engine runs with that context path) and handled by `route`, so
 * authentication, access checks and activity are the same. Neither H2O-3's REST answers nor
 * Driverless AI's carry absolute paths, so the rewrite is enough for their client libraries.
 */
export function createNameRoute(
  route: EngineHttpRoute,
  lookupUid: (name: string) => Promise<string | undefined>,
): EngineHttpRoute {
  const rewrite = async (req: IncomingMessage | Http2ServerRequest): Promise<void> => {
    const url = req.url ?? "/";
    const match = /^\/(workspaces\/[^/?]+\/(?:daiEngines|h2oEngines)\/[^/?]+)(\/[^?]*)?(\?.*)?$/.exec(url);
    const uid = (match && (await lookupUid(match[1]!))) ?? NO_ENGINE_UID;
    req.url = `${ENGINE_PATH_PREFIX}${uid}${match?.[2] ?? ""}${match?.[3] ?? ""}`;
  };
  return {
    prefix: NAME_PATH_PREFIX,
    handler(req, res) {
      rewrite(req).then(
        () => route.handler(req, res),
        () => {
          res.writeHead(503, { "content-type": "application/json" });
          res.end(JSON.stringify({ code: Code.Unavailable, message: "the engine service is not ready", details: [] }));
        },
      );
    },
    upgrade(req, socket, head) {
      rewrite(req).then(
        () => route.upgrade(req, socket, head),
        () => socket.destroy(),
      );
    },
  };
}
