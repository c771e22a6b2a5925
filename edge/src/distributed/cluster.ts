// The distributed layout for tests and the fault suite: each part as its own process
// (`start-service.ts <part>`), with any number of replicas, against one PostgreSQL and NATS, and
// an edge that spreads calls over the replicas. Every replica has its own data directory (their
// engines and sandboxes run on "their host") and fixed port, so a replica killed and started
// again is the same replica at the same address. The keys the processes must agree on (token
// signing, page tokens, the internal key) are made once and handed to all of them.
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, cp, mkdir, mkdtemp, readdir, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadOrCreateSigningKey, mintEmbeddedToken } from "@aiem/kit/identity";
import { destroyLeftSandboxes } from "@aiem/sandbox/runtime";
import { freePort } from "../testing/free-port.js";
import { commonEnv, replicaEnv } from "./cluster-env.js";
import { startReplica, stopReplica } from "./replica-process.js";

export type ServicePart = "catalogue" | "engine" | "sandbox";
export const SERVICE_PARTS: readonly ServicePart[] = ["catalogue", "engine", "sandbox"];

export interface Replica {
  readonly part: ServicePart | "edge";
  readonly index: number;
  readonly name: string;
  readonly url: string;
  /** Its `/metrics`, on a port of its own (processes on one machine cannot share 9464). */
  readonly metricsUrl: string;
  readonly dataDir: string;
  /** The running process, while it runs. */
  child: ChildProcess | undefined;
  /** Its last log lines, for failure messages. */
  readonly log: string[];
  /** Ends it came to on its own (not stopped by the cluster), with the log lines before. */
  readonly crashes: string[];
}

export interface ClusterOptions {
  /** Replicas of each service part. Default 2. */
  readonly replicas?: number;
  readonly databaseUrl: string;
  readonly natsUrl: string;
  readonly policy: string;
  /** More environment for every process. */
  readonly env?: Readonly<Record<string, string>>;
  /** A `npm run build` output to run (plain node) instead of the sources through tsx. */
  readonly compiled?: string;
}

export interface Cluster {
  readonly root: string;
  readonly policyFile: string;
  readonly edge: Replica;
  readonly replicas: readonly Replica[];
  /** The schema suffix and events prefix that keep this cluster apart from others on the same servers. */
  readonly suffix: string;
  token(user: string, admin?: boolean): Promise<string>;
  start(replica: Replica): Promise<void>;
  /** Sends `signal` and waits for the process to end. */
  stop(replica: Replica, signal?: NodeJS.Signals): Promise<void>;
  /** Everything stopped (SIGTERM), the directories removed. */
  close(): Promise<void>;
}

/** Processes whose working directory lies under `dir` (engine processes run in their data directory). */
export async function processesUnder(dir: string): Promise<Array<{ pid: number; cwd: string }>> {
  const found: Array<{ pid: number; cwd: string }> = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cwd = await readlink(`/proc/${entry}/cwd`).catch(() => undefined);
    if (cwd?.startsWith(`${dir}/`)) found.push({ pid: Number(entry), cwd });
  }
  return found;
}

export async function createCluster(options: ClusterOptions): Promise<Cluster> {
  const count = options.replicas ?? 2;
  const root = await mkdtemp(join(tmpdir(), "aiem-cluster-"));
  // Sandboxes run as other users, which must pass through to their directories (not list them).
  await chmod(root, 0o711);
  const suffix = randomBytes(4).toString("hex");
  const keys = join(root, "shared-keys");
  const signingKey = await loadOrCreateSigningKey(keys);
  const policyFile = join(root, "policy.yaml");
  await writeFile(policyFile, options.policy);
  const common = commonEnv(options, { root, policyFile, suffix });
  const replicas: Replica[] = [];
  for (const part of SERVICE_PARTS) for (let i = 0; i < count; i++) replicas.push(await makeReplica(root, part, i));
  const edge = await makeReplica(root, "edge", 0);
  const start = (replica: Replica) =>
    startReplica(replica, replicaEnv(common, replica, { replicas, edge }), options.compiled);
  const cluster: Cluster = {
    root,
    policyFile,
    edge,
    replicas,
    suffix,
    token: (user, admin = false) => mintEmbeddedToken(signingKey, { user, admin }),
    start,
    stop: stopReplica,
    close: () => closeCluster(root, edge, replicas),
  };
  try {
    // The catalogue first: the others replay its stream and the sandbox calls it for secrets.
    await Promise.all(replicas.filter((r) => r.part === "catalogue").map(start));
    await Promise.all(replicas.filter((r) => r.part !== "catalogue").map(start));
    await start(edge);
  } catch (err) {
    await cluster.close().catch(() => undefined);
    throw err;
  }
  return cluster;
}

/** A replica's directory (with the shared keys) and ports, its process not yet started. */
async function makeReplica(root: string, part: ServicePart | "edge", index: number): Promise<Replica> {
  const name = part === "edge" ? "edge" : `${part}-${index}`;
  const dataDir = join(root, name);
  await mkdir(dataDir, { recursive: true });
  await cp(join(root, "shared-keys", "keys"), join(dataDir, "keys"), { recursive: true });
  return {
    part,
    index,
    name,
    url: `http://127.0.0.1:${await freePort()}`,
    metricsUrl: `http://127.0.0.1:${await freePort()}/metrics`,
    dataDir,
    child: undefined,
    log: [],
    crashes: [],
  };
}

async function closeCluster(root: string, edge: Replica, replicas: readonly Replica[]): Promise<void> {
  await Promise.all([edge, ...replicas].map((r) => stopReplica(r)));
  // Engine processes outlive their service by design (a restart adopts them); none outlives the cluster.
  for (const { pid } of await processesUnder(root)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  // A replica down at the end (killed and not started again) left its sandboxes running.
  for (const replica of replicas.filter((r) => r.part === "sandbox")) await destroyLeftSandboxes(replica.dataDir);
  await rm(root, { recursive: true, force: true });
}
