export { ConfigError, readBool, readEnum, readInt, readString, readUrl, readUrlList } from "./env.js";
export type { Env, IntOptions, UrlOptions } from "./env.js";
export { readCommonEnv, replicaUrlOf } from "./common.js";
export type { CommonConfig } from "./common.js";
export { defaultPublicUrl, readPublicUrl } from "./public-url.js";
export { createFileOnce } from "./create-file-once.js";
export { loadSecretKey } from "./secret-key.js";
export type { SecretKeySource } from "./secret-key.js";
export {
  contentDomain,
  createContentUrls,
  defaultContentUrl,
  parseContentHost,
  readContentEnv,
} from "./content-origins.js";
export type { ContentSettings, ContentTarget, ContentUrls } from "./content-origins.js";
export {
  createTicketLedger,
  loadTicketKey,
  openTicket,
  sealTicket,
  TICKET_PARAM,
  TICKET_TTL_MS,
  withTicket,
} from "./content-ticket.js";
export type { TicketContents } from "./content-ticket.js";
export {
  loadSessionKey,
  openSession,
  PLAIN_SESSION_COOKIE,
  sealSession,
  secureOrigin,
  SESSION_COOKIE,
  SESSION_MAX_MS,
  sessionCookie,
  sessionExpiry,
  sessionFromCookies,
  sessionScope,
} from "./content-session.js";
export { DEFAULT_METRICS_PORT, readMetricsEnv } from "./metrics-env.js";
export type { MetricsSettings } from "./metrics-env.js";
