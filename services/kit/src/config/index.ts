export { ConfigError, readBool, readEnum, readInt, readString, readUrl, readUrlList } from "./env.js";
export type { Env, IntOptions, UrlOptions } from "./env.js";
export { readCommonEnv } from "./common.js";
export type { CommonConfig } from "./common.js";
