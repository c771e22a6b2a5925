import { Code, ConnectError } from "@connectrpc/connect";
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose";
import { ADMIN_CLAIM, EMBEDDED_AUDIENCE, EMBEDDED_ISSUER, EMBEDDED_ROLES_CLAIM } from "./embedded-token.js";
import { principalName, type Principal } from "./principal.js";
import { lowSToken } from "./ecdsa-low-s.js";
import { looksLikeRefreshToken } from "./refresh-token.js";
import { loadOrCreateSigningKey, SIGNING_ALGORITHM, type SigningKey } from "./signing-key.js";

export interface AuthenticatorConfig {
  /** Where the embedded signing key lives (used when no issuer is configured). */
  dataDir: string;
  /**
   * The embedded issuer's URL (embeddedIssuerUrl), accepted as `iss` beside EMBEDDED_ISSUER
   * when no OIDC issuer is configured. A function because the port may be known only once the
   * server listens.
   */
  embeddedIssuer?: string | (() => string | undefined) | undefined;
  /** AIEM_OIDC_ISSUER: verify tokens against this issuer's JWKS instead. */
  oidcIssuer?: string | undefined;
  /** AIEM_OIDC_AUDIENCE: required `aud` of issuer tokens, when set. */
  oidcAudience?: string | undefined;
  /** AIEM_OIDC_ROLES_CLAIM: claim name or dotted path of the roles in issuer tokens. */
  rolesClaim?: string | undefined;
  /** Principal names that are administrators whatever the token says (the policy's admins). */
  admins?: Iterable<string> | undefined;
  /** Accepted clock skew; 30 seconds unless set. */
  clockToleranceSeconds?: number | undefined;
  /** AIEM_TOKEN_MAX_LIFETIME: the longest `exp - iat` accepted; DEFAULT_TOKEN_MAX_LIFETIME_SECONDS unless set. */
  maxTokenLifetimeSeconds?: number | undefined;
}

/** A day: what `npm run token` mints by default, and far beyond what identity providers issue. */
export const DEFAULT_TOKEN_MAX_LIFETIME_SECONDS = 24 * 60 * 60;

export interface Authenticator {
  /** Verifies `Authorization: Bearer <JWT>`; throws ConnectError UNAUTHENTICATED (UNAVAILABLE if the issuer cannot be reached). */
  authenticate(authorization?: string | null): Promise<Principal>;
}

/** Asymmetric algorithms only: a symmetric or `none` token could be made by anyone who knows the public key. */
const OIDC_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

interface Verifier {
  readonly key: JWTVerifyGetKey | SigningKey["publicKey"];
  readonly issuer: () => string | string[];
  readonly audience: string | undefined;
  readonly algorithms: string[];
  readonly embedded: boolean;
}

/**
 * Tokens verified lately, by their exact text: a client sends the same token with every call, and
 * checking its signature again (WebCrypto, a hop through the thread pool) cost ~0.35 ms a call. An
 * entry lasts as long as the token would verify, and at most VERIFIED_KEEP_MS, so that a key an
 * issuer withdraws stops counting within that time.
 */
const VERIFIED_KEEP_MS = 60_000;
const VERIFIED_KEEP_MAX = 1000;

export function createAuthenticator(cfg: AuthenticatorConfig): Authenticator {
  const admins = new Set(cfg.admins ?? []);
  const rolesClaim = cfg.oidcIssuer ? (cfg.rolesClaim ?? "roles") : EMBEDDED_ROLES_CLAIM;
  const clockTolerance = cfg.clockToleranceSeconds ?? 30;
  const maxLifetime = cfg.maxTokenLifetimeSeconds ?? DEFAULT_TOKEN_MAX_LIFETIME_SECONDS;
  let verifier: Promise<Verifier> | undefined;
  const verified = new Map<string, { principal: Principal; until: number }>();

  // Loaded on first use and kept; a failed discovery is retried by the next request.
  const getVerifier = (): Promise<Verifier> => {
    verifier ??= (
      cfg.oidcIssuer ? discover(cfg.oidcIssuer, cfg.oidcAudience) : embeddedVerifier(cfg.dataDir, cfg.embeddedIssuer)
    ).catch((err) => {
      verifier = undefined;
      throw err;
    });
    return verifier;
  };

  return {
    async authenticate(authorization) {
      // The low-s spelling is the token's one identity: it is what is verified and remembered.
      const token = lowSToken(bearerToken(authorization));
      // Audiences keep embedded refresh tokens out already; this names the mistake, and covers
      // an OIDC-mode server that trusts our issuer without an audience.
      if (looksLikeRefreshToken(token)) {
        throw new ConnectError(
          "a refresh token is not an access token: exchange it at the token endpoint first",
          Code.Unauthenticated,
        );
      }
      const known = verified.get(token);
      if (known && Date.now() < known.until) return known.principal;
      if (known) verified.delete(token);
      const v = await getVerifier();
      const issuer = v.issuer();
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, v.key as JWTVerifyGetKey, {
          issuer,
          ...(v.audience === undefined ? {} : { audience: v.audience }),
          algorithms: v.algorithms,
          requiredClaims: ["sub", "exp"],
          clockTolerance,
        }));
      } catch (err) {
        if (v.embedded && err instanceof errors.JWTClaimValidationFailed && err.claim === "iss") {
          throw new ConnectError(
            `token claim iss is invalid: ${JSON.stringify(err.payload.iss)} is not this server's issuer (${[issuer].flat().join(" or ")}); ` +
              "mint tokens with the server's AIEM_PUBLIC_URL, AIEM_HOST and AIEM_PORT",
            Code.Unauthenticated,
          );
        }
        throw verificationError(err);
      }
      checkTimes(payload, clockTolerance, maxLifetime);
      const subject = payload.sub;
      if (typeof subject !== "string" || subject === "" || subject.includes("/")) {
        throw new ConnectError("token subject is missing or not usable as a user name", Code.Unauthenticated);
      }
      const name = principalName(subject);
      const principal: Principal = Object.freeze({
        name,
        subject,
        displayName: stringClaim(payload, "name") ?? stringClaim(payload, "preferred_username") ?? subject,
        roles: Object.freeze(readRoles(payload, rolesClaim)),
        admin: admins.has(name) || (v.embedded && payload[ADMIN_CLAIM] === true),
      });
      // exp is required above; the token verifies until exp plus the tolerance.
      const until = Math.min(Date.now() + VERIFIED_KEEP_MS, (Number(payload.exp) + clockTolerance) * 1000);
      if (verified.size >= VERIFIED_KEEP_MAX) verified.delete(verified.keys().next().value!);
      verified.set(token, { principal, until });
      return principal;
    },
  };
}

async function embeddedVerifier(
  dataDir: string,
  embeddedIssuer: AuthenticatorConfig["embeddedIssuer"],
): Promise<Verifier> {
  const key = await loadOrCreateSigningKey(dataDir);
  return {
    key: key.publicKey,
    issuer: () => {
      const url = typeof embeddedIssuer === "function" ? embeddedIssuer() : embeddedIssuer;
      return url ? [url, EMBEDDED_ISSUER] : EMBEDDED_ISSUER;
    },
    audience: EMBEDDED_AUDIENCE,
    algorithms: [SIGNING_ALGORITHM],
    embedded: true,
  };
}

interface DiscoveryDocument {
  issuer?: unknown;
  jwks_uri?: unknown;
}

async function discover(issuer: string, audience: string | undefined): Promise<Verifier> {
  const base = issuer.replace(/\/+$/, "");
  const url = `${base}/.well-known/openid-configuration`;
  let doc: DiscoveryDocument;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000), headers: { accept: "application/json" } });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    doc = (await res.json()) as DiscoveryDocument;
  } catch (err) {
    throw new ConnectError(`identity provider discovery at ${url} failed: ${(err as Error).message}`, Code.Unavailable);
  }
  if (typeof doc.issuer !== "string" || doc.issuer.replace(/\/+$/, "") !== base || typeof doc.jwks_uri !== "string") {
    throw new ConnectError(
      `identity provider discovery at ${url} returned no matching issuer and jwks_uri`,
      Code.Unavailable,
    );
  }
  const docIssuer = doc.issuer;
  return {
    key: createRemoteJWKSet(new URL(doc.jwks_uri)),
    issuer: () => docIssuer,
    audience,
    algorithms: OIDC_ALGORITHMS,
    embedded: false,
  };
}

/**
 * A token issued in the future was made by a clock or a hand that cannot be trusted, and one that
 * lives longer than the maximum outlives any reasonable revocation (an issuer's key rotation, a
 * user's removal). Without `iat` the lifetime counts from now.
 */
function checkTimes(payload: JWTPayload, clockTolerance: number, maxLifetime: number): void {
  const now = Math.floor(Date.now() / 1000);
  const { iat, exp } = payload;
  if (iat !== undefined && iat > now + clockTolerance) {
    throw new ConnectError("token claim iat is invalid: the token was issued in the future", Code.Unauthenticated);
  }
  const lifetime = Number(exp) - (iat ?? now);
  if (lifetime > maxLifetime) {
    throw new ConnectError(
      `token lifetime is too long: ${lifetime}s from issue to expiry, at most ${maxLifetime}s (AIEM_TOKEN_MAX_LIFETIME) are accepted`,
      Code.Unauthenticated,
    );
  }
}

function bearerToken(authorization: string | null | undefined): string {
  if (!authorization)
    throw new ConnectError("missing bearer token (Authorization: Bearer <token>)", Code.Unauthenticated);
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  if (!match?.[1]) throw new ConnectError("authorization header is not a bearer token", Code.Unauthenticated);
  return match[1];
}

function verificationError(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  if (err instanceof errors.JWTExpired) return new ConnectError("token expired", Code.Unauthenticated);
  if (err instanceof errors.JWTClaimValidationFailed) {
    return new ConnectError(`token claim ${err.claim} is invalid: ${err.message}`, Code.Unauthenticated);
  }
  if (err instanceof errors.JOSEAlgNotAllowed)
    return new ConnectError("token algorithm is not accepted", Code.Unauthenticated);
  if (err instanceof errors.JWSSignatureVerificationFailed) {
    return new ConnectError("token signature is invalid", Code.Unauthenticated);
  }
  if (err instanceof errors.JWKSNoMatchingKey)
    return new ConnectError("token signed by an unknown key", Code.Unauthenticated);
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) {
    return new ConnectError(`identity provider keys unavailable: ${err.message}`, Code.Unavailable);
  }
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid || err instanceof errors.JOSENotSupported) {
    return new ConnectError("malformed token", Code.Unauthenticated);
  }
  // Fetching the JWKS failed (network, HTTP status) or something unexpected: not the caller's fault.
  return new ConnectError(`token verification failed: ${(err as Error)?.message ?? String(err)}`, Code.Unavailable);
}

function stringClaim(payload: JWTPayload, claim: string): string | undefined {
  const value = payload[claim];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * Roles from `claim`: a top-level claim of that exact name first (namespaced claims such as
 * `https://example.com/roles` contain dots), else a dotted path (`realm_access.roles`).
 * An array keeps its strings; a single string is one role.
 */
export function readRoles(payload: JWTPayload, claim: string): string[] {
  let value: unknown = payload[claim];
  if (value === undefined && claim.includes(".")) {
    value = claim.split(".").reduce<unknown>((node, key) => {
      return node !== null && typeof node === "object" && !Array.isArray(node)
        ? (node as Record<string, unknown>)[key]
        : undefined;
    }, payload);
  }
  if (typeof value === "string") return value === "" ? [] : [value];
  if (Array.isArray(value)) return value.filter((r): r is string => typeof r === "string" && r !== "");
  return [];
}
