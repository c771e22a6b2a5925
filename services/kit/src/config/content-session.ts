// A browser signed in at a content origin (an engine's or a sandbox port's, see
// content-origins.ts) holds a session of that origin in a cookie, never the API token it signed in
// with: the token would be good for the whole API, at every origin, for as long as it lives. The
// session is the caller's identity sealed (AES-256-GCM) with the origin (and, where engines and
// ports are served at paths of one origin, the path) it is good for and an expiry. Another origin's
// session, or a cookie a page planted, opens nowhere else; the cookie's name is ours, which user
// content may neither read nor set (user-content.ts in the server kit).
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { Principal } from "../identity/principal.js";
import { deriveInternalKey } from "./secret-key.js";

/** The cookie at a content origin that can take a `__Host-` cookie (https, or a `localhost` name). */
export const SESSION_COOKIE = "__Host-aiem_session";
/** The cookie where `__Host-` is out of reach: plain http, or a path of a shared origin (AIEM_PATH_URLS). */
export const PLAIN_SESSION_COOKIE = "aiem_session";
/** The longest a session lasts, whatever its token's lifetime. */
export const SESSION_MAX_MS = 12 * 60 * 60 * 1000;

interface SessionContents {
  readonly principal: Principal;
  readonly scope: string;
  readonly expires: number;
}

/** The session key, derived from the internal key: a session is never a ticket. */
export function loadSessionKey(dataDir: string, internalKey: string | undefined): Promise<Uint8Array> {
  return deriveInternalKey(dataDir, internalKey, "aiem content session v1");
}

/**
 * What a session is good for: the host (name and port) of the origin the browser sees, and the
 * path its cookie is scoped to when it is not the whole origin (`/engines/<uid>` under
 * AIEM_PATH_URLS). Empty path for an origin of its own.
 */
export function sessionScope(host: string, path = ""): string {
  return `${host.toLowerCase()}${path}`;
}

/** When a session made from `token` ends: with the token (its `exp`), and at most SESSION_MAX_MS from now. */
export function sessionExpiry(token: string, now = Date.now()): number {
  const cap = now + SESSION_MAX_MS;
  try {
    const payload = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as {
      exp?: unknown;
    };
    return typeof payload.exp === "number" ? Math.min(cap, payload.exp * 1000) : cap;
  } catch {
    return cap;
  }
}

export function sealSession(key: Uint8Array, principal: Principal, scope: string, expires: number): string {
  const contents: SessionContents = {
    principal: {
      name: principal.name,
      subject: principal.subject,
      displayName: principal.displayName,
      roles: [...principal.roles],
      admin: principal.admin,
    },
    scope,
    expires,
  };
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(contents), "utf8"), cipher.final()]);
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64url");
}

/** The session's caller when it is ours, unaltered, for `scope` and not expired. */
export function openSession(key: Uint8Array, value: string, scope: string, now = Date.now()): Principal | undefined {
  const bytes = Buffer.from(value, "base64url");
  if (bytes.length < 12 + 16 + 2) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    const text = Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString(
      "utf8",
    );
    const contents = JSON.parse(text) as SessionContents;
    if (contents.scope !== scope || !(contents.expires > now)) return undefined;
    return contents.principal;
  } catch {
    return undefined;
  }
}

/**
 * The caller of the first session cookie in a request's Cookie header that opens for `scope`
 * (a browser may send several of the name, for different paths).
 */
export function sessionFromCookies(
  key: Uint8Array,
  header: string | readonly string[] | undefined,
  scope: string,
  now = Date.now(),
): Principal | undefined {
  const text = typeof header === "string" ? header : (header ?? []).join("; ");
  for (const part of text.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (name !== SESSION_COOKIE && name !== PLAIN_SESSION_COOKIE) continue;
    const principal = openSession(key, part.slice(eq + 1).trim(), scope, now);
    if (principal) return principal;
  }
  return undefined;
}

/** True when a browser takes a Secure cookie from this request's origin: https, or a `localhost` name. */
export function secureOrigin(host: string, forwardedProto: string | string[] | undefined): boolean {
  if (forwardedProto === "https") return true;
  const name = host.replace(/:\d+$/, "").toLowerCase();
  return name === "localhost" || name.endsWith(".localhost");
}

/**
 * The Set-Cookie value that keeps a session: at an origin of its own, `__Host-` (Secure, Path=/,
 * no Domain) where the browser takes it; under a path of a shared origin, scoped to that path.
 * Always HttpOnly, SameSite=Lax, host-only, and gone when the session ends.
 */
export function sessionCookie(
  value: string,
  options: { readonly path: string; readonly secure: boolean; readonly expires: number; readonly now?: number },
): string {
  const ownOrigin = options.path === "/";
  const name = ownOrigin && options.secure ? SESSION_COOKIE : PLAIN_SESSION_COOKIE;
  const maxAge = Math.max(0, Math.floor((options.expires - (options.now ?? Date.now())) / 1000));
  return `${name}=${value}; Path=${options.path}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${options.secure ? "; Secure" : ""}`;
}
