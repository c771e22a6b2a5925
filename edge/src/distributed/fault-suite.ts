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
import { createCluster, processesUnder, type Cluster, type Replica } from "./cluster.js";
import { startPrivateNats, startPrivatePostgres, type PrivateServer } from "./private-servers.js";
import {
  createRestClient,
  DAI_PROFILE,
  DAI_VERSION,
  SANDBOX_IMAGE,
  SANDBOX_TEMPLATE,
  type Answer,
  type RestClient,
} from "./rest-client.js";

const WS = "workspaces/team-a";
const TRANSITIONAL = new Set([
  "STATE_STARTING",
  "STATE_CONNECTING",
  "STATE_PAUSING",
  "STATE_TERMINATING",
  "STATE_DELETING",
]);
/** How long after the faults an engine or sandbox may still be on its way (its reconcile window). */
const SETTLE_MS = 60_000;

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

export interface FaultReport {
  readonly faults: string[];
  readonly requests: number;
  readonly succeeded: number;
  /** Answers the API gives by rule (a pause of an engine that is not running, ...). */
  readonly refused: number;
  /** UNAVAILABLE, 5xx or no answer: the request may or may not have taken effect. */
  readonly errors: number;
  readonly errorsByKind: Record<string, number>;
  /** Successful requests the final state does not reflect. */
  readonly lost: string[];
  readonly stuck: string[];
  readonly catalogueMismatches: string[];
  /** Catalogue entries checked, summed over the replicas holding a copy. */
  readonly catalogueChecks: number;
  readonly duplicateProcesses: string[];
  /** Outputs of processes whose sandbox's agent ended after they ran (the service says they were lost). */
  readonly outputLostWithAgent: number;
  readonly outputsRead: number;
  readonly durationMs: number;
  /** Processes of the layout that ended without being killed. */
  readonly crashes: string[];
}

type EngineExpect = { name: string; uid: string; want: "running" | "paused" | "deleted" | "unknown" };
type ProcessExpect = { name: string; sandbox: string; text: string; finishedAt: number };

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
  const raw = createRestClient(cluster.edge.url, token);
  let requests = 0;
  let succeeded = 0;
  let refused = 0;
  const errorsByKind: Record<string, number> = {};
  /** Counts every answer; network failures (the edge restarting) are answers of status 0. */
  const call = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    requests++;
    let answer: Answer;
    try {
      answer = await raw.call(method, path, body);
    } catch (err) {
      answer = { status: 0, body: { message: err instanceof Error ? err.message : String(err) } };
    }
    if (answer.status === 200) succeeded++;
    else if (answer.status >= 400 && answer.status < 500 && answer.status !== 408 && answer.status !== 429) refused++;
    else {
      const kind = `${answer.status} ${String(answer.body?.message ?? "").slice(0, 60)}`;
      errorsByKind[kind] = (errorsByKind[kind] ?? 0) + 1;
    }
    return answer;
  };

  const engines = new Map<string, EngineExpect>();
  const sandboxes = new Set<string>();
  const processes: ProcessExpect[] = [];
  const catalogue = new Map<string, boolean>(); // name -> should exist
  const killedSandboxReplicaAt = new Map<string, number>(); // replica name -> last kill time
  let seq = 0;
  const next = (prefix: string) => `${prefix}-${(seq++).toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  const pick = <T>(items: T[]): T | undefined => items[Math.floor(Math.random() * items.length)];

  async function engineStep(): Promise<void> {
    const live = [...engines.values()].filter((e) => e.want !== "deleted");
    const roll = Math.random();
    if (live.length < 4 || roll < 0.25) {
      if (live.length >= 6) return;
      const id = next("e");
      const a = await call("POST", `/v1/${WS}/daiEngines?daiEngineId=${id}`, {
        profile: DAI_PROFILE,
        daiEngineVersion: DAI_VERSION,
      });
      const name = `${WS}/daiEngines/${id}`;
      // No answer: it may exist; its state is checked for being settled, not against a wish.
      if (a.status === 200) engines.set(name, { name, uid: a.body.daiEngine.uid, want: "running" });
      else if (a.status === 0 || a.status >= 500) engines.set(name, { name, uid: "", want: "unknown" });
      return;
    }
    const e = pick(live)!;
    const verb = roll < 0.5 ? "pause" : roll < 0.8 ? "resume" : "delete";
    const a =
      verb === "delete" ? await call("DELETE", `/v1/${e.name}`) : await call("POST", `/v1/${e.name}:${verb}`, {});
    if (a.status === 200) e.want = verb === "pause" ? "paused" : verb === "resume" ? "running" : "deleted";
    else if (a.status === 0 || a.status >= 500) e.want = "unknown";
  }

  async function sandboxStep(): Promise<void> {
    if (sandboxes.size < 2) {
      const id = next("s");
      const a = await call("POST", `/v1/${WS}/sandboxEngines?sandboxEngineId=${id}`, {
        sandboxEngineImage: SANDBOX_IMAGE,
        sandboxEngineTemplate: SANDBOX_TEMPLATE,
      });
      if (a.status === 200) sandboxes.add(a.body.sandboxEngine.name);
      return;
    }
    const sandbox = pick([...sandboxes])!;
    const text = next("out").repeat(20);
    const made = await call("POST", `/v1/${sandbox}/processes?autoRun=true`, {
      command: "sh",
      args: ["-c", `printf %s '${text}'`],
    });
    if (made.status !== 200) return;
    const waited = await call("POST", `/v1/${made.body.process.name}:wait`, {});
    if (waited.status === 200 && waited.body.process?.exitCode === 0)
      processes.push({ name: made.body.process.name, sandbox, text, finishedAt: Date.now() });
  }

  // Catalogue writes of two kinds: DAI versions (read by the engine replicas' copies) and sandbox
  // images (read by the sandbox replicas' copies).
  async function catalogueStep(): Promise<void> {
    const kind = seq % 2 === 0 ? "daiEngineVersions" : "sandboxEngineImages";
    const existing = [...catalogue].filter(([n, keep]) => keep && n.includes(`/${kind}/`)).map(([n]) => n);
    if (existing.length > 3 && Math.random() < 0.3) {
      const name = pick(existing)!;
      const a = await call("DELETE", `/v1/${name}`);
      if (a.status === 200) catalogue.set(name, false);
      else if (a.status === 0 || a.status >= 500) catalogue.delete(name); // unknown outcome: not checked
      return;
    }
    const [id, body] =
      kind === "daiEngineVersions"
        ? [`9.${seq++}.0`, { image: `example/dai:${seq}` }]
        : [next("img"), { image: `example/sandbox:${seq}`, enabled: true }];
    const a = await call("POST", `/v1/${WS}/${kind}?${kind.slice(0, -1)}Id=${id}`, body);
    if (a.status === 200) catalogue.set(`${WS}/${kind}/${id}`, true);
  }

  let running = true;
  const steps = [engineStep, engineStep, sandboxStep, catalogueStep];
  const workers = Array.from({ length: options.workers }, async (_, w) => {
    while (running) {
      await steps[(seq + w) % steps.length]!().catch((err: unknown) => log(`workload step threw: ${String(err)}`));
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  const faults: string[] = [];
  const pause = () => new Promise((r) => setTimeout(r, options.gapMs));
  const replicaFaults: Replica[] = options.everyReplica
    ? [...cluster.replicas]
    : ["catalogue-0", "engine-1", "sandbox-0"].map((n) => cluster.replicas.find((r) => r.name === n)!);
  try {
    await pause();
    for (let round = 0; round < options.rounds; round++) {
      for (const replica of replicaFaults) {
        log(`fault: SIGKILL ${replica.name}`);
        await cluster.stop(replica, "SIGKILL");
        if (replica.part === "sandbox") killedSandboxReplicaAt.set(replica.name, Date.now());
        faults.push(`SIGKILL ${replica.name}`);
        await pause();
        await cluster.start(replica);
        await pause();
      }
      log("fault: restart NATS");
      await nats.restart();
      faults.push("restart NATS");
      await pause();
      log("fault: crash and restart PostgreSQL");
      await pg.restart();
      faults.push("restart PostgreSQL");
      await pause();
      log("fault: SIGKILL the edge");
      await cluster.stop(cluster.edge, "SIGKILL");
      faults.push("SIGKILL edge");
      await cluster.start(cluster.edge);
      await pause();
    }
  } finally {
    running = false;
    await Promise.all(workers);
  }
  log(`workload stopped after ${requests} requests; checking`);

  // ---- checks ----------------------------------------------------------------------------------
  const api: RestClient = raw;
  const lost: string[] = [];
  const stuck: string[] = [];
  const until = Date.now() + SETTLE_MS;
  const settled = async (name: string): Promise<Answer> => {
    for (;;) {
      const a = await api.call("GET", `/v1/${name}`);
      const state = a.status === 200 ? (Object.values(a.body as object)[0] as { state?: string }).state : undefined;
      if (!state || !TRANSITIONAL.has(state) || Date.now() > until) return a;
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  const runningUids = new Set<string>();
  for (const e of engines.values()) {
    const a = await settled(e.name);
    const state = a.status === 200 ? (a.body.daiEngine.state as string) : undefined;
    if (state && TRANSITIONAL.has(state)) stuck.push(`${e.name} ${state}`);
    if (state === "STATE_RUNNING") runningUids.add(a.body.daiEngine.uid);
    const want = { running: "STATE_RUNNING", paused: "STATE_PAUSED", deleted: undefined, unknown: state }[e.want];
    if (e.want === "deleted" ? a.status !== 404 : state !== want)
      lost.push(`${e.name}: wanted ${e.want}, found ${a.status} ${state ?? ""}`);
  }
  for (const s of sandboxes) {
    const a = await settled(s);
    const state = a.status === 200 ? (a.body.sandboxEngine.state as string) : `${a.status}`;
    if (state !== "STATE_RUNNING") lost.push(`${s}: wanted STATE_RUNNING, found ${state}`);
  }

  // Output: every byte of every process that ended well, unless its agent died since.
  let outputLostWithAgent = 0;
  let outputsRead = 0;
  for (const p of processes) {
    const a = await api.call("GET", `/v1/${p.name}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`);
    if (a.status === 200 && Buffer.from(a.body.data as string, "base64").toString() === p.text) {
      outputsRead++;
      continue;
    }
    const diedSince = [...killedSandboxReplicaAt.values()].some((t) => t > p.finishedAt);
    if (a.status === 400 && /lost when its sandbox engine was started again/.test(String(a.body?.message)) && diedSince)
      outputLostWithAgent++;
    else lost.push(`${p.name}: output ${a.status} ${JSON.stringify(a.body).slice(0, 120)}`);
  }

  // Every replica's copy of the catalogue: entries created are there, deleted ones gone. A copy is
  // read through the create that checks against it: an engine create with validateOnly names the
  // version; a sandbox create names the image with a template that does not exist, so it is
  // refused either way and the field it is refused for tells whether the copy has the image.
  const catalogueMismatches: string[] = [];
  let catalogueChecks = 0;
  const copies: Partial<
    Record<
      Replica["part"],
      {
        kind: string;
        probe: (direct: RestClient, name: string) => Promise<{ has: boolean | undefined; answer: Answer }>;
      }
    >
  > = {
    engine: {
      kind: "/daiEngineVersions/",
      probe: async (direct, name) => {
        const a = await direct.call("POST", `/v1/${WS}/daiEngines?daiEngineId=probe&validateOnly=true`, {
          profile: DAI_PROFILE,
          daiEngineVersion: name,
        });
        return {
          has:
            a.status === 200
              ? true
              : /^dai_engine_version .* not found$/.test(String(a.body?.message))
                ? false
                : undefined,
          answer: a,
        };
      },
    },
    sandbox: {
      kind: "/sandboxEngineImages/",
      probe: async (direct, name) => {
        const a = await direct.call("POST", `/v1/${WS}/sandboxEngines?sandboxEngineId=probe`, {
          sandboxEngineImage: name,
          sandboxEngineTemplate: `${WS}/sandboxEngineTemplates/absent`,
        });
        const message = String(a.body?.message);
        return {
          has:
            a.status !== 400
              ? undefined
              : /sandbox_engine_template:/.test(message)
                ? true
                : /sandbox_engine_image: .* does not exist/.test(message)
                  ? false
                  : undefined,
          answer: a,
        };
      },
    },
  };
  for (const replica of cluster.replicas) {
    const copy = copies[replica.part];
    if (!copy) continue;
    const direct = createRestClient(replica.url, token);
    for (const [name, exists] of catalogue) {
      if (!name.includes(copy.kind)) continue;
      catalogueChecks++;
      let seen = await copy.probe(direct, name);
      // The copy follows the stream: give it the time a replay takes after the last fault.
      for (
        const end = Date.now() + 30_000;
        seen.has !== exists && Date.now() < end;
        seen = await copy.probe(direct, name)
      )
        await new Promise((r) => setTimeout(r, 250));
      if (seen.has !== exists)
        catalogueMismatches.push(
          `${replica.name}: ${name} ${exists ? "missing" : "still there"} (${seen.answer.status} ${String(seen.answer.body?.message ?? "").slice(0, 80)})`,
        );
    }
  }

  // One process per running engine, none for the others.
  const duplicateProcesses: string[] = [];
  const counts = new Map<string, number>();
  for (const { cwd } of await processesUnder(cluster.root)) {
    const uid = /\/engines\/([^/]+)\/data$/.exec(cwd)?.[1];
    if (uid) counts.set(uid, (counts.get(uid) ?? 0) + 1);
  }
  for (const [uid, n] of counts)
    if (n > 1 || !runningUids.has(uid))
      duplicateProcesses.push(`${uid}: ${n} process(es), engine ${runningUids.has(uid) ? "running" : "not running"}`);
  for (const uid of runningUids) if (!counts.has(uid)) duplicateProcesses.push(`${uid}: running without a process`);

  const errors = Object.values(errorsByKind).reduce((a, b) => a + b, 0);
  const crashes = [...cluster.replicas, cluster.edge].flatMap((r) => r.crashes);
  return {
    crashes,
    faults,
    requests,
    succeeded,
    refused,
    errors,
    errorsByKind,
    lost,
    stuck,
    catalogueMismatches,
    catalogueChecks,
    duplicateProcesses,
    outputLostWithAgent,
    outputsRead,
    durationMs: Date.now() - started,
  };
}

export function formatReport(r: FaultReport): string {
  return [
    `faults injected: ${r.faults.length} (${r.faults.join(", ")})`,
    `requests: ${r.requests} (succeeded ${r.succeeded}, refused by rule ${r.refused}, errors ${r.errors})`,
    ...Object.entries(r.errorsByKind).map(([k, n]) => `  error ${k}: ${n}`),
    `lost: ${r.lost.length}${r.lost.length ? `\n  ${r.lost.join("\n  ")}` : ""}`,
    `stuck in a transitional state: ${r.stuck.length}${r.stuck.length ? `\n  ${r.stuck.join("\n  ")}` : ""}`,
    `catalogue entries checked in the replicas' copies: ${r.catalogueChecks}; differing from the database: ${r.catalogueMismatches.length}${r.catalogueMismatches.length ? `\n  ${r.catalogueMismatches.join("\n  ")}` : ""}`,
    `engine process mismatches: ${r.duplicateProcesses.length}${r.duplicateProcesses.length ? `\n  ${r.duplicateProcesses.join("\n  ")}` : ""}`,
    `process outputs read back: ${r.outputsRead}; lost with a killed sandbox replica's agent: ${r.outputLostWithAgent}`,
    `processes that ended by themselves: ${r.crashes.length}${r.crashes.length ? `\n${r.crashes.join("\n")}` : ""}`,
    `duration: ${Math.round(r.durationMs / 1000)} s`,
  ].join("\n");
}
