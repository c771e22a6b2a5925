// Serves a sandbox's ports through the edge, under `/sandboxes/{uid}/ports/{port}/...` (the
// port's internal URL: the sandbox creator's token is required) and `/sandboxes/{uid}/public/
// {port}/...` (its public URL, open to anyone while the port is public). Each request is sent
// over a tunnel that the sandbox's agent opens to the port on the sandbox's own loopback, so
// sandboxes never take host ports and never collide.
//
// A browser cannot add a bearer header to a link: `?token=<token>` on the internal URL is
// checked and traded for a session of that port's origin (or path) in an HttpOnly cookie, never
// the token itself, and the browser is sent to the same URL without the token. The token, our
// cookies and the Authorization header are removed before the request reaches the program in the
// sandbox, on public ports too; the program's cookies stay on its own origin (see
// user-content.ts in the kit).
//
// At a port's own origin (`{port}-{uid}.sandboxes.<base>`, see the edge's content-origins.ts) the
// edge rewrites the request to the path above and sets CONTENT_ORIGIN_HEADER: the port's paths
// are then the program's own, with no prefix in redirects, and the session cookie is the
// origin's `__Host-` one. WebSockets take the same way (`upgrade`).
import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from "node:http";
import type { Duplex } from "node:stream";
import {
  sealSession,
  secureOrigin,
  sessionCookie,
  sessionExpiry,
  sessionFromCookies,
  sessionScope,
} from "@aiem/kit/config";
import type { Authenticator, Principal } from "@aiem/kit/identity";
import type { Logger } from "@aiem/kit/logger";
import {
  CREDENTIAL_HEADERS,
  cookiesForUserContent,
  forwardHttp,
  forwardUpgrade,
  pipeUserUpgradeAnswer,
  ServedElsewhere,
  userSetCookies,
  type HttpHandler,
  type HttpRoute,
} from "@aiem/kit/server";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { Lifecycle } from "./lifecycle.js";
import type { ServiceContext } from "./service-context.js";
import { loadPort, loadSandboxByUid, sandboxStateName } from "./store.js";

/** Set by the edge, and only by it, on requests that came to a port's own origin. */
export const CONTENT_ORIGIN_HEADER = "x-aiem-content-origin";
const PATH = /^\/sandboxes\/([0-9a-f-]{36})\/(ports|public)\/([0-9]{4,5})(\/[^?#]*)?(\?.*)?$/;
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "host",
  "http2-settings",
]);

type NodeRequest = Parameters<HttpHandler>[0];
type NodeResponse = Parameters<HttpHandler>[1];

export interface PortProxyDeps {
  readonly context: ServiceContext;
  readonly lifecycle: Lifecycle;
  readonly authenticator: Authenticator;
  readonly logger: Logger;
  /** Seals and opens the sessions of port origins (content-session.ts in the kit's config). */
  readonly sessionKey: () => Promise<Uint8Array>;
}

export interface PortProxy {
  readonly route: HttpRoute;
  /** Cuts the forwarded connections of a port (only those through its public URL, if asked). */
  closeConnections(sandboxUid: string, port: number, onlyPublic: boolean): void;
}

function status(
  res: NodeResponse,
  http: number,
  code: number,
  message: string,
  extra: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(http, { "content-type": "application/json", ...extra });
  res.end(JSON.stringify({ code, message, details: [] }));
}

interface Admitted {
  readonly uid: string;
  readonly port: number;
  readonly isPublic: boolean;
  readonly prefix: string;
  readonly rest: string;
  readonly query: URLSearchParams;
  readonly agent: NonNullable<ReturnType<Lifecycle["handle"]>>;
}

type Admission =
  | { readonly refuse: [http: number, code: number, message: string, extra?: Record<string, string>] }
  | { readonly redirect: { readonly status: number; readonly headers: Record<string, string> } }
  | { readonly go: Admitted }
  /** The URL of the replica that runs the sandbox's agent, which takes the request as it came. */
  | { readonly elsewhere: string };

function refuseUpgrade(
  socket: Duplex,
  http: number,
  code: number,
  message: string,
  extra: Record<string, string> = {},
): void {
  const body = JSON.stringify({ code, message, details: [] });
  const lines = [
    `HTTP/1.1 ${http} ${http < 400 ? "Redirect" : "Refused"}`,
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    "connection: close",
  ];
  for (const [name, value] of Object.entries(extra)) lines.push(`${name}: ${value}`);
  socket.end(`${lines.join("\r\n")}\r\n\r\n${body}`);
}

export function createPortProxy(deps: PortProxyDeps): PortProxy {
  const { context, lifecycle } = deps;
  /** Open forwarded requests by `<uid>/<port>`, with whether they came through the public URL. */
  const open = new Map<string, Set<{ isPublic: boolean; cut: () => void }>>();

  /**
   * One forwarded request or upgrade: open (closeConnections cuts it, and its tunnel) and
   * keeping the sandbox in use until `finish`, which is safe to call more than once.
   */
  function forwarded(
    go: Admitted,
    cut: () => void,
  ): { state: { tunnel?: Duplex; finished: boolean }; finish: () => void } {
    lifecycle.enter(go.uid);
    const key = `${go.uid}/${go.port}`;
    const state: { tunnel?: Duplex; finished: boolean } = { finished: false };
    const entry = {
      isPublic: go.isPublic,
      cut: () => {
        state.tunnel?.destroy();
        cut();
      },
    };
    let set = open.get(key);
    if (!set) {
      set = new Set();
      open.set(key, set);
    }
    set.add(entry);
    const finish = () => {
      if (state.finished) return;
      state.finished = true;
      open.get(key)?.delete(entry);
      if (open.get(key)?.size === 0) open.delete(key);
      state.tunnel?.destroy();
      lifecycle.leave(go.uid);
    };
    return { state, finish };
  }

  /** Who may go on to the port, or the answer that stops the request here. */
  async function admit(req: NodeRequest | IncomingMessage, upgrade: boolean): Promise<Admission> {
    const m = PATH.exec(req.url ?? "");
    if (!m) return { refuse: [404, 5, "not found: port URLs look like /sandboxes/{uid}/ports/{port}/"] };
    const [, uid, kind, portText, rest, search] = m as unknown as [
      string,
      string,
      "ports" | "public",
      string,
      string | undefined,
      string | undefined,
    ];
    const port = Number(portText);
    const isPublic = kind === "public";
    // What the browser sees as the port's root: its own origin's, or the path's.
    const prefix = req.headers[CONTENT_ORIGIN_HEADER] ? "" : `/sandboxes/${uid}/${kind}/${port}`;
    // Relative links inside the program's pages need the trailing slash.
    if (rest === undefined) return { redirect: { status: 308, headers: { location: `${prefix}/${search ?? ""}` } } };
    const db = context.database().db;
    const sandbox = await loadSandboxByUid(db, uid);
    const row = sandbox ? await loadPort(db, uid, port) : undefined;
    if (!sandbox || !row || (isPublic && !row.public))
      return { refuse: [404, 5, `no reachable port ${port} in this sandbox`] };
    if (sandbox.placement !== null && sandbox.placement !== lifecycle.placement) {
      // Its agent runs on another replica's host: the request goes there whole, token and all.
      const url = await lifecycle.requireServedHere(sandbox).then(
        () => undefined,
        (err: unknown) => (err instanceof ServedElsewhere ? err.url : undefined),
      );
      return url
        ? { elsewhere: url }
        : { refuse: [503, 14, `the replica running ${sandbox.name} is unavailable; retry shortly`] };
    }

    const query = new URLSearchParams(search?.slice(1) ?? "");
    if (!isPublic) {
      const fromQuery = query.get("token") ?? undefined;
      const header = req.headers.authorization;
      const token = typeof header === "string" && /^bearer /i.test(header) ? header.slice(7).trim() : fromQuery;
      const host = String(req.headers.host ?? (req.headers as Record<string, unknown>)[":authority"] ?? "");
      const scope = sessionScope(host, prefix);
      const challenge = { "www-authenticate": "Bearer" };
      let principal: Principal | undefined;
      if (token === undefined) {
        principal = sessionFromCookies(await deps.sessionKey(), req.headers.cookie, scope);
        if (!principal)
          return {
            refuse: [
              401,
              16,
              "this port needs the sandbox creator's token: an Authorization: Bearer header, or ?token= once in a browser",
              challenge,
            ],
          };
      } else {
        try {
          principal = await deps.authenticator.authenticate(`Bearer ${token}`);
        } catch {
          return { refuse: [401, 16, "the token is not valid", challenge] };
        }
      }
      if (principal.name !== sandbox.creator) {
        // Other members get the answer of a missing port; administrators, who may see the
        // sandbox anyway, are told why.
        if (!context.policy.isAdmin(principal))
          return { refuse: [404, 5, `no reachable port ${port} in this sandbox`] };
        return {
          refuse: [403, 7, `permission denied: only the creator of ${sandbox.name} may reach its private ports`],
        };
      }
      if (
        token === fromQuery &&
        fromQuery !== undefined &&
        !upgrade &&
        (req.method === "GET" || req.method === "HEAD")
      ) {
        // The browser keeps a session of this port's origin (or path), never the token.
        query.delete("token");
        const rest2 = query.toString();
        const expires = sessionExpiry(fromQuery);
        const forwardedProto = req.headers["x-forwarded-proto"];
        return {
          redirect: {
            status: 303,
            headers: {
              location: `${prefix}${rest}${rest2 ? `?${rest2}` : ""}`,
              "set-cookie": sessionCookie(sealSession(await deps.sessionKey(), principal, scope, expires), {
                path: `${prefix}/`,
                secure: prefix === "" ? secureOrigin(host, forwardedProto) : forwardedProto === "https",
                expires,
              }),
              "cache-control": "no-store",
              "referrer-policy": "no-referrer",
            },
          },
        };
      }
      query.delete("token");
    }
    if (sandbox.state !== sandboxStateName(SandboxEngine_State.RUNNING)) {
      return { refuse: [503, 14, `${sandbox.name} is ${sandbox.state}; its ports are reachable while it runs`] };
    }
    const agent = lifecycle.handle(sandbox);
    if (!agent) return { refuse: [503, 14, `the agent of ${sandbox.name} is being started again; retry shortly`] };
    return { go: { uid, port, isPublic, prefix, rest, query, agent } };
  }

  /**
   * Headers for the program: ours and the caller's credentials (Authorization, our cookies)
   * removed on every port, public ones too, the browser's host and prefix told.
   */
  function forwardHeaders(req: NodeRequest | IncomingMessage, go: Admitted, keepUpgrade: boolean): OutgoingHttpHeaders {
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers as IncomingHttpHeaders)) {
      if (value === undefined || name.startsWith(":") || name === CONTENT_ORIGIN_HEADER) continue;
      if (HOP_BY_HOP.has(name) && !(keepUpgrade && (name === "upgrade" || name === "connection"))) continue;
      if (name === "cookie" || CREDENTIAL_HEADERS.has(name)) continue;
      headers[name] = value;
    }
    const cookie = cookiesForUserContent(req.headers.cookie);
    if (cookie) headers.cookie = cookie;
    const originalHost = req.headers.host ?? (req.headers as Record<string, string | undefined>)[":authority"];
    headers.host = `localhost:${go.port}`;
    if (originalHost) headers["x-forwarded-host"] = originalHost;
    headers["x-forwarded-proto"] = req.headers["x-forwarded-proto"] ?? "http";
    if (go.prefix) headers["x-forwarded-prefix"] = go.prefix;
    const remote = req.socket?.remoteAddress;
    if (remote) headers["x-forwarded-for"] = remote;
    return headers;
  }

  async function handle(req: NodeRequest, res: NodeResponse): Promise<void> {
    const admission = await admit(req, false);
    if ("refuse" in admission) return status(res, ...admission.refuse);
    if ("elsewhere" in admission) {
      if (forwardHttp(req, res, admission.elsewhere)) return;
      return status(res, 503, 14, "the sandbox moved between replicas; retry shortly");
    }
    if ("redirect" in admission) {
      res.writeHead(admission.redirect.status, admission.redirect.headers);
      res.end();
      return;
    }
    const go = admission.go;
    const { uid, port, prefix, rest, query, agent } = go;
    const { state, finish } = forwarded(go, () => {
      if (!res.writableEnded) (res as { destroy?: () => void }).destroy?.();
    });
    res.once("close", finish);
    let tunnel: Duplex;
    try {
      tunnel = state.tunnel = await agent.openTunnel(port);
    } catch {
      finish();
      return status(res, 502, 14, `nothing accepts connections on port ${port} in the sandbox`);
    }
    if (state.finished) {
      tunnel.destroy();
      return;
    }
    tunnel.on("data", () => lifecycle.touch(uid));
    tunnel.on("error", () => undefined);

    const headers = forwardHeaders(req, go, false);
    const remaining = query.toString();

    const upstream = httpRequest(
      {
        createConnection: () => tunnel as never,
        method: req.method,
        path: `${rest}${remaining ? `?${remaining}` : ""}`,
        headers,
      },
      (answer) => {
        const out: OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value === undefined || HOP_BY_HOP.has(name)) continue;
          if (name === "set-cookie") {
            const cookies = userSetCookies(value);
            if (cookies.length > 0) out[name] = cookies;
            continue;
          }
          // A redirect to an absolute path of the program stays under the port's prefix.
          out[name] =
            name === "location" && typeof value === "string" && value.startsWith("/") && !value.startsWith("//")
              ? `${prefix}${value}`
              : value;
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

  // A WebSocket (or any upgrade) to the program: the handshake is replayed on the tunnel and
  // the program answers it; then both ways are spliced.
  async function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const admission = await admit(req, true);
    if ("refuse" in admission) return refuseUpgrade(socket, ...admission.refuse);
    if ("elsewhere" in admission) {
      if (forwardUpgrade(req, socket, head, admission.elsewhere)) return;
      return refuseUpgrade(socket, 503, 14, "the sandbox moved between replicas; retry shortly");
    }
    if ("redirect" in admission)
      return refuseUpgrade(socket, admission.redirect.status, 5, "", admission.redirect.headers);
    const go = admission.go;
    const { state, finish: end } = forwarded(go, () => socket.destroy());
    const finish = () => {
      end();
      socket.destroy();
    };
    socket.once("close", finish);
    socket.on("error", finish);
    let tunnel: Duplex;
    try {
      tunnel = state.tunnel = await go.agent.openTunnel(go.port);
    } catch {
      if (!state.finished)
        refuseUpgrade(socket, 502, 14, `nothing accepts connections on port ${go.port} in the sandbox`);
      finish();
      return;
    }
    if (state.finished) {
      tunnel.destroy();
      return;
    }
    const remaining = go.query.toString();
    const lines = [`${req.method ?? "GET"} ${go.rest}${remaining ? `?${remaining}` : ""} HTTP/1.1`];
    for (const [name, value] of Object.entries(forwardHeaders(req, go, true))) {
      for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${String(v)}`);
    }
    tunnel.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head.length > 0) tunnel.write(head);
    tunnel.on("data", () => lifecycle.touch(go.uid));
    socket.on("data", () => lifecycle.touch(go.uid));
    tunnel.on("error", finish);
    tunnel.once("close", finish);
    pipeUserUpgradeAnswer(tunnel, socket);
    socket.pipe(tunnel);
  }

  return {
    route: {
      prefix: "/sandboxes/",
      upgrade: (req, socket, head) => {
        handleUpgrade(req, socket, head).catch((err: unknown) => {
          deps.logger.error("forwarding an upgrade to a sandbox port failed", {
            error: err instanceof Error ? err.message : String(err),
          });
          refuseUpgrade(socket, 500, 13, "internal error");
        });
      },
      handler: (req, res) => {
        handle(req, res).catch((err: unknown) => {
          deps.logger.error("forwarding to a sandbox port failed", {
            error: err instanceof Error ? err.message : String(err),
          });
          status(res, 500, 13, "internal error");
        });
      },
    },
    closeConnections(uid, port, onlyPublic) {
      for (const entry of [...(open.get(`${uid}/${port}`) ?? [])]) if (!onlyPublic || entry.isPublic) entry.cut();
    },
  };
}
