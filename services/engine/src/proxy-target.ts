// What a request to an engine URL names: the engine (by uid, under `/engines/<uid>/`), the path
// and query to forward without our `?token=`, and the credentials it carries.
import type { IncomingHttpHeaders } from "node:http";
import type { AnyRequest } from "./engine-http-route.js";

export const ENGINE_PATH_PREFIX = "/engines/";
/**
 * Set by the edge, and only by it, on requests that came to an engine's own origin: only that
 * engine is served there (a name path could otherwise name another).
 */
export const ENGINE_ORIGIN_HEADER = "x-aiem-engine-origin";

export interface EngineTarget {
  readonly uid: string;
  /** Path and query as forwarded (without our token). */
  readonly forwardPath: string;
  readonly queryToken: string | undefined;
  /** `/engines/<uid>` without the slash its pages' relative links need. */
  readonly needsSlash: boolean;
}

/** The target of a URL under ENGINE_PATH_PREFIX, or undefined when it names no engine uid. */
export function parseTarget(rawUrl: string): EngineTarget | undefined {
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

/** The token of an `Authorization: Bearer` header. */
export function bearerOf(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization;
  return typeof auth === "string" && /^bearer\s+/i.test(auth) ? auth.replace(/^bearer\s+/i, "").trim() : undefined;
}

/** The host the caller addressed (HTTP/2's `:authority` or HTTP/1's `Host`). */
export function hostOf(req: AnyRequest): string {
  return String(req.headers[":authority"] ?? req.headers.host ?? "");
}

/** Whether the request came to the engine's own origin (the edge says so) rather than a path URL. */
export function atOwnOrigin(req: AnyRequest): boolean {
  return req.headers[ENGINE_ORIGIN_HEADER] !== undefined;
}
