// What crosses between a browser and user content (an engine's web server, a program behind a
// sandbox port). User content runs at origins of its own, next to other users' origins under the
// same parent domain, so:
// - our credentials never reach it: no Authorization header, none of our cookies;
// - its cookies stay on its own origin: a `Set-Cookie` loses any `Domain` attribute (host-only),
//   and one that names a cookie of ours is dropped, so a page cannot plant a session of ours, for
//   its origin or, through a parent domain, for anyone else's.
import type { Duplex, Readable } from "node:stream";

/** Every cookie the service sets starts with this, after an optional `__Host-`/`__Secure-` prefix. */
export const OUR_COOKIE_PREFIX = "aiem_";

/** Request headers that carry our credentials and never reach user content. */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(["authorization", "proxy-authorization"]);

/** True for a cookie name of ours (browsers match the `__Host-`/`__Secure-` prefixes case-insensitively). */
export function isOurCookie(name: string): boolean {
  const lower = name.trim().toLowerCase();
  const bare = lower.startsWith("__host-") ? lower.slice(7) : lower.startsWith("__secure-") ? lower.slice(9) : lower;
  return bare.startsWith(OUR_COOKIE_PREFIX);
}

/** A request's `Cookie` header for user content: the browser's cookies without ours; undefined when none is left. */
export function cookiesForUserContent(header: string | readonly string[] | undefined): string | undefined {
  const text = typeof header === "string" ? header : (header ?? []).join("; ");
  const kept = text
    .split(";")
    .map((p) => p.trim())
    .filter((p) => p !== "" && !isOurCookie(p.includes("=") ? p.slice(0, p.indexOf("=")) : ""));
  return kept.length > 0 ? kept.join("; ") : undefined;
}

/**
 * One `Set-Cookie` value from user content as the browser may see it: host-only (any `Domain`
 * attribute removed), or undefined when it names a cookie of ours.
 */
export function userSetCookie(value: string): string | undefined {
  const parts = value.split(";");
  const pair = parts[0] ?? "";
  // A pair without `=` is a cookie with an empty name, which browsers take as the value alone.
  const name = pair.includes("=") ? pair.slice(0, pair.indexOf("=")) : "";
  if (isOurCookie(name)) return undefined;
  const attributes = parts.slice(1).filter((a) => a.split("=", 1)[0]!.trim().toLowerCase() !== "domain");
  return [pair, ...attributes].join(";");
}

/** All `Set-Cookie` values of an answer from user content, rewritten by userSetCookie. */
export function userSetCookies(values: string | readonly string[] | undefined): string[] {
  const list = typeof values === "string" ? [values] : (values ?? []);
  return list.map(userSetCookie).filter((v): v is string => v !== undefined);
}

/** Header lines of a raw HTTP head (after the status line) with Set-Cookie rewritten by userSetCookie. */
function rewriteHead(head: string): string {
  const lines = head.split("\r\n");
  const out = [lines[0]!];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === "set-cookie") {
      const value = userSetCookie(line.slice(colon + 1).trim());
      if (value !== undefined) out.push(`${line.slice(0, colon)}: ${value}`);
    } else out.push(line);
  }
  return out.join("\r\n");
}

/** The most a program's answer to an upgrade may spend on its head before the connection is cut. */
const MAX_HEAD_BYTES = 64 * 1024;

/**
 * Pipes a program's raw answer to an upgrade (a WebSocket handshake) to the browser, its head's
 * Set-Cookie lines rewritten by userSetCookie; the bytes after the head pass untouched.
 */
export function pipeUserUpgradeAnswer(from: Readable, to: Duplex): void {
  let pending = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    const end = pending.indexOf("\r\n\r\n");
    if (end < 0) {
      if (pending.length > MAX_HEAD_BYTES) {
        from.destroy();
        to.destroy();
      }
      return;
    }
    from.off("data", onData);
    from.pause();
    to.write(rewriteHead(pending.subarray(0, end).toString("latin1")), "latin1");
    to.write(pending.subarray(end));
    pending = Buffer.alloc(0);
    from.pipe(to);
  };
  from.on("data", onData);
}
