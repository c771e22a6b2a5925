// Who may go on to a sandbox's port: the URL's shape, the port's existence and publicity, the
// replica that runs the sandbox, and for a private port the creator's token or session.
import type { IncomingMessage } from "node:http";
import {
  sealSession,
  secureOrigin,
  sessionCookie,
  sessionExpiry,
  sessionFromCookies,
  sessionScope,
} from "@aiem/kit/config";
import type { Principal } from "@aiem/kit/identity";
import { type HttpHandler, ServedElsewhere } from "@aiem/kit/server";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { Lifecycle } from "./lifecycle.js";
import type { PortProxyDeps } from "./port-proxy.js";
import { loadPort, loadSandboxByUid, sandboxStateName, type SandboxRow } from "./store.js";

/** Set by the edge, and only by it, on requests that came to a port's own origin. */
export const CONTENT_ORIGIN_HEADER = "x-aiem-content-origin";
const PATH = /^\/sandboxes\/([0-9a-f-]{36})\/(ports|public)\/([0-9]{4,5})(\/[^?#]*)?(\?.*)?$/;

export type PortRequest = Parameters<HttpHandler>[0] | IncomingMessage;

/** What a port's URL names. */
interface PortTarget {
  readonly uid: string;
  readonly port: number;
  readonly isPublic: boolean;
  /** What the browser sees as the port's root: its own origin's, or the path's. */
  readonly prefix: string;
  readonly rest: string;
  readonly query: URLSearchParams;
}

/** A request admitted to a port, with what forwarding it needs. */
export interface Admitted extends PortTarget {
  readonly agent: NonNullable<ReturnType<Lifecycle["handle"]>>;
}

export type Refusal = [http: number, code: number, message: string, extra?: Record<string, string>];
export interface Redirect {
  readonly status: number;
  readonly headers: Record<string, string>;
}

export type Admission =
  | { readonly refuse: Refusal }
  | { readonly redirect: Redirect }
  | { readonly go: Admitted }
  /** The URL of the replica that runs the sandbox's agent, which takes the request as it came. */
  | { readonly elsewhere: string };

/** Who may go on to the port, or the answer that stops the request here. */
export async function admit(deps: PortProxyDeps, req: PortRequest, upgrade: boolean): Promise<Admission> {
  const { context, lifecycle } = deps;
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
  const target: PortTarget = { uid, port, isPublic, prefix, rest, query };
  if (!isPublic) {
    const stopped = await admitCreator(deps, req, upgrade, sandbox, target);
    if (stopped) return stopped;
  }
  if (sandbox.state !== sandboxStateName(SandboxEngine_State.RUNNING)) {
    return { refuse: [503, 14, `${sandbox.name} is ${sandbox.state}; its ports are reachable while it runs`] };
  }
  await lifecycle.hold(sandbox);
  const agent = lifecycle.handle(sandbox);
  if (!agent) return { refuse: [503, 14, `the agent of ${sandbox.name} is being started again; retry shortly`] };
  return { go: { ...target, agent } };
}

/**
 * A private port: the sandbox's creator only, by a bearer token or a session cookie. A token in
 * the query of a browser's GET is traded for a session of the port's origin (or path): the answer
 * is a redirect that sets it. Undefined when the request goes on (its token taken out of `query`).
 */
async function admitCreator(
  deps: PortProxyDeps,
  req: PortRequest,
  upgrade: boolean,
  sandbox: SandboxRow,
  target: PortTarget,
): Promise<Admission | undefined> {
  const { query, prefix, port } = target;
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
    if (!deps.context.policy.isAdmin(principal))
      return { refuse: [404, 5, `no reachable port ${port} in this sandbox`] };
    return {
      refuse: [403, 7, `permission denied: only the creator of ${sandbox.name} may reach its private ports`],
    };
  }
  query.delete("token");
  if (token === fromQuery && fromQuery !== undefined && !upgrade && (req.method === "GET" || req.method === "HEAD")) {
    // The browser keeps a session of this port's origin (or path), never the token.
    const remaining = query.toString();
    const expires = sessionExpiry(fromQuery);
    const forwardedProto = req.headers["x-forwarded-proto"];
    return {
      redirect: {
        status: 303,
        headers: {
          location: `${prefix}${target.rest}${remaining ? `?${remaining}` : ""}`,
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
  return undefined;
}
