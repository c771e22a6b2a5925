export { createAuthenticator, DEFAULT_TOKEN_MAX_LIFETIME_SECONDS, readRoles } from "./authenticator.js";
export type { Authenticator, AuthenticatorConfig } from "./authenticator.js";
export {
  ADMIN_CLAIM,
  CLIENT_ID_CLAIM,
  DEFAULT_TOKEN_TTL_SECONDS,
  EMBEDDED_AUDIENCE,
  EMBEDDED_ISSUER,
  EMBEDDED_ISSUER_PATH,
  EMBEDDED_ROLES_CLAIM,
  embeddedIssuerUrl,
  mintEmbeddedToken,
  parseTtl,
} from "./embedded-token.js";
export type { EmbeddedTokenOptions } from "./embedded-token.js";
export { createEmbeddedIssuer, ISSUED_ACCESS_TOKEN_TTL_SECONDS, ISSUER_PATHS } from "./embedded-issuer.js";
export type { EmbeddedIssuer, EmbeddedIssuerOptions, TokenEndpointResponse, TokenRequest } from "./embedded-issuer.js";
export {
  DEFAULT_REFRESH_TOKEN_TTL_SECONDS,
  InvalidRefreshTokenError,
  mintRefreshToken,
  REFRESH_TOKEN_TYPE,
  verifyRefreshToken,
} from "./refresh-token.js";
export type { RefreshGrant, RefreshTokenOptions } from "./refresh-token.js";
export { principalName, PRINCIPAL_PREFIX } from "./principal.js";
export type { Principal } from "./principal.js";
export { loadOrCreateSigningKey, SIGNING_ALGORITHM, signingKeyPath } from "./signing-key.js";
export type { SigningKey } from "./signing-key.js";
