import { readInt, readString, type Env } from "./env.js";

/** Where a process serves `/metrics`; undefined when AIEM_METRICS_PORT is 0 (off). */
export interface MetricsSettings {
  readonly port: number;
  readonly host: string;
  /**
   * Whether AIEM_METRICS_PORT was set. A port set on purpose that another process holds stops
   * the start; the default port taken (a second process on one machine) only turns metrics off
   * for this process, with a warning.
   */
  readonly required: boolean;
}

export const DEFAULT_METRICS_PORT = 9464;

/**
 * AIEM_METRICS_PORT (default 9464, 0 turns metrics off) and AIEM_METRICS_HOST (default
 * AIEM_HOST). Every process serves its own: processes sharing a host need distinct ports.
 */
export function readMetricsEnv(env: Env = process.env): MetricsSettings | undefined {
  const port = readInt(env, "AIEM_METRICS_PORT", { default: DEFAULT_METRICS_PORT, min: 0, max: 65535 });
  if (port === 0) return undefined;
  const host = readString(env, "AIEM_METRICS_HOST", {
    default: readString(env, "AIEM_HOST", { default: "127.0.0.1" }),
  });
  return { port, host, required: env.AIEM_METRICS_PORT !== undefined && env.AIEM_METRICS_PORT !== "" };
}
