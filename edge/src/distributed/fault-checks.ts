// The checks after the faults, against what the workload was told: every success reflected,
// nothing stuck in a transitional state, every process's output read back, no engine running
// twice. (The replicas' catalogue copies are checked in catalogue-copies.ts.)
import { processesUnder } from "./cluster.js";
import type { Expectations, ProcessExpect } from "./fault-workload.js";
import type { Answer, RestClient } from "./rest-client.js";

const TRANSITIONAL = new Set([
  "STATE_STARTING",
  "STATE_CONNECTING",
  "STATE_PAUSING",
  "STATE_TERMINATING",
  "STATE_DELETING",
]);
/** How long after the faults an engine or sandbox may still be on its way (its reconcile window). */
const SETTLE_MS = 60_000;

export interface StateFindings {
  readonly lost: string[];
  readonly stuck: string[];
  /** Uids of the engines found running. */
  readonly runningUids: Set<string>;
}

/** Every engine and sandbox, once settled (or its window is over), against the state it was promised. */
export async function checkStates(api: RestClient, expected: Expectations): Promise<StateFindings> {
  const found: StateFindings = { lost: [], stuck: [], runningUids: new Set() };
  const until = Date.now() + SETTLE_MS;
  const settled = async (name: string): Promise<Answer> => {
    for (;;) {
      const a = await api.call("GET", `/v1/${name}`);
      const state = a.status === 200 ? (Object.values(a.body as object)[0] as { state?: string }).state : undefined;
      if (!state || !TRANSITIONAL.has(state) || Date.now() > until) return a;
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  for (const e of expected.engines.values()) {
    const a = await settled(e.name);
    const state = a.status === 200 ? (a.body.daiEngine.state as string) : undefined;
    if (state && TRANSITIONAL.has(state)) found.stuck.push(`${e.name} ${state}`);
    if (state === "STATE_RUNNING") found.runningUids.add(a.body.daiEngine.uid);
    const want = { running: "STATE_RUNNING", paused: "STATE_PAUSED", deleted: undefined, unknown: state }[e.want];
    if (e.want === "deleted" ? a.status !== 404 : state !== want)
      found.lost.push(`${e.name}: wanted ${e.want}, found ${a.status} ${state ?? ""}`);
  }
  for (const s of expected.sandboxes) {
    const a = await settled(s);
    const state = a.status === 200 ? (a.body.sandboxEngine.state as string) : `${a.status}`;
    if (state !== "STATE_RUNNING") found.lost.push(`${s}: wanted STATE_RUNNING, found ${state}`);
  }
  return found;
}

export interface OutputFindings {
  readonly lost: string[];
  outputLostWithAgent: number;
  outputsRead: number;
}

/** Every byte of every process that ended well, unless its agent died since. */
export async function checkOutputs(
  api: RestClient,
  processes: readonly ProcessExpect[],
  killedSandboxReplicaAt: ReadonlyMap<string, number>,
): Promise<OutputFindings> {
  const found: OutputFindings = { lost: [], outputLostWithAgent: 0, outputsRead: 0 };
  for (const p of processes) {
    const a = await api.call("GET", `/v1/${p.name}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`);
    if (a.status === 200 && Buffer.from(a.body.data as string, "base64").toString() === p.text) {
      found.outputsRead++;
      continue;
    }
    const diedSince = [...killedSandboxReplicaAt.values()].some((t) => t > p.finishedAt);
    if (a.status === 400 && /lost when its sandbox engine was started again/.test(String(a.body?.message)) && diedSince)
      found.outputLostWithAgent++;
    else found.lost.push(`${p.name}: output ${a.status} ${JSON.stringify(a.body).slice(0, 120)}`);
  }
  return found;
}

/** One process per running engine, none for the others. */
export async function checkEngineProcesses(root: string, runningUids: ReadonlySet<string>): Promise<string[]> {
  const mismatches: string[] = [];
  const counts = new Map<string, number>();
  for (const { cwd } of await processesUnder(root)) {
    const uid = /\/engines\/([^/]+)\/data$/.exec(cwd)?.[1];
    if (uid) counts.set(uid, (counts.get(uid) ?? 0) + 1);
  }
  for (const [uid, n] of counts)
    if (n > 1 || !runningUids.has(uid))
      mismatches.push(`${uid}: ${n} process(es), engine ${runningUids.has(uid) ? "running" : "not running"}`);
  for (const uid of runningUids) if (!counts.has(uid)) mismatches.push(`${uid}: running without a process`);
  return mismatches;
}
