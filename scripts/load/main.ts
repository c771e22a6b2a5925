// `npm run load`: 100 concurrent clients drive a mixed read/write workload through the edge of
// the multi-process layout (two replicas of each part) on PostgreSQL and NATS for 60 s
// (autocannon), then report
// throughput, latency percentiles, errors, and each process's memory at the end against the
// start. Exits non-zero when any request failed.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { createCluster, type Cluster } from "../../edge/src/distributed/cluster.js";
import { mixedWorkload, prepareWorkload } from "./workload.js";

const POLICY = `
admins: [users/root]
workspaces:
  team-a:
    members: [users/alice]
`;

const SETTLE_MS = 10_000;

function rssMiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN);
  return kib / 1024;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      connections: { type: "string", default: "100" },
      duration: { type: "string", default: "60" },
      replicas: { type: "string", default: "2" },
      // Requests per second over all clients; 0 sends as fast as the product answers.
      rate: { type: "string", default: "0" },
    },
  });
  const connections = Number(values.connections);
  const duration = Number(values.duration);
  const replicas = Number(values.replicas);
  const rate = Number(values.rate);
  for (const [name, value, min] of [
    ["--connections", connections, 1],
    ["--duration", duration, 1],
    ["--replicas", replicas, 1],
    ["--rate", rate, 0],
  ] as const) {
    if (!Number.isInteger(value) || value < min) {
      console.error(`npm run load: ${name} must be a whole number of at least ${min}`);
      return 2;
    }
  }
  if (!process.env.DATABASE_URL || !process.env.NATS_URL) {
    console.error(
      "npm run load needs DATABASE_URL and NATS_URL (PostgreSQL and NATS with JetStream; `npm run setup -- --services` starts both)",
    );
    return 2;
  }

  let cluster: Cluster | undefined;
  try {
    console.log(
      `load: starting ${replicas} replica(s) of the catalogue, engine and sandbox parts and an edge, each in its own process`,
    );
    cluster = await createCluster({
      replicas,
      databaseUrl: process.env.DATABASE_URL!,
      natsUrl: process.env.NATS_URL!,
      policy: POLICY,
      env: { AIEM_LOG_LEVEL: "warn" },
    });
    const parts = [...cluster.replicas, cluster.edge];
    const token = await cluster.token("alice");
    const edgeUrl = cluster.edge.url;
    const fixture = await prepareWorkload(edgeUrl, token);
    const before = new Map(parts.map((p) => [p.name, rssMiB(p.child?.pid)]));

    const workload = mixedWorkload(fixture);
    console.log(
      `load: ${connections} clients, ${duration} s${rate > 0 ? `, ${rate} req/s in all` : ""}, ${workload.describe}`,
    );
    const result = await autocannon({
      url: edgeUrl,
      connections,
      duration,
      // autocannon refuses an overallRate below 1: no cap is no option at all.
      ...(rate > 0 ? { overallRate: rate } : {}),
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      requests: workload.requests,
    });

    const failed = result.non2xx + result.errors + result.timeouts;
    const rows: [string, string][] = [
      ["requests", String(result.requests.total)],
      ["throughput", `${result.requests.average.toFixed(0)} req/s`],
      ["latency p50 / p99 / max", `${result.latency.p50} / ${result.latency.p99} / ${result.latency.max} ms`],
      [
        "errors (non-2xx, socket errors, timeouts)",
        `${failed} (${result.non2xx}, ${result.errors}, ${result.timeouts}), ${((100 * failed) / Math.max(1, result.requests.total)).toFixed(3)} %`,
      ],
    ];
    for (const [what, value] of rows) console.log(`load: ${what.padEnd(42)} ${value}`);
    for (const [kind, count] of workload.counts())
      console.log(`load:   ${kind.padEnd(40)} ${count.ok} ok, ${count.failed} failed`);
    for (const sample of workload.failures()) console.log(`load:   failed: ${sample}`);
    // Memory right after the load, and once the processes had a quiet while to collect garbage:
    // growth that stays is what to look at.
    const after = new Map(parts.map((p) => [p.name, rssMiB(p.child?.pid)]));
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    for (const part of parts) {
      const [start, end, settled] = [before.get(part.name)!, after.get(part.name)!, rssMiB(part.child?.pid)];
      console.log(
        `load: memory of ${part.name.padEnd(12)} ${start.toFixed(0)} MiB at the start, ${end.toFixed(0)} MiB at the end, ${settled.toFixed(0)} MiB ${SETTLE_MS / 1000} s later`,
      );
    }
    return failed === 0 ? 0 : 1;
  } finally {
    await cluster?.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
