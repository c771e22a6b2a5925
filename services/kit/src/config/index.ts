export { ConfigError, readBool, readEnum, readInt, readString, readUrl, readUrlList } from "./env.js";
export type { Env, IntOptions, UrlOptions } from "./env.js";
export { readCommonEnv, replicaUrlOf } from "./common.js";
export type { CommonConfig } from "./common.js";
export { defaultPublicUrl, readPublicUrl } from "./public-url.js";
export { createFileOnce } from "./create-file-once.js";
export { loadSecretKey } from "./secret-key.js";
export type { SecretKeySource } from "./secret-key.js";
