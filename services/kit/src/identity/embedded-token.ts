import { SignJWT } from "jose";
import type { SigningKey } from "./signing-key.js";

/** `iss` and `aud` of tokens the product signs itself. */
export const EMBEDDED_ISSUER = "aiem-embedded";
export const EMBEDDED_AUDIENCE = "aiem";
/** Claim that makes an embedded token an administrator's. */
export const ADMIN_CLAIM = "aiem_admin";
/** Embedded tokens always carry their roles here (AIEM_OIDC_ROLES_CLAIM is for issuer tokens). */
export const EMBEDDED_ROLES_CLAIM = "roles";

export const DEFAULT_TOKEN_TTL_SECONDS = 24 * 60 * 60;

export interface EmbeddedTokenOptions {
  /** The subject: `alice` (a leading `users/` is dropped). */
  user: string;
  displayName?: string | undefined;
  admin?: boolean | undefined;
  roles?: readonly string[] | undefined;
  ttlSeconds?: number | undefined;
  /** Clock for tests. */
  now?: Date | undefined;
}

const SUBJECT = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;

export async function mintEmbeddedToken(key: SigningKey, options: EmbeddedTokenOptions): Promise<string> {
  const subject = options.user.startsWith("users/") ? options.user.slice("users/".length) : options.user;
  if (!SUBJECT.test(subject)) {
    throw new Error(`invalid user ${JSON.stringify(options.user)}: use letters, digits and . _ @ + - (at most 128)`);
  }
  const ttl = options.ttlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl <= 0) throw new Error(`invalid token lifetime ${ttl}s`);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const claims: Record<string, unknown> = { name: options.displayName ?? subject };
  if (options.roles?.length) claims[EMBEDDED_ROLES_CLAIM] = [...options.roles];
  if (options.admin) claims[ADMIN_CLAIM] = true;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT" })
    .setIssuer(EMBEDDED_ISSUER)
    .setAudience(EMBEDDED_AUDIENCE)
    .setSubject(subject)
    .setIssuedAt(now)
    .setExpirationTime(now + ttl)
    .sign(key.privateKey);
}

/** `3600`, `3600s`, `30m`, `12h`, `7d` -> seconds. */
export function parseTtl(text: string): number {
  const match = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!match) throw new Error(`invalid --ttl ${JSON.stringify(text)}: use e.g. 3600, 90s, 30m, 12h or 7d`);
  const unit = { "": 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as "" | "s" | "m" | "h" | "d"];
  const seconds = Number(match[1]) * unit;
  if (seconds <= 0) throw new Error(`invalid --ttl ${JSON.stringify(text)}: must be positive`);
  return seconds;
}
