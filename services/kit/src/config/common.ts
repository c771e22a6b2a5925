import path from "node:path";
import { DEFAULT_TOKEN_MAX_LIFETIME_SECONDS } from "../identity/authenticator.js";
import { readContentEnv, type ContentSettings } from "./content-origins.js";
import { readInt, readString, readUrl, readUrlList, type Env } from "./env.js";

/** Settings every service and the launcher share. */
export interface CommonConfig extends ContentSettings {
  /** AIEM_HOST: interface to listen on. */
  readonly host: string;
  /** AIEM_PORT: port to listen on; 0 picks a free one. */
  readonly port: number;
  /** AIEM_DATA_DIR, made absolute: PGlite, signing keys, engine data. */
  readonly dataDir: string;
  /** AIEM_POLICY_FILE: role bindings; absent means the embedded default policy. */
  readonly policyFile: string | undefined;
  /** AIEM_OIDC_ISSUER: verify tokens against this issuer instead of the embedded key. */
  readonly oidcIssuer: string | undefined;
  /** AIEM_OIDC_AUDIENCE: required `aud` of issuer tokens, when set. */
  readonly oidcAudience: string | undefined;
  /** AIEM_OIDC_ROLES_CLAIM: claim (dotted path allowed) holding identity-provider roles. */
  readonly oidcRolesClaim: string;
  /** AIEM_TOKEN_MAX_LIFETIME: the longest access-token lifetime (`exp - iat`, seconds) accepted. */
  readonly tokenMaxLifetimeSeconds: number;
  /** DATABASE_URL: PostgreSQL; absent means PGlite in the data directory. */
  readonly databaseUrl: string | undefined;
  /** NATS_URL as given; absent means the in-process event bus. */
  readonly natsUrl: string | undefined;
  /** NATS_URL split into its comma-separated servers (the form nats.js `servers` takes). */
  readonly natsServers: string[] | undefined;
  /**
   * AIEM_REPLICA_URL: where the other replicas of this service reach this one's API (calls about
   * work pinned to it). Default `http://AIEM_HOST:AIEM_PORT` (127.0.0.1 for a wildcard host).
   */
  readonly replicaUrl?: string;
}

/** This replica's URL for the others, or undefined when it cannot be known yet (port 0). */
export function replicaUrlOf(config: CommonConfig): string | undefined {
  if (config.replicaUrl) return config.replicaUrl;
  if (config.port === 0) return undefined;
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.port}`;
}

export function readCommonEnv(env: Env = process.env): CommonConfig {
  const policyFile = readString(env, "AIEM_POLICY_FILE", { optional: true });
  const natsServers = readUrlList(env, "NATS_URL", { optional: true, protocols: ["nats", "tls", "ws", "wss"] });
  return {
    host: readString(env, "AIEM_HOST", { default: "127.0.0.1" }),
    port: readInt(env, "AIEM_PORT", { default: 8080, min: 0, max: 65535 }),
    dataDir: path.resolve(readString(env, "AIEM_DATA_DIR", { default: "./.aiem" })),
    policyFile: policyFile === undefined ? undefined : path.resolve(policyFile),
    oidcIssuer: readUrl(env, "AIEM_OIDC_ISSUER", { optional: true, protocols: ["https", "http"] }),
    oidcAudience: readString(env, "AIEM_OIDC_AUDIENCE", { optional: true }),
    oidcRolesClaim: readString(env, "AIEM_OIDC_ROLES_CLAIM", { default: "roles" }),
    tokenMaxLifetimeSeconds: readInt(env, "AIEM_TOKEN_MAX_LIFETIME", {
      default: DEFAULT_TOKEN_MAX_LIFETIME_SECONDS,
      min: 60,
    }),
    databaseUrl: readUrl(env, "DATABASE_URL", { optional: true, protocols: ["postgres", "postgresql"] }),
    natsUrl: natsServers?.join(","),
    natsServers,
    ...readContentEnv(env),
    replicaUrl: readUrl(env, "AIEM_REPLICA_URL", { optional: true, protocols: ["http", "https"] }),
  };
}
