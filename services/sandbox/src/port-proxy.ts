// Serves a sandbox's ports through the edge, under `/sandboxes/{uid}/ports/{port}/...` (the
// port's internal URL: the sandbox creator's token is required) and `/sandboxes/{uid}/public/
// {port}/...` (its public URL, open to anyone while the port is public). Each request is sent
// over a tunnel that the sandbox's agent opens to the port on the sandbox's own loopback, so
// sandboxes never take host ports and never collide.
//
// A browser cannot add a bearer header to a link: `?token=<token>` on the internal URL is
// checked, kept in an HttpOnly cookie scoped to that port's path, and the browser is sent to the
// same URL without the token. The token, the cookie and the Authorization header are removed
// before the request reaches the program in the sandbox.
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from "node:http";
import type { Duplex } from "node:stream";
import type { Authenticator } from "@aiem/kit/identity";
import type { Logger } from "@aiem/kit/logger";
import { forwardHttp, ServedElsewhere, type HttpHandler, type HttpRoute } from "@aiem/kit/server";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { Lifecycle } from "./lifecycle.js";
import type { ServiceContext } from "./service-context.js";
import { loadPort, loadSandboxByUid, sandboxStateName } from "./store.js";

export const PORT_TOKEN_COOKIE = "aiem_port_token";
const PATH = /^\/sandboxes\/([0-9a-f-]{36})\/(ports|public)\/([0-9]{4,5})(\/[^?#]*)?(\?.*)?$/;
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer", "host", "http2-settings"]);

type NodeRequest = Parameters<HttpHandler>[0];
type NodeResponse = Parameters<HttpHandler>[1];

export interface PortProxyDeps {
  readonly context: ServiceContext;
  readonly lifecycle: Lifecycle;
  readonly authenticator: Authenticator;
  readonly logger: Logger;
}

export interface PortProxy {
  readonly route: HttpRoute;
  /** Cuts the forwarded connections of a port (only those through its public URL, if asked). */
  closeConnections(sandboxUid: string, port: number, onlyPublic: boolean): void;
}

function status(res: NodeResponse, http: number, code: number, message: string, extra: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(http, { "content-type": "application/json", ...extra });
  res.end(JSON.stringify({ code, message, details: [] }));
}

function cookieValue(header: string | string[] | undefined, name: string): string | undefined {
  const text = Array.isArray(header) ? header.join("; ") : header;
  for (const part of text?.split(";") ?? []) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

function withoutCookie(header: string | string[] | undefined, name: string): string | undefined {
  const text = Array.isArray(header) ? header.join("; ") : header;
  const kept = (text ?? "")
    .split(";")
    .map((p) => p.trim())
    .filter((p) => p !== "" && p.slice(0, p.indexOf("=")).trim() !== name);
  return kept.length > 0 ? kept.join("; ") : undefined;
}

export function createPortProxy(deps: PortProxyDeps): PortProxy {
  const { context, lifecycle } = deps;
  /** Open forwarded requests by `<uid>/<port>`, with whether they came through the public URL. */
  const open = new Map<string, Set<{ isPublic: boolean; cut: () => void }>>();

  async function handle(req: NodeRequest, res: NodeResponse): Promise<void> {
    const m = PATH.exec(req.url ?? "");
    if (!m) return status(res, 404, 5, "not found: port URLs look like /sandboxes/{uid}/ports/{port}/");
    const [, uid, kind, portText, rest, search] = m as unknown as [string, string, "ports" | "public", string, string | undefined, string | undefined];
    const port = Number(portText);
    const isPublic = kind === "public";
    const prefix = `/sandboxes/${uid}/${kind}/${port}`;
    if (rest === undefined) {
      // Relative links inside the program's pages need the trailing slash.
      res.writeHead(308, { location: `${prefix}/${search ?? ""}` });
      res.end();
      return;
    }
    const db = context.database().db;
    const sandbox = await loadSandboxByUid(db, uid);
    const row = sandbox ? await loadPort(db, uid, port) : undefined;
    if (!sandbox || !row || (isPublic && !row.public)) return status(res, 404, 5, `no reachable port ${port} in this sandbox`);
    if (sandbox.placement !== null && sandbox.placement !== lifecycle.placement) {
      // Its agent runs on another replica's host: the request goes there whole, token and all.
      const url = await lifecycle.requireServedHere(sandbox).then(
        () => undefined,
        (err: unknown) => (err instanceof ServedElsewhere ? err.url : undefined),
      );
      if (url && forwardHttp(req, res, url)) return;
      return status(res, 503, 14, `the replica running ${sandbox.name} is unavailable; retry shortly`);
    }

    const query = new URLSearchParams(search?.slice(1) ?? "");
    if (!isPublic) {
      const fromQuery = query.get("token") ?? undefined;
      const header = req.headers["authorization"];
      const token = typeof header === "string" && /^bearer /i.test(header) ? header.slice(7).trim() : (fromQuery ?? cookieValue(req.headers["cookie"], PORT_TOKEN_COOKIE));
      if (!token) {
        return status(res, 401, 16, "this port needs the sandbox creator's token: an Authorization: Bearer header, or ?token= once in a browser", {
          "www-authenticate": "Bearer",
        });
      }
      let principal;
      try {
        principal = await deps.authenticator.authenticate(`Bearer ${token}`);
      } catch {
        return status(res, 401, 16, "the token is not valid", { "www-authenticate": "Bearer" });
      }
      if (principal.name !== sandbox.creator) return status(res, 403, 7, `permission denied: only the creator of ${sandbox.name} may reach its private ports`);
      if (fromQuery !== undefined && (req.method === "GET" || req.method === "HEAD")) {
        query.delete("token");
        const rest2 = query.toString();
        const secure = (req.headers["x-forwarded-proto"] ?? "") === "https" ? "; Secure" : "";
        res.writeHead(303, {
          location: `${prefix}${rest}${rest2 ? `?${rest2}` : ""}`,
          "set-cookie": `${PORT_TOKEN_COOKIE}=${encodeURIComponent(token)}; Path=${prefix}/; HttpOnly; SameSite=Lax${secure}`,
          "cache-control": "no-store",
        });
        res.end();
        return;
      }
      query.delete("token");
    }
    if (sandbox.state !== sandboxStateName(SandboxEngine_State.RUNNING)) {
      return status(res, 503, 14, `${sandbox.name} is ${sandbox.state}; its ports are reachable while it runs`);
    }
    const agent = lifecycle.handle(sandbox);
    if (!agent) return status(res, 503, 14, `the agent of ${sandbox.name} is being started again; retry shortly`);

    lifecycle.enter(uid);
    const key = `${uid}/${port}`;
    let tunnel: Duplex | undefined;
    const entry = {
      isPublic,
      cut: () => {
        tunnel?.destroy();
        if (!res.writableEnded) (res as { destroy?: () => void }).destroy?.();
      },
    };
    let set = open.get(key);
    if (!set) open.set(key, (set = new Set()));
    set.add(entry);
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      open.get(key)?.delete(entry);
      if (open.get(key)?.size === 0) open.delete(key);
      tunnel?.destroy();
      lifecycle.leave(uid);
    };
    res.once("close", finish);
    try {
      tunnel = await agent.openTunnel(port);
    } catch {
      finish();
      return status(res, 502, 14, `nothing accepts connections on port ${port} in the sandbox`);
    }
    if (finished) {
      tunnel.destroy();
      return;
    }
    tunnel.on("data", () => lifecycle.touch(uid));
    tunnel.on("error", () => undefined);

    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers as IncomingHttpHeaders)) {
      if (value === undefined || name.startsWith(":") || HOP_BY_HOP.has(name)) continue;
      if (name === "cookie" || (name === "authorization" && !isPublic)) continue;
      headers[name] = value;
    }
    const cookie = withoutCookie(req.headers["cookie"], PORT_TOKEN_COOKIE);
    if (cookie) headers["cookie"] = cookie;
    const originalHost = req.headers["host"] ?? (req.headers as Record<string, string | undefined>)[":authority"];
    headers["host"] = `localhost:${port}`;
    if (originalHost) headers["x-forwarded-host"] = originalHost;
    headers["x-forwarded-proto"] = req.headers["x-forwarded-proto"] ?? "http";
    headers["x-forwarded-prefix"] = prefix;
    const remote = req.socket?.remoteAddress;
    if (remote) headers["x-forwarded-for"] = remote;
    const remaining = query.toString();

    const upstream = httpRequest(
      { createConnection: () => tunnel as never, method: req.method, path: `${rest}${remaining ? `?${remaining}` : ""}`, headers },
      (answer) => {
        const out: OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value === undefined || HOP_BY_HOP.has(name)) continue;
          // A redirect to an absolute path of the program stays under the port's prefix.
          out[name] = name === "location" && typeof value === "string" && value.startsWith("/") && !value.startsWith("//") ? `${prefix}${value}` : value;
        }
        res.writeHead(answer.statusCode ?? 502, out);
        answer.on("data", () => lifecycle.touch(uid));
        answer.pipe(res as unknown as NodeJS.WritableStream);
        answer.once("error", () => (res as { destroy?: () => void }).destroy?.());
      },
    );
    upstream.on("error", () => {
      status(res, 502, 14, `the program on port ${port} closed the connection`);
      finish();
    });
    res.once("close", () => upstream.destroy());
    (req as unknown as NodeJS.ReadableStream).pipe(upstream);
  }

  return {
    route: {
      prefix: "/sandboxes/",
      handler: (req, res) => {
        handle(req, res).catch((err: unknown) => {
          deps.logger.error("forwarding to a sandbox port failed", { error: err instanceof Error ? err.message : String(err) });
          status(res, 500, 13, "internal error");
        });
      },
    },
    closeConnections(uid, port, onlyPublic) {
      for (const entry of [...(open.get(`${uid}/${port}`) ?? [])]) if (!onlyPublic || entry.isPublic) entry.cut();
    },
  };
}
