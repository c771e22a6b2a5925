import { ConfigError, readBool, readCommonEnv, readString, type CommonConfig, type Env } from "@aiem/kit/config";

/** What the catalogue needs on top of the common settings. */
export interface CatalogueSettings {
  /**
   * AIEM_PAGE_TOKEN_KEY: base64 of 32 bytes that signs list page tokens. Unset means a key kept
   * in the data directory (`keys/page-token.key`). Replicas behind one load balancer must share it.
   */
  readonly pageTokenKey: string | undefined;
  /**
   * AIEM_SECRETS_KEY: base64 of 32 bytes, the AES-256-GCM key of secret values. Unset means a key
   * kept in the data directory (`keys/secrets.key`). Losing it loses every secret value.
   */
  readonly secretsKey: string | undefined;
  /**
   * AIEM_INTERNAL_KEY: base64 of 32 bytes that other parts of the product present to call the
   * catalogue's internal API (secret values for a sandbox service in another process). Unset
   * means a key kept in the data directory (`keys/internal.key`); separate processes must set it.
   */
  readonly internalKey?: string | undefined;
  /** AIEM_SEED_DEMO: create the demo catalogue on the first start of a database (default true). */
  readonly seedDemo: boolean;
}

export type CatalogueConfig = CommonConfig & CatalogueSettings;

/** Reads and checks the catalogue's environment; a bad value is a ConfigError naming its variable. */
export function readCatalogueEnv(env: Env = process.env): CatalogueConfig {
  return {
    ...readCommonEnv(env),
    pageTokenKey: readKey(env, "AIEM_PAGE_TOKEN_KEY"),
    secretsKey: readKey(env, "AIEM_SECRETS_KEY"),
    internalKey: readKey(env, "AIEM_INTERNAL_KEY"),
    seedDemo: readBool(env, "AIEM_SEED_DEMO", { default: true }),
  };
}

// Checked now rather than at start(), so a typo stops the process before it opens anything.
function readKey(env: Env, name: string): string | undefined {
  const value = readString(env, name, { optional: true });
  if (value === undefined) return undefined;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value) || Buffer.from(value, "base64").length !== 32) {
    throw new ConfigError(name, "must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`)");
  }
  return value;
}
