import { randomUUID } from "node:crypto";
import { decodeProtectedHeader, errors, jwtVerify, SignJWT, type JWTPayload } from "jose";
import {
  ADMIN_CLAIM,
  CLIENT_ID_CLAIM,
  EMBEDDED_ROLES_CLAIM,
  tokenContents,
  type EmbeddedTokenOptions,
} from "./embedded-token.js";
import { lowSToken } from "./ecdsa-low-s.js";
import { SIGNING_ALGORITHM, type SigningKey } from "./signing-key.js";

/**
 * `typ` header of refresh tokens (explicit typing, RFC 8725 section 3.11). Access tokens say
 * `JWT` and have audience `aiem`; refresh tokens say this and have the issuer as audience, so
 * neither passes for the other.
 */
export const REFRESH_TOKEN_TYPE = "aiem-refresh+jwt";

/** Refresh tokens stand in for a login, so they last long; `--ttl` shortens or lengthens them. */
export const DEFAULT_REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 60 * 60;

/**
 * Refresh tokens have a ceiling of their own, beyond AIEM_TOKEN_MAX_LIFETIME: they stand in for a
 * login and reach only the token endpoint, whose access tokens obey the access-token maximum.
 */
export const MAX_REFRESH_TOKEN_LIFETIME_SECONDS = 365 * 24 * 60 * 60;

export interface RefreshTokenOptions extends EmbeddedTokenOptions {
  /** The embedded issuer's URL: the token's `iss` and `aud`, as only its token endpoint takes it. */
  issuer: string;
  /** Binds the token to this OAuth client: only a request naming it may exchange the token. */
  clientId?: string | undefined;
}

/** What a valid refresh token grants: the identity to put in access tokens, until `expiresAt`. */
export interface RefreshGrant {
  readonly user: string;
  readonly displayName: string | undefined;
  readonly admin: boolean;
  readonly roles: readonly string[];
  readonly clientId: string | undefined;
  /** Seconds since the epoch. */
  readonly expiresAt: number;
}

/** A refresh token that must not be exchanged; the message is safe to show its holder. */
export class InvalidRefreshTokenError extends Error {
  override readonly name = "InvalidRefreshTokenError";
}

/**
 * A refresh token is a JWT signed with the embedded key, so the token command can mint one in
 * its own process and the server can check it without shared storage. It cannot be revoked
 * one by one: rotating the signing key revokes them all.
 */
export async function mintRefreshToken(key: SigningKey, options: RefreshTokenOptions): Promise<string> {
  const { subject, claims, now, exp } = tokenContents(options, DEFAULT_REFRESH_TOKEN_TTL_SECONDS);
  if (exp - now > MAX_REFRESH_TOKEN_LIFETIME_SECONDS) {
    throw new Error(`a refresh token lasts at most ${MAX_REFRESH_TOKEN_LIFETIME_SECONDS}s (365d)`);
  }
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: REFRESH_TOKEN_TYPE })
    .setIssuer(options.issuer)
    .setAudience(options.issuer)
    .setSubject(subject)
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .sign(key.privateKey);
  return lowSToken(token);
}

export interface VerifyRefreshTokenOptions {
  /** The embedded issuer's URL; the token must name it as `iss` and `aud`. */
  issuer: string;
  clockToleranceSeconds?: number | undefined;
  /** Clock for tests. */
  currentDate?: Date | undefined;
}

/** Checks signature, type, issuer, audience and expiry; throws InvalidRefreshTokenError. */
export async function verifyRefreshToken(
  key: SigningKey,
  token: string,
  options: VerifyRefreshTokenOptions,
): Promise<RefreshGrant> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, key.publicKey, {
      algorithms: [SIGNING_ALGORITHM],
      typ: REFRESH_TOKEN_TYPE,
      issuer: options.issuer,
      audience: options.issuer,
      requiredClaims: ["sub", "exp", "iat"],
      clockTolerance: options.clockToleranceSeconds ?? 30,
      ...(options.currentDate ? { currentDate: options.currentDate } : {}),
    }));
  } catch (err) {
    throw refreshTokenError(err, options.issuer);
  }
  const now = Math.floor((options.currentDate ?? new Date()).getTime() / 1000);
  const tolerance = options.clockToleranceSeconds ?? 30;
  // iat is required above.
  if (payload.iat! > now + tolerance) throw new InvalidRefreshTokenError("refresh token was issued in the future");
  if (payload.exp! - payload.iat! > MAX_REFRESH_TOKEN_LIFETIME_SECONDS) {
    throw new InvalidRefreshTokenError("refresh token lifetime is too long");
  }
  const roles = payload[EMBEDDED_ROLES_CLAIM];
  const displayName = payload.name;
  const clientId = payload[CLIENT_ID_CLAIM];
  if (
    typeof payload.sub !== "string" ||
    payload.sub === "" ||
    (clientId !== undefined && typeof clientId !== "string")
  ) {
    throw new InvalidRefreshTokenError("refresh token is malformed");
  }
  return {
    user: payload.sub,
    displayName: typeof displayName === "string" ? displayName : undefined,
    admin: payload[ADMIN_CLAIM] === true,
    roles: Array.isArray(roles) ? roles.filter((r): r is string => typeof r === "string") : [],
    clientId,
    expiresAt: payload.exp!,
  };
}

/** Whether a token's header says it is a refresh token (read unverified: only ever used to refuse). */
export function looksLikeRefreshToken(token: string): boolean {
  try {
    return decodeProtectedHeader(token).typ?.toLowerCase() === REFRESH_TOKEN_TYPE;
  } catch {
    return false;
  }
}

function refreshTokenError(err: unknown, issuer: string): InvalidRefreshTokenError {
  if (err instanceof errors.JWTExpired) return new InvalidRefreshTokenError("refresh token expired");
  if (err instanceof errors.JWTClaimValidationFailed) {
    // Claims are checked after the signature, so the payload here is authentic.
    if (err.claim === "typ") return new InvalidRefreshTokenError("not a refresh token");
    if (err.claim === "iss") {
      return new InvalidRefreshTokenError(
        `refresh token was issued by ${JSON.stringify(err.payload.iss)}, not by this issuer (${issuer}); ` +
          "mint it with the server's AIEM_PUBLIC_URL, AIEM_HOST and AIEM_PORT",
      );
    }
    if (err.claim === "aud") return new InvalidRefreshTokenError("refresh token is not meant for this issuer");
    return new InvalidRefreshTokenError(`refresh token claim ${err.claim} is invalid`);
  }
  // Bad signature, wrong algorithm, not a JWT at all: all the same to the caller.
  return new InvalidRefreshTokenError("refresh token is invalid");
}
