// The sessions of engine URLs. A `?token=` is traded, once, for a session of the engine's origin
// (or of its path on a shared origin) in an HttpOnly cookie, never the token itself, and a
// redirect to the same URL without it: the token stays out of the address bar, the history and
// the browser (content-session.ts in the kit's config).
import { sealSession, secureOrigin, sessionCookie, sessionExpiry, sessionScope } from "@aiem/kit/config";
import type { Principal } from "@aiem/kit/identity";
import type { AnyRequest, AnyResponse } from "./engine-http-route.js";
import { ENGINE_PATH_PREFIX, atOwnOrigin, hostOf } from "./proxy-target.js";

/** The scope of an engine's sessions: its own origin, or its path on a shared one. */
export function sessionScopeOf(req: AnyRequest, uid: string): string {
  const host = hostOf(req);
  return atOwnOrigin(req) ? sessionScope(host) : sessionScope(host, `${ENGINE_PATH_PREFIX}${uid}`);
}

export interface SessionStart {
  readonly sessionKey: Uint8Array;
  readonly principal: Principal;
  /** The token of `?token=`, whose expiry the session takes. */
  readonly queryToken: string;
  readonly uid: string;
  /** Where the redirect leads: the URL without the token. */
  readonly forwardPath: string;
}

/**
 * Sets the session's cookie. A page load (GET, HEAD) is answered here with the redirect (true);
 * any other method goes on to the engine with the cookie on its answer (false).
 */
export function startSession(req: AnyRequest, res: AnyResponse, start: SessionStart): boolean {
  const ownOrigin = atOwnOrigin(req);
  const expires = sessionExpiry(start.queryToken);
  const sealed = sealSession(start.sessionKey, start.principal, sessionScopeOf(req, start.uid), expires);
  const cookie = sessionCookie(sealed, {
    path: ownOrigin ? "/" : `${ENGINE_PATH_PREFIX}${start.uid}/`,
    secure: ownOrigin
      ? secureOrigin(hostOf(req), req.headers["x-forwarded-proto"])
      : req.headers["x-forwarded-proto"] === "https",
    expires,
  });
  if (req.method === "GET" || req.method === "HEAD") {
    res.writeHead(303, {
      location: start.forwardPath,
      "set-cookie": cookie,
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
    });
    res.end();
    return true;
  }
  res.setHeader("set-cookie", cookie);
  return false;
}
