export * from "./authenticator.js";
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
export * from "./embedded-issuer.js";
export {
  DEFAULT_REFRESH_TOKEN_TTL_SECONDS,
  InvalidRefreshTokenError,
  mintRefreshToken,
  REFRESH_TOKEN_TYPE,
  verifyRefreshToken,
} from "./refresh-token.js";
export type { RefreshGrant, RefreshTokenOptions } from "./refresh-token.js";
export * from "./principal.js";
export * from "./signing-key.js";
