// Many idle sandboxes on one machine (issue 30; a benchmark, not a test: it takes minutes and
// most of a small machine).
//   npx tsx bench/sandbox-density.ts [count]      (default 1000; BENCH_DENSITY_PARALLEL creates at once, default 4)
// Starts the benchmark server (bench/sandbox-server.ts, no warm pool) and creates `count`
// sandboxes, each until RUNNING; stops at the first create that fails and says why and how many
// ran. Then, while they all idle, times GETs of sandboxes picked at random (sequential, as one
// client polls) and checks that every one is still RUNNING. Prints the memory the machine gave
// them (MemAvailable before and after), the PSS of their processes, and the load average with
// every figure: other work on the machine inflates the times.
import * as fs from "node:fs";
import * as os from "node:os";
import { type Ready, startSandboxServer } from "./sandbox-server.js";

const COUNT = Number(process.argv[2] ?? 1000);
const PARALLEL = Number(process.env.BENCH_DENSITY_PARALLEL ?? 4);
const GETS = Number(process.env.BENCH_DENSITY_GETS ?? 2000);
const WS = "workspaces/bench";
const IMAGE = "workspaces/global/sandboxEngineImages/default";
const TEMPLATE = "workspaces/global/sandboxEngineTemplates/default";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`;
function quantile(samples: number[], q: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))]!;
}
function memAvailableMiB(): number {
  return Number(/^MemAvailable:\s+(\d+) kB/m.exec(fs.readFileSync("/proc/meminfo", "utf8"))![1]) / 1024;
}
function log(line: string): void {
  console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
}

function api(ready: Ready) {
  const headers = { authorization: `Bearer ${ready.token}`, "content-type": "application/json" };
  // biome-ignore lint/suspicious/noExplicitAny: a JSON answer the caller reads field by field
  return async (method: string, p: string, body?: unknown): Promise<any> => {
    const res = await fetch(`${ready.url}${p}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 400)}`);
    return JSON.parse(text);
  };
}

/** The processes below `root`, from /proc. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // ended meanwhile
    }
  }
  const out: number[] = [];
  const queue = [...(children.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}

/**
 * PSS in KiB of every process below the server that runs in a sandbox (bubblewrap and below),
 * their OS threads, and the agents' threads alone (what counts against the hosts' pid bounds).
 */
function sandboxProcesses(serverPid: number): {
  pss: number;
  processes: number;
  threads: number;
  agentThreads: number[];
} {
  let pss = 0;
  let processes = 0;
  let threads = 0;
  const agentThreads: number[] = [];
  for (const pid of descendants(serverPid)) {
    try {
      const comm = fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim();
      if (comm !== "bwrap" && comm !== "agent") continue;
      pss += Number(/^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0);
      const n = Number(/^Threads:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
      threads += n;
      if (comm === "agent") agentThreads.push(n);
      processes++;
    } catch {
      // ended meanwhile
    }
  }
  return { pss, processes, threads, agentThreads };
}

/** The host's bounds on processes and threads, and how many run now. */
function hostThreads(): string {
  const read = (f: string) => {
    try {
      return fs.readFileSync(f, "utf8").trim();
    } catch {
      return "?";
    }
  };
  let running = 0;
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      running += Number(/^Threads:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${name}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      // ended meanwhile
    }
  }
  return `threads on the host ${running}, threads-max ${read("/proc/sys/kernel/threads-max")}, pid_max ${read("/proc/sys/kernel/pid_max")}`;
}

console.log(
  `machine: ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ${load()}`,
);
const availableBefore = memAvailableMiB();
const server = await startSandboxServer({ warmPool: 0 });
const call = api(server.ready);
const names: string[] = [];
let failure: string | undefined;
try {
  const began = performance.now();
  let next = 0;
  const createOne = async (i: number) => {
    const created = (
      await call("POST", `/v1/${WS}/sandboxEngines?sandboxEngineId=idle-${i}`, {
        sandboxEngineImage: IMAGE,
        sandboxEngineTemplate: TEMPLATE,
      })
    ).sandboxEngine;
    for (let state = created.state; state !== "STATE_RUNNING"; ) {
      if (state === "STATE_FAILED") throw new Error(`${created.name} FAILED`);
      await sleep(20);
      state = (await call("GET", `/v1/${created.name}`)).sandboxEngine.state;
    }
    names.push(created.name);
    if (names.length % 100 === 0)
      log(
        `${names.length} RUNNING after ${((performance.now() - began) / 1000).toFixed(0)} s, MemAvailable ${memAvailableMiB().toFixed(0)} MiB, ${load()}`,
      );
  };
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (failure === undefined && next < COUNT) {
        const i = next++;
        try {
          await createOne(i);
        } catch (error) {
          failure ??= `create ${i}: ${error instanceof Error ? error.message : String(error)}`;
        }
      }
    }),
  );
  const took = (performance.now() - began) / 1000;
  log(
    `${names.length} of ${COUNT} sandboxes RUNNING, created in ${took.toFixed(0)} s (${PARALLEL} at once); ${load()}`,
  );
  if (failure) log(`stopped at the first failure: ${failure}`);
  // Idle: let the creates' work settle before the gets are timed.
  await sleep(10_000);
  const { pss, processes, threads, agentThreads } = sandboxProcesses(server.pid);
  const availableAfter = memAvailableMiB();
  log(
    `memory: MemAvailable ${availableBefore.toFixed(0)} -> ${availableAfter.toFixed(0)} MiB = ${((availableBefore - availableAfter) / Math.max(1, names.length)).toFixed(1)} MiB a sandbox (server, kernel and page cache included); PSS of the sandboxes' ${processes} processes ${(pss / 1024 / Math.max(1, names.length)).toFixed(2)} MiB a sandbox`,
  );
  log(
    `threads: ${threads} in the sandboxes' ${processes} processes; an agent ${Math.min(...agentThreads)}-${Math.max(...agentThreads)} (median ${quantile(agentThreads, 0.5)}); ${hostThreads()}`,
  );
  const times: number[] = [];
  for (let i = 0; i < GETS && names.length > 0; i++) {
    const name = names[Math.floor(Math.random() * names.length)]!;
    const t = performance.now();
    await call("GET", `/v1/${name}`);
    times.push(performance.now() - t);
  }
  const p99 = quantile(times, 0.99);
  log(
    `GET of a sandbox while ${names.length} idle: median ${quantile(times, 0.5).toFixed(1)} ms, p95 ${quantile(times, 0.95).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms (n=${times.length}); ${load()}`,
  );
  let running = 0;
  for (const name of names) if ((await call("GET", `/v1/${name}`)).sandboxEngine.state === "STATE_RUNNING") running++;
  log(`${running} of ${names.length} still RUNNING`);
  const met = running === COUNT && failure === undefined && p99 < 50;
  console.log(`  goal ${COUNT} RUNNING, a GET's p99 < 50 ms: ${met ? "MET" : "NOT MET"}`);
} finally {
  log(`stopping the server and its ${names.length} sandboxes`);
  await server.stop();
}
