// The headers a forwarded request carries to the program in the sandbox, and those of its answer
// that go back: hop-by-hop headers, our credentials and cookies never cross.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { CREDENTIAL_HEADERS, cookiesForUserContent, isHopByHop, userSetCookies } from "@aiem/kit/server";
import { type Admitted, CONTENT_ORIGIN_HEADER, type PortRequest } from "./port-admission.js";

/**
 * Headers for the program: ours and the caller's credentials (Authorization, our cookies)
 * removed on every port, public ones too, the browser's host and prefix told.
 */
export function forwardHeaders(req: PortRequest, go: Admitted, keepUpgrade: boolean): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers as IncomingHttpHeaders)) {
    if (value === undefined || name.startsWith(":") || name === CONTENT_ORIGIN_HEADER) continue;
    if (name === "host" || isHopByHop(name, keepUpgrade)) continue;
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

/** The program's answer headers for the browser: its own cookies only, its redirects under the port's prefix. */
export function answerHeaders(answer: IncomingHttpHeaders, prefix: string): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(answer)) {
    if (value === undefined || name === "host" || isHopByHop(name)) continue;
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
  return out;
}
