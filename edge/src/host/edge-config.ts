import { readInt, readPublicUrl, readString, type Env } from "@aiem/kit/config";

/** Settings of the edge, on top of the common ones. */
export interface EdgeConfig {
  /** AIEM_CORS_ORIGINS: "*" (default) or a comma-separated list of exact origins. */
  readonly corsOrigins: "*" | readonly string[];
  /** AIEM_BODY_LIMIT_BYTES: largest request body; REST answers 413 past it. Default 4 MiB. */
  readonly bodyLimitBytes: number;
  /**
   * AIEM_PUBLIC_URL: where clients reach the product; the embedded issuer and the H2O Cloud
   * discovery are named after it. Unset: `http://AIEM_HOST:<port listened on>`.
   */
  readonly publicUrl?: string | undefined;
  /** AIEM_INTERNAL_KEY: the tickets of content URLs are sealed with a key derived from it (else the data directory's). */
  readonly internalKey?: string | undefined;
}

export function readEdgeEnv(env: Env = process.env): EdgeConfig {
  const origins = readString(env, "AIEM_CORS_ORIGINS", { default: "*" });
  return {
    corsOrigins:
      origins.trim() === "*"
        ? "*"
        : origins
            .split(",")
            .map((o) => o.trim())
            .filter(Boolean),
    bodyLimitBytes: readInt(env, "AIEM_BODY_LIMIT_BYTES", { default: 4 << 20, min: 1024, max: 1 << 30 }),
    publicUrl: readPublicUrl(env),
    internalKey: readString(env, "AIEM_INTERNAL_KEY", { optional: true }),
  };
}
