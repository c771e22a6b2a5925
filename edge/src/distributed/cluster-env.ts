// The environment of a cluster's processes: what all of them share (servers, the keys they must
// agree on, the policy) and what each replica adds (its directory, ports and peers).
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { SERVICE_PARTS, type ClusterOptions, type Replica, type ServicePart } from "./cluster.js";

export function commonEnv(
  options: ClusterOptions,
  layout: { root: string; policyFile: string; suffix: string },
): Record<string, string> {
  const { root, policyFile, suffix } = layout;
  return {
    DATABASE_URL: options.databaseUrl,
    NATS_URL: options.natsUrl,
    AIEM_DB_SCHEMA_SUFFIX: `_c${suffix}`,
    AIEM_EVENTS_PREFIX: `c${suffix}`,
    AIEM_POLICY_FILE: policyFile,
    AIEM_INTERNAL_KEY: randomBytes(32).toString("base64"),
    AIEM_PAGE_TOKEN_KEY: randomBytes(32).toString("base64"),
    AIEM_SANDBOX_WARM_POOL: "0",
    // Workspace drives on storage every sandbox replica reaches, as a deployment has them.
    AIEM_DRIVE_DIR: join(root, "drive"),
    // close() ends the processes with SIGTERM; their sandboxes must not outlive the cluster
    // (a SIGKILLed replica's are adopted by its next start all the same).
    AIEM_SANDBOX_STOP_WITH_SERVICE: "true",
    ...options.env,
  };
}

export function replicaEnv(
  common: Record<string, string>,
  replica: Replica,
  peers: { replicas: readonly Replica[]; edge: Replica },
): Record<string, string> {
  const urlsOf = (part: ServicePart) =>
    peers.replicas
      .filter((r) => r.part === part)
      .map((r) => r.url)
      .join(",");
  // Every part builds the URLs it hands out on the edge's address, as a deployment sets it.
  const env: Record<string, string> = {
    ...common,
    AIEM_DATA_DIR: replica.dataDir,
    AIEM_PORT: new URL(replica.url).port,
    AIEM_METRICS_PORT: new URL(replica.metricsUrl).port,
    AIEM_REPLICA_URL: replica.url,
    AIEM_PUBLIC_URL: peers.edge.url,
  };
  if (replica.part === "sandbox" || replica.part === "edge") env.AIEM_CATALOGUE_URL = urlsOf("catalogue");
  if (replica.part === "edge") {
    for (const part of SERVICE_PARTS) env[`AIEM_${part.toUpperCase()}_URL`] = urlsOf(part);
  }
  return env;
}
