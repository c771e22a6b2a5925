export { createAuthenticator, readRoles } from "./authenticator.js";
export type { Authenticator, AuthenticatorConfig } from "./authenticator.js";
export {
  ADMIN_CLAIM,
  DEFAULT_TOKEN_TTL_SECONDS,
  EMBEDDED_AUDIENCE,
  EMBEDDED_ISSUER,
  EMBEDDED_ROLES_CLAIM,
  mintEmbeddedToken,
  parseTtl,
} from "./embedded-token.js";
export type { EmbeddedTokenOptions } from "./embedded-token.js";
export { principalName, PRINCIPAL_PREFIX } from "./principal.js";
export type { Principal } from "./principal.js";
export { loadOrCreateSigningKey, SIGNING_ALGORITHM, signingKeyPath } from "./signing-key.js";
export type { SigningKey } from "./signing-key.js";
