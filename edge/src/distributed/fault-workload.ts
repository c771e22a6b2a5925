// The fault suite's mixed workload: engines created, paused, resumed and deleted; sandbox
// processes with output; catalogue writes and deletes. It records what each answer promised, for
// the checks after the faults.
import type { CountingClient } from "./counting-client.js";
import { DAI_PROFILE, DAI_VERSION, SANDBOX_IMAGE, SANDBOX_TEMPLATE } from "./rest-client.js";

export const WS = "workspaces/team-a";

export type EngineExpect = { name: string; uid: string; want: "running" | "paused" | "deleted" | "unknown" };
export type ProcessExpect = { name: string; sandbox: string; text: string; finishedAt: number };

/** What the workload was told: the state each answer promised. */
export interface Expectations {
  readonly engines: Map<string, EngineExpect>;
  readonly sandboxes: Set<string>;
  readonly processes: ProcessExpect[];
  /** Catalogue entry name -> whether it should exist. */
  readonly catalogue: Map<string, boolean>;
}

interface Workload {
  readonly client: CountingClient;
  readonly expected: Expectations;
  seq: number;
}

function next(w: Workload, prefix: string): string {
  return `${prefix}-${(w.seq++).toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
}

function pick<T>(items: T[]): T | undefined {
  return items[Math.floor(Math.random() * items.length)];
}

async function engineStep(w: Workload): Promise<void> {
  const { engines } = w.expected;
  const live = [...engines.values()].filter((e) => e.want !== "deleted");
  const roll = Math.random();
  if (live.length < 4 || roll < 0.25) {
    if (live.length >= 6) return;
    const id = next(w, "e");
    const a = await w.client.call("POST", `/v1/${WS}/daiEngines?daiEngineId=${id}`, {
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
    verb === "delete"
      ? await w.client.call("DELETE", `/v1/${e.name}`)
      : await w.client.call("POST", `/v1/${e.name}:${verb}`, {});
  if (a.status === 200) e.want = verb === "pause" ? "paused" : verb === "resume" ? "running" : "deleted";
  else if (a.status === 0 || a.status >= 500) e.want = "unknown";
}

async function sandboxStep(w: Workload): Promise<void> {
  const { sandboxes, processes } = w.expected;
  if (sandboxes.size < 2) {
    const id = next(w, "s");
    const a = await w.client.call("POST", `/v1/${WS}/sandboxEngines?sandboxEngineId=${id}`, {
      sandboxEngineImage: SANDBOX_IMAGE,
      sandboxEngineTemplate: SANDBOX_TEMPLATE,
    });
    if (a.status === 200) sandboxes.add(a.body.sandboxEngine.name);
    return;
  }
  const sandbox = pick([...sandboxes])!;
  const text = next(w, "out").repeat(20);
  const made = await w.client.call("POST", `/v1/${sandbox}/processes?autoRun=true`, {
    command: "sh",
    args: ["-c", `printf %s '${text}'`],
  });
  if (made.status !== 200) return;
  const waited = await w.client.call("POST", `/v1/${made.body.process.name}:wait`, {});
  if (waited.status === 200 && waited.body.process?.exitCode === 0)
    processes.push({ name: made.body.process.name, sandbox, text, finishedAt: Date.now() });
}

// Catalogue writes of two kinds: DAI versions (read by the engine replicas' copies) and sandbox
// images (read by the sandbox replicas' copies).
async function catalogueStep(w: Workload): Promise<void> {
  const { catalogue } = w.expected;
  const kind = w.seq % 2 === 0 ? "daiEngineVersions" : "sandboxEngineImages";
  const existing = [...catalogue].filter(([n, keep]) => keep && n.includes(`/${kind}/`)).map(([n]) => n);
  if (existing.length > 3 && Math.random() < 0.3) {
    const name = pick(existing)!;
    const a = await w.client.call("DELETE", `/v1/${name}`);
    if (a.status === 200) catalogue.set(name, false);
    else if (a.status === 0 || a.status >= 500) catalogue.delete(name); // unknown outcome: not checked
    return;
  }
  const [id, body] =
    kind === "daiEngineVersions"
      ? [`9.${w.seq++}.0`, { image: `example/dai:${w.seq}` }]
      : [next(w, "img"), { image: `example/sandbox:${w.seq}`, enabled: true }];
  const a = await w.client.call("POST", `/v1/${WS}/${kind}?${kind.slice(0, -1)}Id=${id}`, body);
  if (a.status === 200) catalogue.set(`${WS}/${kind}/${id}`, true);
}

export interface RunningWorkload {
  readonly expected: Expectations;
  /** Lets every worker finish its step, then resolves. */
  stop(): Promise<void>;
}

/** Starts `workers` concurrent clients, each taking the steps in turn until stopped. */
export function startWorkload(client: CountingClient, workers: number, log: (line: string) => void): RunningWorkload {
  const expected: Expectations = { engines: new Map(), sandboxes: new Set(), processes: [], catalogue: new Map() };
  const w: Workload = { client, expected, seq: 0 };
  let running = true;
  const steps = [engineStep, engineStep, sandboxStep, catalogueStep];
  const loops = Array.from({ length: workers }, async (_, worker) => {
    while (running) {
      await steps[(w.seq + worker) % steps.length]!(w).catch((err: unknown) =>
        log(`workload step threw: ${String(err)}`),
      );
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  return {
    expected,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}
