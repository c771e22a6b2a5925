// The distributed layout for tests and the fault suite: each part as its own process
// (`start-service.ts <part>`), with any number of replicas, against one PostgreSQL and NATS, and
// an edge that spreads calls over the replicas. Every replica has its own data directory (their
// engines and sandboxes run on "their host") and fixed port, so a replica killed and started
// again is the same replica at the same address. The keys the processes must agree on (token
// signing, page tokens, the internal key) are made once and handed to all of them.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, cp, mkdir, mkdtemp, readdir, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { loadOrCreateSigningKey, mintEmbeddedToken } from "@aiem/kit/identity";
import { destroyLeftSandboxes } from "@aiem/sandbox/runtime";
import { freePort } from "../testing/free-port.js";

export type ServicePart = "catalogue" | "engine" | "sandbox";
export const SERVICE_PARTS: readonly ServicePart[] = ["catalogue", "engine", "sandbox"];

const ENTRY = new URL("../start-service.ts", import.meta.url).pathname;

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
  const common: Record<string, string> = {
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

  async function makeReplica(part: ServicePart | "edge", index: number): Promise<Replica> {
    const name = part === "edge" ? "edge" : `${part}-${index}`;
    const dataDir = join(root, name);
    await mkdir(dataDir, { recursive: true });
    await cp(join(keys, "keys"), join(dataDir, "keys"), { recursive: true });
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

  const replicas: Replica[] = [];
  for (const part of SERVICE_PARTS) for (let i = 0; i < count; i++) replicas.push(await makeReplica(part, i));
  const edge = await makeReplica("edge", 0);
  const urlsOf = (part: ServicePart) =>
    replicas
      .filter((r) => r.part === part)
      .map((r) => r.url)
      .join(",");

  function envOf(replica: Replica): Record<string, string> {
    // Every part builds the URLs it hands out on the edge's address, as a deployment sets it.
    const env: Record<string, string> = {
      ...common,
      AIEM_DATA_DIR: replica.dataDir,
      AIEM_PORT: new URL(replica.url).port,
      AIEM_METRICS_PORT: new URL(replica.metricsUrl).port,
      AIEM_REPLICA_URL: replica.url,
      AIEM_PUBLIC_URL: edge.url,
    };
    if (replica.part === "sandbox" || replica.part === "edge") env.AIEM_CATALOGUE_URL = urlsOf("catalogue");
    if (replica.part === "edge") {
      for (const part of SERVICE_PARTS) env[`AIEM_${part.toUpperCase()}_URL`] = urlsOf(part);
    }
    return env;
  }

  function start(replica: Replica): Promise<void> {
    const args = options.compiled
      ? [join(options.compiled, "edge/src/start-service.js"), replica.part]
      : ["--import", "tsx", ENTRY, replica.part];
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...envOf(replica) },
      stdio: ["ignore", "ignore", "pipe"],
    });
    replica.child = child;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${replica.name} did not start:\n${replica.log.join("\n")}`)),
        90_000,
      );
      const onExit = (code: number | null) => {
        clearTimeout(timer);
        reject(new Error(`${replica.name} exited with ${code}:\n${replica.log.join("\n")}`));
      };
      child.once("exit", onExit);
      createInterface({ input: child.stderr! }).on("line", (line) => {
        replica.log.push(line);
        if (replica.log.length > 200) replica.log.shift();
        if (!line.includes('"ready"')) return;
        try {
          if ((JSON.parse(line) as { msg?: string }).msg !== "ready") return;
        } catch {
          return;
        }
        clearTimeout(timer);
        child.off("exit", onExit);
        child.once("exit", (code, signal) => {
          if (replica.child === child)
            replica.crashes.push(
              `${replica.name} ended by itself (${signal ?? code}):\n${replica.log.slice(-15).join("\n")}`,
            );
        });
        resolve();
      });
    });
  }

  async function stop(replica: Replica, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const child = replica.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    replica.child = undefined;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill(signal);
    });
  }

  const cluster: Cluster = {
    root,
    policyFile,
    edge,
    replicas,
    suffix,
    token: (user, admin = false) => mintEmbeddedToken(signingKey, { user, admin }),
    start,
    stop,
    async close() {
      await Promise.all([edge, ...replicas].map((r) => stop(r)));
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
    },
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
