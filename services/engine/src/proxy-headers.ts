// The headers that cross the engine proxy. Towards the engine: never our credentials, our cookies
// or the hop-by-hop headers, but the Host the caller used and the usual `x-forwarded-*`. Back from
// it: never a cookie that could pose as ours (user-content.ts in the kit).
import type { IncomingMessage } from "node:http";
import { CREDENTIAL_HEADERS, cookiesForUserContent, isHopByHop, userSetCookies } from "@aiem/kit/server";
import type { AnyRequest, AnyResponse } from "./engine-http-route.js";
import { ENGINE_ORIGIN_HEADER } from "./proxy-target.js";

/** The request's headers as the engine gets them; `keepUpgrade` for a WebSocket handshake. */
export function requestHeaders(req: AnyRequest, keepUpgrade: boolean): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(":")) continue;
    if (CREDENTIAL_HEADERS.has(name) || name === "cookie" || name === "host" || name === ENGINE_ORIGIN_HEADER) continue;
    if (isHopByHop(name, keepUpgrade)) continue;
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

/**
 * The engine's answer headers as the caller gets them. The engine's cookies stay on its origin
 * and never pose as ours; ours (a session just made, already on `res`) go first.
 */
export function answerHeaders(answer: IncomingMessage, res: AnyResponse): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined || isHopByHop(name) || name === "proxy-authorization" || name === "set-cookie") continue;
    headers[name] = value;
  }
  const existing = res.getHeader("set-cookie");
  const cookies = [
    ...(existing === undefined ? [] : Array.isArray(existing) ? existing.map(String) : [String(existing)]),
    ...userSetCookies(answer.headers["set-cookie"]),
  ];
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  return headers;
}
