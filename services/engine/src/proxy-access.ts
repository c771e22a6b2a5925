// Who may open an engine URL: the caller, signed in by bearer header, `?token=` or a session of
// the engine's origin, must be able to see the engine, hold ACCESS on its kind, and the engine
// must run. At an engine's own origin only that engine is served.
import { ConnectError } from "@connectrpc/connect";
import { Action, type Policy } from "@aiem/kit/authz";
import { sessionFromCookies } from "@aiem/kit/config";
import { Code } from "@aiem/kit/errors";
import type { Authenticator, Principal } from "@aiem/kit/identity";
import { canSee } from "./access.js";
import type { AnyRequest } from "./engine-http-route.js";
import { S } from "./kinds.js";
import { ProxyError } from "./proxy-error.js";
import { sessionScopeOf } from "./proxy-session.js";
import { ENGINE_ORIGIN_HEADER, bearerOf, type EngineTarget } from "./proxy-target.js";
import type { EngineRow } from "./store.js";

/** What the proxy reads of an engine's row. */
export type ProxiedEngine = Pick<
  EngineRow,
  "uid" | "name" | "type" | "workspace" | "creator" | "shared" | "state" | "placement"
>;

export interface ProxyAccessOptions {
  readonly authenticator: Authenticator;
  readonly policy: Policy;
  /** The engine with this uid, if any (the database, once started). */
  readonly lookup: (uid: string) => Promise<ProxiedEngine | undefined>;
  /** Seals and opens the sessions of engine origins (content-session.ts in the kit's config). */
  readonly sessionKey: () => Promise<Uint8Array>;
}

export interface Admitted {
  readonly principal: Principal;
  /** The token of `?token=`, to be traded for a session. */
  readonly queryToken: string | undefined;
  readonly row: ProxiedEngine;
}

async function signedIn(options: ProxyAccessOptions, req: AnyRequest, target: EngineTarget): Promise<Principal> {
  const token = bearerOf(req.headers) ?? target.queryToken;
  if (token === undefined) {
    const principal = sessionFromCookies(
      await options.sessionKey(),
      req.headers.cookie,
      sessionScopeOf(req, target.uid),
    );
    if (principal) return principal;
    throw new ProxyError(
      401,
      Code.Unauthenticated,
      "sign in: send Authorization: Bearer <token>, or open the URL once with ?token=<token>",
    );
  }
  try {
    return await options.authenticator.authenticate(`Bearer ${token}`);
  } catch (err) {
    const e = ConnectError.from(err);
    throw new ProxyError(e.code === Code.Unavailable ? 503 : 401, e.code, e.rawMessage);
  }
}

function requireRunning(row: ProxiedEngine): void {
  if (row.state === S.RUNNING) return;
  const starting = row.state === S.STARTING || row.state === S.CONNECTING;
  throw new ProxyError(
    starting ? 503 : 400,
    starting ? Code.Unavailable : Code.FailedPrecondition,
    starting
      ? `${row.name} is ${row.state}; retry shortly`
      : `${row.name} is ${row.state}; it can be opened only while STATE_RUNNING`,
  );
}

/** The caller and the engine they may open now, or the ProxyError that refuses them. */
export async function admit(options: ProxyAccessOptions, req: AnyRequest, target: EngineTarget): Promise<Admitted> {
  const { policy } = options;
  const principal = await signedIn(options, req, target);
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
  requireRunning(row);
  const header = bearerOf(req.headers);
  return { principal, queryToken: header === undefined ? target.queryToken : undefined, row };
}
