import { exportJWK, type JWK } from "jose";
import { isValidClientId, mintEmbeddedToken } from "./embedded-token.js";
import { InvalidRefreshTokenError, verifyRefreshToken } from "./refresh-token.js";
import { loadOrCreateSigningKey, SIGNING_ALGORITHM, type SigningKey } from "./signing-key.js";

/** Access tokens from the token endpoint are short-lived; clients renew them with the refresh token. */
export const ISSUED_ACCESS_TOKEN_TTL_SECONDS = 60 * 60;

export interface EmbeddedIssuerOptions {
  /** Where the embedded signing key lives. */
  dataDir: string;
  /** The issuer URL (embeddedIssuerUrl); a function because the port may be known only once listening. */
  issuer: () => string;
  accessTokenTtlSeconds?: number | undefined;
  clockToleranceSeconds?: number | undefined;
  /** Clock for tests. */
  now?: (() => Date) | undefined;
}

/** An answer of the token endpoint: the HTTP status, extra headers and the JSON body. */
export interface TokenEndpointResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Readonly<Record<string, unknown>>;
}

export interface TokenRequest {
  /** The Content-Type header. */
  readonly contentType: string | undefined;
  /** The raw request body. */
  readonly body: string;
  /** The Authorization header, for clients that identify themselves with HTTP Basic. */
  readonly authorization: string | undefined;
}

export interface EmbeddedIssuer {
  readonly issuer: () => string;
  /** The OpenID Connect discovery document (`/.well-known/openid-configuration`). */
  metadata(): Record<string, unknown>;
  /** The public signing key as a JWK set. */
  jwks(): Promise<{ keys: JWK[] }>;
  /** The token endpoint (RFC 6749 sections 5 and 6): refresh token in, access token out. */
  token(request: TokenRequest): Promise<TokenEndpointResponse>;
}

/** Paths under the issuer URL. */
export const ISSUER_PATHS = {
  metadata: "/.well-known/openid-configuration",
  jwks: "/jwks",
  token: "/token",
} as const;

/**
 * The embedded identity's OAuth 2.0 / OpenID Connect issuer. It has no authorization endpoint:
 * people get refresh tokens from `npm run -s token -- --refresh`, and any OAuth client (the
 * official Python client's token provider, say) exchanges them here for access tokens, which are
 * the same as the token command's and pass the same authenticator. Clients are public: a client
 * id identifies, nothing authenticates.
 */
export function createEmbeddedIssuer(options: EmbeddedIssuerOptions): EmbeddedIssuer {
  const accessTtl = options.accessTokenTtlSeconds ?? ISSUED_ACCESS_TOKEN_TTL_SECONDS;
  const now = options.now ?? (() => new Date());
  let key: Promise<SigningKey> | undefined;
  const signingKey = (): Promise<SigningKey> => {
    key ??= loadOrCreateSigningKey(options.dataDir).catch((err: unknown) => {
      key = undefined;
      throw err;
    });
    return key;
  };

  return {
    issuer: options.issuer,
    metadata() {
      const issuer = options.issuer();
      return {
        issuer,
        token_endpoint: `${issuer}${ISSUER_PATHS.token}`,
        jwks_uri: `${issuer}${ISSUER_PATHS.jwks}`,
        grant_types_supported: ["refresh_token"],
        // No authorization endpoint, so no response types (RFC 8414 requires the member).
        response_types_supported: [],
        token_endpoint_auth_methods_supported: ["none"],
        subject_types_supported: ["public"],
        claims_supported: ["sub", "name", "roles", "aiem_admin", "client_id"],
      };
    },
    async jwks() {
      const k = await signingKey();
      const { d: _d, ...publicJwk } = await exportJWK(k.publicKey);
      return { keys: [{ ...publicJwk, kid: k.kid, alg: SIGNING_ALGORITHM, use: "sig" }] };
    },
    async token(request) {
      const parsed = parseTokenRequest(request);
      if ("error" in parsed) return parsed.error;
      const { params, clientId } = parsed;
      const issuer = options.issuer();
      let grant: Awaited<ReturnType<typeof verifyRefreshToken>>;
      try {
        grant = await verifyRefreshToken(await signingKey(), params.refreshToken, {
          issuer,
          clockToleranceSeconds: options.clockToleranceSeconds,
          currentDate: now(),
        });
      } catch (err) {
        if (err instanceof InvalidRefreshTokenError) return oauthError(400, "invalid_grant", err.message);
        throw err;
      }
      if (grant.clientId !== undefined && grant.clientId !== clientId) {
        return oauthError(
          400,
          "invalid_grant",
          clientId === undefined
            ? `refresh token was issued to client ${JSON.stringify(grant.clientId)}; send client_id`
            : `refresh token was issued to client ${JSON.stringify(grant.clientId)}, not ${JSON.stringify(clientId)}`,
        );
      }
      const issuedAt = now();
      // An access token never outlives the grant it came from.
      const ttl = Math.min(accessTtl, grant.expiresAt - Math.floor(issuedAt.getTime() / 1000));
      if (ttl <= 0) return oauthError(400, "invalid_grant", "refresh token expired");
      const accessToken = await mintEmbeddedToken(await signingKey(), {
        user: grant.user,
        displayName: grant.displayName,
        admin: grant.admin,
        roles: grant.roles,
        issuer,
        clientId: clientId ?? grant.clientId,
        ttlSeconds: ttl,
        now: issuedAt,
      });
      // No new refresh token: stateless tokens cannot be revoked, so rotating them would protect nothing.
      return {
        status: 200,
        headers: NO_STORE,
        body: { access_token: accessToken, token_type: "Bearer", expires_in: ttl },
      };
    },
  };
}

const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" };

function oauthError(
  status: number,
  error: string,
  description: string,
  headers: Record<string, string> = {},
): TokenEndpointResponse {
  return { status, headers: { ...NO_STORE, ...headers }, body: { error, error_description: description } };
}

interface ParsedTokenRequest {
  params: { refreshToken: string };
  clientId: string | undefined;
}

function parseTokenRequest(request: TokenRequest): ParsedTokenRequest | { error: TokenEndpointResponse } {
  const mediaType = request.contentType?.split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/x-www-form-urlencoded") {
    return { error: oauthError(400, "invalid_request", "send the parameters as application/x-www-form-urlencoded") };
  }
  const form = new URLSearchParams(request.body);
  for (const name of new Set(form.keys())) {
    if (form.getAll(name).length > 1)
      return { error: oauthError(400, "invalid_request", `parameter ${name} is repeated`) };
  }
  const basic = basicCredentials(request.authorization);
  if (basic === "malformed") {
    return {
      error: oauthError(401, "invalid_client", "malformed Basic credentials", {
        "www-authenticate": 'Basic realm="token"',
      }),
    };
  }
  // Clients here are public; a secret would suggest a check that does not happen, so it is refused.
  if (basic?.secret) {
    return {
      error: oauthError(401, "invalid_client", "no client has a secret here; send only client_id", {
        "www-authenticate": 'Basic realm="token"',
      }),
    };
  }
  if (form.get("client_secret"))
    return { error: oauthError(401, "invalid_client", "no client has a secret here; send only client_id") };
  const formClientId = form.get("client_id") || undefined;
  if (basic && formClientId !== undefined && basic.id !== formClientId) {
    return { error: oauthError(400, "invalid_request", "client_id differs from the Basic credentials") };
  }
  const clientId = basic?.id || formClientId;
  if (clientId !== undefined && !isValidClientId(clientId)) {
    return { error: oauthError(401, "invalid_client", "client_id must be 1 to 255 visible ASCII characters") };
  }

  const grantType = form.get("grant_type");
  if (!grantType) return { error: oauthError(400, "invalid_request", "grant_type is required") };
  if (grantType !== "refresh_token") {
    return {
      error: oauthError(
        400,
        "unsupported_grant_type",
        `grant_type ${JSON.stringify(grantType)} is not supported; use refresh_token`,
      ),
    };
  }
  const refreshToken = form.get("refresh_token");
  if (!refreshToken) return { error: oauthError(400, "invalid_request", "refresh_token is required") };
  return { params: { refreshToken }, clientId };
}

/** `Authorization: Basic` client credentials (RFC 6749 section 2.3.1: form-encoded, then base64). */
function basicCredentials(header: string | undefined): { id: string; secret: string } | "malformed" | undefined {
  if (!header) return undefined;
  const match = /^Basic[ \t]+([A-Za-z0-9+/=]+)[ \t]*$/i.exec(header);
  if (!match?.[1]) return /^Basic\b/i.test(header) ? "malformed" : undefined;
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return "malformed";
  try {
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, " "));
    return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
  } catch {
    return "malformed";
  }
}
