import { SignJWT } from "jose";
import { lowSToken } from "./ecdsa-low-s.js";
import type { SigningKey } from "./signing-key.js";

/**
 * `iss` of embedded tokens minted without an issuer URL: every token before the embedded
 * issuer had a URL, and tokens that tests mint in-process. Still accepted beside the URL.
 */
export const EMBEDDED_ISSUER = "aiem-embedded";
/** `aud` of embedded access tokens. */
export const EMBEDDED_AUDIENCE = "aiem";
/** Claim that makes an embedded token an administrator's. */
export const ADMIN_CLAIM = "aiem_admin";
/** Embedded tokens always carry their roles here (AIEM_OIDC_ROLES_CLAIM is for issuer tokens). */
export const EMBEDDED_ROLES_CLAIM = "roles";
/** The OAuth client a token was issued to (RFC 9068 section 2.2). */
export const CLIENT_ID_CLAIM = "client_id";
/** Where the embedded issuer lives under the public URL. */
export const EMBEDDED_ISSUER_PATH = "/oidc";

export const DEFAULT_TOKEN_TTL_SECONDS = 24 * 60 * 60;

export interface EmbeddedTokenOptions {
  /** The subject: `alice` (a leading `users/` is dropped). */
  user: string;
  displayName?: string | undefined;
  admin?: boolean | undefined;
  roles?: readonly string[] | undefined;
  /** `iss`: the embedded issuer's URL (embeddedIssuerUrl); EMBEDDED_ISSUER when unset. */
  issuer?: string | undefined;
  /** The OAuth client the token is issued to, if any. */
  clientId?: string | undefined;
  ttlSeconds?: number | undefined;
  /** Clock for tests. */
  now?: Date | undefined;
}

/** The embedded issuer's URL for a public URL: `https://aiem.example.com/oidc`. */
export function embeddedIssuerUrl(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, "")}${EMBEDDED_ISSUER_PATH}`;
}

export async function mintEmbeddedToken(key: SigningKey, options: EmbeddedTokenOptions): Promise<string> {
  const { subject, claims, now, exp } = tokenContents(options, DEFAULT_TOKEN_TTL_SECONDS);
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT" })
    .setIssuer(options.issuer ?? EMBEDDED_ISSUER)
    .setAudience(EMBEDDED_AUDIENCE)
    .setSubject(subject)
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .sign(key.privateKey);
  return lowSToken(token);
}

const SUBJECT = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;
/** OAuth client ids are visible ASCII (RFC 6749 appendix A.1); we keep them short too. */
const CLIENT_ID = /^[\x21-\x7e]{1,255}$/;

export function isValidClientId(clientId: string): boolean {
  return CLIENT_ID.test(clientId);
}

/** The subject, identity claims and times shared by access and refresh tokens; validates them. */
export function tokenContents(
  options: EmbeddedTokenOptions,
  defaultTtlSeconds: number,
): { subject: string; claims: Record<string, unknown>; now: number; exp: number } {
  const subject = options.user.startsWith("users/") ? options.user.slice("users/".length) : options.user;
  if (!SUBJECT.test(subject)) {
    throw new Error(`invalid user ${JSON.stringify(options.user)}: use letters, digits and . _ @ + - (at most 128)`);
  }
  if (options.clientId !== undefined && !isValidClientId(options.clientId)) {
    throw new Error(
      `invalid client id ${JSON.stringify(options.clientId)}: use visible ASCII characters (at most 255)`,
    );
  }
  const ttl = options.ttlSeconds ?? defaultTtlSeconds;
  if (!Number.isInteger(ttl) || ttl <= 0) throw new Error(`invalid token lifetime ${ttl}s`);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const claims: Record<string, unknown> = { name: options.displayName ?? subject };
  if (options.roles?.length) claims[EMBEDDED_ROLES_CLAIM] = [...options.roles];
  if (options.admin) claims[ADMIN_CLAIM] = true;
  if (options.clientId !== undefined) claims[CLIENT_ID_CLAIM] = options.clientId;
  return { subject, claims, now, exp: now + ttl };
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
