// The fault suite: two replicas of each part as processes, behind one edge, on a PostgreSQL and a
// NATS of the suite's own, under a mixed workload (engines created, paused, resumed, deleted;
// sandbox processes with output; catalogue writes and deletes) while faults come one at a time:
// a replica SIGKILLed and started again, NATS killed and restarted, PostgreSQL crashed (immediate
// shutdown) and restarted, the edge killed and restarted. Then the state is checked against what
// the workload was told: every success is reflected, nothing is stuck in a transitional state,
// every replica's copy of the catalogue agrees with the database, every process's output reads
// back, and no engine runs twice.
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { TEST_POLICY } from "@aiem/kit/testing";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkCatalogueCopies } from "./catalogue-copies.js";
import { createCluster, type Cluster } from "./cluster.js";
import { createCountingClient } from "./counting-client.js";
import { checkEngineProcesses, checkOutputs, checkStates } from "./fault-checks.js";
import { injectFaults, type InjectedFaults } from "./fault-injection.js";
import type { FaultReport } from "./fault-report.js";
import { startWorkload } from "./fault-workload.js";
import { startPrivateNats, startPrivatePostgres, type PrivateServer } from "./private-servers.js";
import { createRestClient } from "./rest-client.js";

export interface FaultSuiteOptions {
  /** Every service replica killed in turn (true), or one replica of each part (false, the short run). */
  readonly everyReplica: boolean;
  /** How many times the whole sequence of faults runs. */
  readonly rounds: number;
  /** Workload between two faults (ms). */
  readonly gapMs: number;
  /** Concurrent workload clients. */
  readonly workers: number;
  readonly log?: (line: string) => void;
}

export async function runFaultSuite(options: FaultSuiteOptions): Promise<FaultReport> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const root = await mkdtemp(join(tmpdir(), "aiem-faults-"));
  await chmod(root, 0o711);
  const servers: PrivateServer[] = [];
  let cluster: Cluster | undefined;
  try {
    const pg = await startPrivatePostgres(join(root, "pg"));
    servers.push(pg);
    const nats = await startPrivateNats(join(root, "nats"));
    servers.push(nats);
    cluster = await createCluster({ databaseUrl: pg.url, natsUrl: nats.url, policy: TEST_POLICY });
    log(`cluster up: ${cluster.replicas.map((r) => `${r.name} ${r.url}`).join(", ")}, edge ${cluster.edge.url}`);
    return await exercise(cluster, pg, nats, options, log, started);
  } finally {
    await cluster?.close().catch(() => undefined);
    for (const s of servers.reverse()) await s.stop().catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  }
}

async function exercise(
  cluster: Cluster,
  pg: PrivateServer,
  nats: PrivateServer,
  options: FaultSuiteOptions,
  log: (line: string) => void,
  started: number,
): Promise<FaultReport> {
  const token = await cluster.token("root", true);
  const api = createRestClient(cluster.edge.url, token);
  const client = createCountingClient(api);
  const workload = startWorkload(client, options.workers, log);
  const injected: InjectedFaults = { faults: [], killedSandboxReplicaAt: new Map() };
  try {
    await injectFaults({ cluster, pg, nats, ...options, log }, injected);
  } finally {
    await workload.stop();
  }
  const { counts } = client;
  log(`workload stopped after ${counts.requests} requests; checking`);
  const { expected } = workload;
  const states = await checkStates(api, expected);
  const outputs = await checkOutputs(api, expected.processes, injected.killedSandboxReplicaAt);
  const copies = await checkCatalogueCopies(cluster, token, expected.catalogue);
  const duplicateProcesses = await checkEngineProcesses(cluster.root, states.runningUids);
  return {
    crashes: [...cluster.replicas, cluster.edge].flatMap((r) => r.crashes),
    faults: injected.faults,
    requests: counts.requests,
    succeeded: counts.succeeded,
    refused: counts.refused,
    errors: Object.values(counts.errorsByKind).reduce((a, b) => a + b, 0),
    errorsByKind: counts.errorsByKind,
    lost: [...states.lost, ...outputs.lost],
    stuck: states.stuck,
    catalogueMismatches: copies.catalogueMismatches,
    catalogueChecks: copies.catalogueChecks,
    duplicateProcesses,
    outputLostWithAgent: outputs.outputLostWithAgent,
    outputsRead: outputs.outputsRead,
    durationMs: Date.now() - started,
  };
}
