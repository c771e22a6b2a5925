import { ConfigError, readString, type Env } from "@aiem/kit/config";

export interface HostIsolation {
  readonly schemaSuffix?: string;
  readonly eventsPrefix?: string;
}

/** Knobs for running several deployments (or test suites) on one PostgreSQL and one NATS. */
export function readHostIsolationEnv(env: Env = process.env): HostIsolation {
  const schemaSuffix = readString(env, "AIEM_DB_SCHEMA_SUFFIX", { optional: true });
  const eventsPrefix = readString(env, "AIEM_EVENTS_PREFIX", { optional: true });
  if (schemaSuffix !== undefined && !/^_[a-z0-9_]{1,40}$/.test(schemaSuffix)) {
    throw new ConfigError(
      "AIEM_DB_SCHEMA_SUFFIX",
      "must be an underscore followed by lowercase letters, digits or underscores",
    );
  }
  return { ...(schemaSuffix ? { schemaSuffix } : {}), ...(eventsPrefix ? { eventsPrefix } : {}) };
}
