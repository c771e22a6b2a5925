// The sandbox data path against the machine (issues 15 and 30): one figure per goal row, each
// with its baseline measured in the same run and the ratio between them.
//   npx tsx bench/sandbox-data-path.bench.ts [row ...]   (rows: process, idle, cold, warm, file, large, stream, burst)
// The server is bench/sandbox-server.ts in a child process, with the product's 4 MiB request
// limit. "memory" is the growth of the server process's peak resident set during the transfers
// (the kernel's high-water mark, reset before them through /proc/<pid>/clear_refs). The 1 GiB
// rows move the file with curl (the Debian package), as the baseline copies it with cp. The file
// rows say the CPU each side used (the 1 GiB ones the client's too): the server, and the sandbox.
// Every row says the machine's load average when it ran: other work on a small machine inflates
// the times of a row and its baseline alike, which the ratio shows. Many idle sandboxes at once:
// bench/sandbox-density.ts.
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { FilesystemService } from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import { MKFS_OPTIONS } from "../services/sandbox/src/runtime/storage-images.js";
import { ProcessService } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { type Ready, type SandboxServer, startSandboxServer } from "./sandbox-server.js";

const WS = "workspaces/bench";
const IMAGE = "workspaces/global/sandboxEngineImages/default";
const TEMPLATE = "workspaces/global/sandboxEngineTemplates/default";
const RUNS = Number(process.env.BENCH_RUNS ?? 40);
/**
 * Create+wait pairs run before the process row measures: a long-running service has compiled its
 * request path (V8 compiles hot code in the background for the first few hundred calls, which
 * took ~5 ms of CPU per call on this machine), as it has for an agent that calls it hundreds of
 * times per task. The row also says what the first calls of a fresh server took.
 */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);
/** Creates timed by the cold and warm rows (the goal: the median of 10). */
const CREATES = 10;
const FILE_BYTES = 64 << 20;
const FILE_RUNS = 4;
/**
 * Calls of each 64 MiB transfer made, and shown, before the timed ones: the first one or two of a
 * kind in a server are slower (WriteFileStream: 380-525 ms and 0.4-0.55 s of the server's CPU,
 * then 190-300 ms and 0.1 s), which is V8 compiling the path, not its speed; the process row
 * measures after its warm-up for the same reason.
 */
const FILE_WARMUP = Number(process.env.BENCH_FILE_WARMUP ?? 2);
/** Bytes per WriteFileStream message: a quarter of the request limit. */
const STREAM_MESSAGE_BYTES = 1 << 20;
const LARGE_BYTES = 1 << 30;
const STREAM_BYTES = 100 * 1024 * 1024;
const STREAM_RUNS = 3;
const BURST = 200;

const rows = process.argv.slice(2);
const want = (row: string) => rows.length === 0 || rows.includes(row);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const load = () =>
  `load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-bench-data-"));

// ---- figures ------------------------------------------------------------------------------------

function sorted(samples: number[]): number[] {
  return [...samples].sort((a, b) => a - b);
}
function quantile(samples: number[], q: number): number {
  const s = sorted(samples);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))]!;
}
const median = (samples: number[]) => quantile(samples, 0.5);
function stats(samples: number[]): string {
  const s = sorted(samples);
  return `median ${median(s).toFixed(1)} ms (min ${s[0]!.toFixed(1)}, p90 ${quantile(s, 0.9).toFixed(1)}, n=${s.length})`;
}
const mbps = (bytes: number, ms: number) => bytes / 1e6 / (ms / 1000);
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`;
function verdict(ok: boolean): string {
  return ok ? "MET" : "NOT MET";
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.resume();
    child.stderr.resume();
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`))));
  });
}

/** The server's peak resident set, in bytes, since the last reset. */
function peakRss(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}
/**
 * CPU seconds used so far by `pid` itself and, apart, by its descendants (the sandboxes: the
 * agent runs under bubblewrap below the server), from /proc: what each side of a transfer costs.
 */
function cpuSeconds(pid: number): { own: number; below: number } {
  const tick = 100;
  const parents = new Map<number, number>();
  const used = new Map<number, number>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parents.set(Number(entry), Number(fields[1]));
      used.set(Number(entry), (Number(fields[11]) + Number(fields[12])) / tick);
    } catch {
      // Ended meanwhile.
    }
  }
  let below = 0;
  for (const [child] of parents) {
    for (let p = parents.get(child); p !== undefined && p > 1; p = parents.get(p)) {
      if (p === pid) {
        below += used.get(child) ?? 0;
        break;
      }
    }
  }
  return { own: used.get(pid) ?? 0, below };
}

function resetPeak(pid: number): number {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, "5");
  return peakRss(pid);
}

// ---- the API ------------------------------------------------------------------------------------

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
    if (res.status !== 200) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
}

function connectClients(
  ready: Ready,
  httpVersion: "1.1" | "2" = "1.1",
): { processes: Client<typeof ProcessService>; files: Client<typeof FilesystemService> } {
  const transport = createConnectTransport({
    baseUrl: ready.url,
    httpVersion,
    interceptors: [
      (next) => (req) => {
        req.header.set("authorization", `Bearer ${ready.token}`);
        return next(req);
      },
    ],
  });
  return { processes: createClient(ProcessService, transport), files: createClient(FilesystemService, transport) };
}

async function createSandbox(ready: Ready, id: string): Promise<string> {
  const call = api(ready);
  // A create that hands out a warm sandbox answers RUNNING: nothing is left to poll.
  const created = (
    await call("POST", `/v1/${WS}/sandboxEngines?sandboxEngineId=${id}`, {
      sandboxEngineImage: IMAGE,
      sandboxEngineTemplate: TEMPLATE,
    })
  ).sandboxEngine;
  if (created.state === "STATE_RUNNING") return created.name;
  const posted = performance.now();
  let polls = 0;
  while ((await call("GET", `/v1/${created.name}`)).sandboxEngine.state !== "STATE_RUNNING") {
    polls++;
    await sleep(2);
  }
  // With the server's step log (docs/performance.md), what the client saw.
  if (process.env.AIEM_DEBUG_START_STEPS === "1")
    console.log(
      `  client: ${polls} polls after the answer, RUNNING seen ${(performance.now() - posted).toFixed(1)} ms after it`,
    );
  return created.name;
}

/** A file of `bytes` pseudo-random bytes (no run of zeros a filesystem could skip). */
function makeHostFile(file: string, bytes: number): void {
  const block = Buffer.alloc(1 << 20);
  for (let i = 0; i < block.length; i += 4) block.writeUInt32LE((i * 2654435761) >>> 0, i);
  const fd = fs.openSync(file, "w");
  for (let done = 0; done < bytes; done += block.length)
    fs.writeSync(fd, block, 0, Math.min(block.length, bytes - done));
  fs.closeSync(fd);
}

async function upload(ready: Ready, sandbox: string, sandboxPath: string, file: string): Promise<void> {
  const res = await fetch(`${ready.url}/v1/${sandbox}/filesystem:upload?path=${encodeURIComponent(sandboxPath)}`, {
    method: "PUT",
    headers: {
      authorization: `Bearer ${ready.token}`,
      "content-type": "application/octet-stream",
      "content-length": String(fs.statSync(file).size),
    },
    body: Readable.toWeb(fs.createReadStream(file, { highWaterMark: 1 << 20 })) as ReadableStream,
    duplex: "half",
  } as RequestInit);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`upload: ${res.status} ${text.slice(0, 300)}`);
}

async function download(ready: Ready, sandbox: string, sandboxPath: string, file: string | undefined): Promise<number> {
  const res = await fetch(`${ready.url}/v1/${sandbox}/filesystem:download?path=${encodeURIComponent(sandboxPath)}`, {
    headers: { authorization: `Bearer ${ready.token}` },
  });
  if (res.status !== 200) throw new Error(`download: ${res.status} ${(await res.text()).slice(0, 300)}`);
  let bytes = 0;
  const counted = async function* (source: AsyncIterable<Uint8Array>) {
    for await (const chunk of source) {
      bytes += chunk.length;
      yield chunk;
    }
  };
  if (file) await pipeline(res.body as unknown as AsyncIterable<Uint8Array>, counted, fs.createWriteStream(file));
  else for await (const _ of counted(res.body as unknown as AsyncIterable<Uint8Array>));
  return bytes;
}

// ---- the rows -----------------------------------------------------------------------------------

/** CPU milliseconds from /proc/<pid>/stat: the process's own and its waited-for children's. */
function cpuOf(pid: number | "self"): { own: number; children: number } {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number);
    // Fields 14-17 (utime, stime, cutime, cstime), counted from "state" as field 3.
    const tick = 1000 / CLOCK_TICKS;
    return { own: (f[11]! + f[12]!) * tick, children: (f[13]! + f[14]!) * tick };
  } catch {
    return { own: 0, children: 0 };
  }
}

const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

/**
 * CPU a loop of `runs` calls costs, in ms per call: the server's own, its descendants' (the
 * spawner and the sandboxes' agents, with the programs they reaped), and this process's (with
 * the programs it reaped). Read from /proc before and after, so the machine's other load does
 * not count, unlike a wall-clock time.
 */
async function cpuPerCall(server: number, runs: number, fn: () => Promise<unknown>) {
  const below = () => {
    let own = 0;
    let children = 0;
    for (const pid of descendants(server)) {
      const c = cpuOf(pid);
      own += c.own;
      children += c.children;
    }
    return { own, children };
  };
  const [s0, d0, c0] = [cpuOf(server), below(), cpuOf("self")];
  for (let i = 0; i < runs; i++) await fn();
  const [s1, d1, c1] = [cpuOf(server), below(), cpuOf("self")];
  const per = (a: number, b: number) => (b - a) / runs;
  return {
    server: per(s0.own, s1.own),
    agents: per(d0.own, d1.own),
    programs: per(d0.children, d1.children),
    client: per(c0.own, c1.own),
    clientChildren: per(c0.children, c1.children),
  };
}

async function processRow(ready: Ready, sandbox: string, serverPid: number): Promise<void> {
  const call = api(ready);
  const { processes } = connectClients(ready);
  const viaRest = async () => {
    const p = (await call("POST", `/v1/${sandbox}/processes?autoRun=true`, { command: "/bin/true" })).process.name;
    await call("POST", `/v1/${p}:wait`, {});
  };
  const viaConnect = async () => {
    const p = (await processes.createProcess({ parent: sandbox, process: { command: "/bin/true" }, autoRun: true }))
      .process!.name;
    await processes.waitProcess({ name: p });
  };
  const measure = async (runs: number) => {
    const rest: number[] = [];
    const connect: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < runs; i++) {
      rest.push(await timed(viaRest));
      connect.push(await timed(viaConnect));
      direct.push(await timed(() => run("/bin/true", [])));
    }
    return { rest, connect, direct };
  };
  const fresh = await measure(Math.min(RUNS, 40));
  for (let i = 0; i < WARMUP; i++) await (i % 2 === 0 ? viaRest() : viaConnect());
  const { rest, connect, direct } = await measure(RUNS);
  const ratio = median(rest) / median(direct);
  console.log(
    `process create(autoRun)+wait of /bin/true, REST:    ${stats(rest)}  ratio ${ratio.toFixed(1)}x the baseline`,
  );
  console.log(
    `process create(autoRun)+wait of /bin/true, Connect: ${stats(connect)}  ratio ${(median(connect) / median(direct)).toFixed(1)}x`,
  );
  console.log(`  baseline child_process.spawn of /bin/true:         ${stats(direct)}`);
  console.log(
    `  (the first ${fresh.rest.length} of a fresh server, before ${WARMUP} more: REST ${median(fresh.rest).toFixed(1)} ms = ${(median(fresh.rest) / median(fresh.direct)).toFixed(1)}x, Connect ${median(fresh.connect).toFixed(1)} ms)`,
  );
  console.log(`  goal REST <= 4 ms and <= 3x: ${verdict(median(rest) <= 4 && ratio <= 3)}  (${load()})`);
  const cpuRuns = Math.max(RUNS, 100);
  const restCpu = await cpuPerCall(serverPid, cpuRuns, viaRest);
  const spawnCpu = await cpuPerCall(serverPid, cpuRuns, () => run("/bin/true", []));
  console.log(
    `  CPU per REST pair (${cpuRuns} pairs, from /proc): server ${restCpu.server.toFixed(2)} ms, agent ${restCpu.agents.toFixed(2)} ms, /bin/true ${restCpu.programs.toFixed(2)} ms, client ${restCpu.client.toFixed(2)} ms`,
  );
  console.log(
    `  CPU per spawn of /bin/true: the spawning process ${spawnCpu.client.toFixed(2)} ms, /bin/true ${spawnCpu.clientChildren.toFixed(2)} ms  (${load()})`,
  );
}

/** The processes below `root`, by parent pid, from /proc. */
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

function kibField(file: string, field: string): number {
  try {
    return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync(file, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** PSS and RSS, in KiB, and the number of the processes `pids` and every one below them. */
function memoryOf(pids: number[]): { pss: number; rss: number; processes: number } {
  let pss = 0;
  let rss = 0;
  let processes = 0;
  for (const pid of pids) {
    for (const p of [pid, ...descendants(pid)]) {
      pss += kibField(`/proc/${p}/smaps_rollup`, "Pss");
      rss += kibField(`/proc/${p}/smaps_rollup`, "Rss");
      processes++;
    }
  }
  return { pss, rss, processes };
}

/**
 * Idle sandboxes: PSS and RSS of every process of each (bubblewrap and everything below it).
 * The baseline: as many bare bubblewrap sandboxes idling in `sleep`, each with its own PID
 * namespace (bubblewrap, its reaper, sleep).
 */
async function idleRow(): Promise<void> {
  const count = Number(process.env.BENCH_IDLE_SANDBOXES ?? 10);
  const server = await startSandboxServer({ warmPool: 0 });
  const bare = Array.from({ length: count }, () =>
    spawn("bwrap", ["--ro-bind", "/", "/", "--unshare-pid", "--die-with-parent", "sleep", "infinity"], {
      stdio: "ignore",
    }),
  );
  try {
    const call = api(server.ready);
    const names: string[] = [];
    for (let i = 0; i < count; i++) names.push(await createSandbox(server.ready, `idle-${i}`));
    await sleep(2000);
    const sandboxPids = descendants(server.pid).filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "bwrap";
      } catch {
        return false;
      }
    });
    // only the outer bubblewrap of each sandbox counts (the agent is the namespace's init).
    const inner = new Set(sandboxPids.flatMap((pid) => descendants(pid)));
    const outer = sandboxPids.filter((pid) => !inner.has(pid));
    const { pss, rss, processes } = memoryOf(outer);
    const base = memoryOf(bare.map((child) => child.pid!));
    const perSandbox = pss / 1024 / outer.length;
    const perBare = base.pss / 1024 / bare.length;
    console.log(
      `idle sandbox (${outer.length} sandboxes): PSS ${perSandbox.toFixed(2)} MiB, RSS ${(rss / 1024 / outer.length).toFixed(2)} MiB per sandbox, ${(processes / outer.length).toFixed(1)} processes each  ratio ${(perSandbox / perBare).toFixed(1)}x the baseline`,
    );
    console.log(
      `  baseline bare bwrap --unshare-pid sleep infinity: PSS ${perBare.toFixed(2)} MiB, RSS ${(base.rss / 1024 / bare.length).toFixed(2)} MiB each, ${(base.processes / bare.length).toFixed(1)} processes each`,
    );
    console.log(`  goal PSS <= 4 MiB: ${verdict(perSandbox <= 4)}  (${load()})`);
    for (const name of names) await call("DELETE", `/v1/${name}`);
  } finally {
    for (const child of bare) child.kill("SIGKILL");
    await server.stop();
  }
}

async function coldRow(): Promise<void> {
  const server = await startSandboxServer({ warmPool: 0 });
  try {
    const call = api(server.ready);
    await call("DELETE", `/v1/${await createSandbox(server.ready, "first")}`);
    const samples: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < CREATES; i++) {
      await sleep(200);
      let name = "";
      samples.push(await timed(async () => (name = await createSandbox(server.ready, `cold-${i}`))));
      await call("DELETE", `/v1/${name}`);
      bare.push(await timed(() => run("bwrap", ["--ro-bind", "/", "/", "true"])));
    }
    const ratio = median(samples) / median(bare);
    console.log(
      `sandbox create -> RUNNING, no warm sandbox: ${stats(samples)}  ratio ${ratio.toFixed(1)}x the baseline`,
    );
    console.log(`  baseline bare bwrap --ro-bind / / true:       ${stats(bare)}`);
    console.log(`  goal median <= 40 ms and <= 12x: ${verdict(median(samples) <= 40 && ratio <= 12)}  (${load()})`);
  } finally {
    await server.stop();
  }
}

async function warmRow(ready: Ready): Promise<void> {
  const call = api(ready);
  const samples: number[] = [];
  for (let i = 0; i < CREATES; i++) {
    // Time for the pool to start its next sandbox (a cold start takes ~1 s on a busy machine).
    await sleep(2_000);
    let name = "";
    samples.push(await timed(async () => (name = await createSandbox(ready, `warm-${i}`))));
    await call("DELETE", `/v1/${name}`);
  }
  console.log(`sandbox create -> RUNNING, warm pool: ${stats(samples)}`);
  console.log(`  goal median <= 20 ms: ${verdict(median(samples) <= 20)}`);
}

async function fileRow(server: SandboxServer, sandbox: string): Promise<void> {
  const { ready, pid } = server;
  const call = api(ready);
  const { files } = connectClients(ready);
  const hostFile = path.join(scratch, "file-64m");
  makeHostFile(hostFile, FILE_BYTES);
  const content = fs.readFileSync(hostFile);
  const target = "/workspace/file-64m";
  const figures: { label: string; first: number[]; ms: number[]; peak: number; server: number[]; sandbox: number[] }[] =
    [];
  const measure = async (label: string, fn: () => Promise<void>) => {
    const first: number[] = [];
    const ms: number[] = [];
    const server: number[] = [];
    const sandbox: number[] = [];
    let peak = 0;
    for (let i = 0; i < FILE_WARMUP + FILE_RUNS; i++) {
      // The writeback of the run before (an upload's 64 MiB) is not this run's to compete with.
      await run("sync", []);
      const before = resetPeak(pid);
      const cpu = cpuSeconds(pid);
      const took = await timed(fn);
      const after = cpuSeconds(pid);
      // The memory peak counts the first calls too.
      peak = Math.max(peak, peakRss(pid) - before);
      if (i < FILE_WARMUP) {
        first.push(took);
        continue;
      }
      ms.push(took);
      server.push(after.own - cpu.own);
      sandbox.push(after.below - cpu.below);
    }
    figures.push({ label, first, ms, peak, server, sandbox });
  };
  const cat: number[] = [];
  for (let i = 0; i < FILE_RUNS; i++) cat.push(await timed(() => run("sh", ["-c", `cat '${hostFile}' > /dev/null`])));

  await measure("REST write (PUT :upload, raw body)", () => upload(ready, sandbox, target, hostFile));
  await measure("REST read (GET :download, raw body)", async () => {
    if ((await download(ready, sandbox, target, undefined)) !== FILE_BYTES) throw new Error("short download");
  });
  // The client's own share (JSON.parse of ~90 MB, then base64) is timed apart: it is the
  // caller's CPU, not the service's, and on 2 cores it competes with the server for them.
  const decode: number[] = [];
  await measure("REST read (GET :readFile, base64 JSON)", async () => {
    const res = await fetch(`${ready.url}/v1/${sandbox}/filesystem:readFile?path=${target}`, {
      headers: { authorization: `Bearer ${ready.token}` },
    });
    const text = Buffer.from(await res.arrayBuffer());
    const t = performance.now();
    const body = JSON.parse(text.toString()) as { content: string };
    if (Buffer.from(body.content, "base64").length !== FILE_BYTES) throw new Error("short read");
    decode.push(performance.now() - t);
  });
  let connectWrite = "";
  try {
    await files.writeFile({ name: sandbox, path: "/workspace/connect-64m", content, overwrite: true });
  } catch (e) {
    connectWrite = (e as Error).message;
  }
  if (connectWrite === "")
    await measure("Connect write (WriteFile)", () =>
      files
        .writeFile({ name: sandbox, path: "/workspace/connect-64m", content, overwrite: true })
        .then(() => undefined),
    );
  await measure("Connect read (ReadFile)", async () => {
    if ((await files.readFile({ name: sandbox, path: target })).content.length !== FILE_BYTES)
      throw new Error("short read");
  });
  // The streams of messages, as a Connect or gRPC client moves a file over the request limit.
  const streams = connectClients(ready, "2").files;
  await measure("Connect write (WriteFileStream, HTTP/2, 1 MiB messages)", async () => {
    async function* messages() {
      yield { header: { name: sandbox, path: "/workspace/connect-64m" } };
      for (let at = 0; at < content.length; at += STREAM_MESSAGE_BYTES)
        yield { data: content.subarray(at, at + STREAM_MESSAGE_BYTES) };
      yield { last: true };
    }
    if ((await streams.writeFileStream(messages())).fileInfo?.size !== BigInt(FILE_BYTES))
      throw new Error("short write");
  });
  await measure("Connect read (ReadFileStream, HTTP/2)", async () => {
    let bytes = 0;
    for await (const m of streams.readFileStream({ name: sandbox, path: target })) bytes += m.data.length;
    if (bytes !== FILE_BYTES) throw new Error("short read");
  });
  void call;

  const base = mbps(FILE_BYTES, median(cat));
  console.log(`64 MiB file; baseline cat file > /dev/null on the host: ${stats(cat)} = ${base.toFixed(0)} MB/s`);
  // :download as a second reference: the same agent route and bytes, piped with no message framing.
  const reference = mbps(FILE_BYTES, median(figures.find((f) => f.label.includes(":download"))!.ms));
  for (const f of figures) {
    const rate = mbps(FILE_BYTES, median(f.ms));
    console.log(
      `  ${f.label}: ${stats(f.ms)} = ${rate.toFixed(0)} MB/s, ratio ${(rate / base).toFixed(2)}x the baseline, ${(rate / reference).toFixed(2)}x :download; memory peak +${mib(f.peak)} (${(f.peak / FILE_BYTES).toFixed(2)}x the file); CPU a call: server ${median(f.server).toFixed(2)} s, sandbox ${median(f.sandbox).toFixed(2)} s  goal >= 200 MB/s: ${verdict(rate >= 200)}; memory <= 3x: ${verdict(f.peak <= 3 * FILE_BYTES)}` +
        (f.first.length > 0
          ? `\n    (the first ${f.first.length} calls, before these: ${f.first.map((t) => t.toFixed(0)).join(", ")} ms)`
          : ""),
    );
  }
  console.log(`  of the REST base64 JSON read, the client's JSON.parse and base64 decode: ${stats(decode)}`);
  if (connectWrite !== "")
    console.log(
      `  Connect write (WriteFile) of 64 MiB: refused, as every request over the edge's body limit: ${connectWrite.slice(0, 120)}`,
    );
  fs.rmSync(hostFile);
}

/** curl, as a user moves a large file (and as the API reference shows); fails unless it answered 200. `args` must name an output (-o). */
function curl(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("curl", ["-sS", "-w", "%{http_code}", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.resume();
    child.once("error", reject);
    child.once("close", (code) =>
      code === 0 && out === "200"
        ? resolve()
        : reject(new Error(`curl ${args.join(" ")}: exit ${code}, status ${out}`)),
    );
  });
}

// What Node's HTTP server alone can take in: a bare server (its own process, as the product's)
// that writes a PUT's body to a host file, as the upload route does to the sandbox's.
const BARE_SERVER = `
const http = require("node:http"), fs = require("node:fs");
const server = http.createServer((req, res) => {
  const out = fs.createWriteStream(process.argv[1], { highWaterMark: 1 << 20 });
  req.pipe(out);
  out.on("finish", () => res.end());
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));`;

/** curl -T of `file` to a bare Node HTTP server writing it to `target`; its time in ms. */
async function bareUpload(file: string, target: string): Promise<number> {
  const child = spawn(process.execPath, ["-e", BARE_SERVER, target], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const port = await new Promise<string>((resolve) =>
      child.stdout.once("data", (d: Buffer) => resolve(d.toString().trim())),
    );
    await run("sync", []);
    return await timed(() => curl(["-T", file, `http://127.0.0.1:${port}/`, "-o", "/dev/null"]));
  } finally {
    child.kill();
    fs.rmSync(target, { force: true });
  }
}

/**
 * `cp` of `file` into an ext4 image made and attached as a sandbox's is (mkfs's options, a loop
 * device with direct I/O), each copy replacing the last as an upload does; the times in ms, or why not.
 */
async function copiesIntoImage(file: string, copies: number): Promise<number[] | string> {
  if (process.getuid?.() !== 0) return "needs root (a loop mount)";
  const image = path.join(scratch, "storage.img");
  const mountPoint = path.join(scratch, "storage");
  fs.mkdirSync(mountPoint, { recursive: true });
  let device: string | undefined;
  try {
    // Room for two copies: a replace writes the new one before the old one goes.
    fs.writeFileSync(image, "");
    fs.truncateSync(image, 3 * fs.statSync(file).size);
    await run("mkfs.ext4", [...MKFS_OPTIONS, image]);
    device = execFileSync("losetup", ["--find", "--show", "--direct-io=on", image], { encoding: "utf8" }).trim();
    await run("mount", ["-o", "nosuid,nodev", device, mountPoint]);
  } catch (error) {
    if (device) execFileSync("losetup", ["--detach", device]);
    fs.rmSync(image, { force: true });
    return `no loop-mounted image here (${(error as Error).message})`;
  }
  try {
    const times: number[] = [];
    for (let i = 0; i < copies; i++) {
      await run("sync", []);
      times.push(await timed(() => run("cp", [file, path.join(mountPoint, "next")])));
      fs.renameSync(path.join(mountPoint, "next"), path.join(mountPoint, "file"));
    }
    return times;
  } finally {
    await run("umount", [mountPoint]);
    execFileSync("losetup", ["--detach", device]);
    fs.rmSync(image, { force: true });
  }
}

async function largeRow(server: SandboxServer, sandbox: string): Promise<void> {
  const { ready, pid } = server;
  const hostFile = path.join(scratch, "file-1g");
  const back = path.join(scratch, "file-1g-back");
  makeHostFile(hostFile, LARGE_BYTES);
  // Writing a GiB is bound by the kernel's writeback once dirty pages pile up, so the copy and
  // every transfer start from a `sync`: none pays for the one before, and the baseline is not a
  // lucky run into an idle page cache.
  const copies: number[] = [];
  for (let i = 0; i < 3; i++) {
    await run("sync", []);
    copies.push(await timed(() => run("cp", [hostFile, path.join(scratch, "file-1g-copy")])));
    fs.rmSync(path.join(scratch, "file-1g-copy"));
  }
  const copy = median(copies);
  const base = mbps(LARGE_BYTES, copy);
  console.log(`1 GiB file; baseline cp on the host, after a sync: ${stats(copies)} = ${base.toFixed(0)} MB/s`);
  // A sandbox's files live in an ext4 image on a loop device, which is not the host's file
  // system: what an upload can reach is bounded by what a copy into such an image takes.
  const intoImage = await copiesIntoImage(hostFile, 3);
  console.log(
    typeof intoImage === "string"
      ? `  (cp into a sandbox's kind of storage: ${intoImage})`
      : `  (the storage a sandbox writes to: cp into an ext4 image on a loop device, each copy replacing the last, after a sync: ${intoImage.map((ms) => ms.toFixed(0)).join(", ")} ms = ${intoImage.map((ms) => (copy / ms).toFixed(2)).join(", ")}x cp)`,
  );
  const bare = await bareUpload(hostFile, path.join(scratch, "file-1g-bare"));
  console.log(
    `  (the ceiling of an upload through Node's HTTP: curl -T to a bare Node server writing a host file: ${bare.toFixed(0)} ms = ${mbps(LARGE_BYTES, bare).toFixed(0)} MB/s, ${(copy / bare).toFixed(2)}x cp)`,
  );
  const auth = ["-H", `authorization: Bearer ${ready.token}`];
  const url = (verb: string) => `${ready.url}/v1/${sandbox}/filesystem:${verb}?path=/workspace/file-1g`;
  // Where the CPU goes: the client, the server, and the sandbox (the agent).
  // The client's CPU is this process's and its ended children's (curl), from /proc/self/stat.
  const clientCpu = () => {
    const stat = fs.readFileSync("/proc/self/stat", "utf8");
    const f = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number);
    return (f[11]! + f[12]! + f[13]! + f[14]!) / 100;
  };
  const cpu = () => ({ client: clientCpu(), ...cpuSeconds(pid) });
  const transfers: [string, () => Promise<unknown>, boolean][] = [
    // The client is curl, as the baseline is cp: a native program, whose CPU shows in neither figure.
    ["upload (PUT :upload, curl -T)", () => curl([...auth, "-T", hostFile, url("upload"), "-o", "/dev/null"]), true],
    // Into /dev/null: what the service delivers. Where the client puts the bytes is its own cost
    // (curl writes a file 16 KiB at a time, which takes this machine ~3 s a GiB); the Node row
    // below writes them to a file and is compared with the original.
    ["download (GET :download, curl -o /dev/null)", () => curl([...auth, url("download"), "-o", "/dev/null"]), true],
    // The same through Node's fetch and web streams, whose own CPU (in "client") bounds the rate.
    ["upload (PUT :upload, Node fetch)", () => upload(ready, sandbox, "/workspace/file-1g", hostFile), false],
    ["download (GET :download, Node fetch)", () => download(ready, sandbox, "/workspace/file-1g", back), false],
  ];
  for (const [label, fn, goal] of transfers) {
    fs.rmSync(back, { force: true });
    await run("sync", []);
    const before = resetPeak(pid);
    const c0 = cpu();
    const ms = await timed(fn);
    const c1 = cpu();
    const peak = peakRss(pid) - before;
    // Checked outside the timing: the comparison reads both files again.
    if (fs.existsSync(back) && !sameFile(hostFile, back))
      throw new Error("the downloaded file differs from the uploaded one");
    const rate = mbps(LARGE_BYTES, ms);
    const verdicts = goal
      ? `  goal >= 0.5x: ${verdict(rate / base >= 0.5)}; memory bounded (< 1/4 of the file): ${verdict(peak < LARGE_BYTES / 4)}`
      : "";
    console.log(
      `  ${label}: ${ms.toFixed(0)} ms = ${rate.toFixed(0)} MB/s, ratio ${(rate / base).toFixed(2)}x the baseline; memory peak +${mib(peak)}${verdicts}`,
    );
    console.log(
      `    CPU: client ${(c1.client - c0.client).toFixed(1)} s, server ${(c1.own - c0.own).toFixed(1)} s, sandbox ${(c1.below - c0.below).toFixed(1)} s`,
    );
  }
  fs.rmSync(hostFile);
  fs.rmSync(back, { force: true });
  await api(ready)("POST", `/v1/${sandbox}/filesystem:remove`, { path: "/workspace/file-1g" });
}

function sameFile(a: string, b: string): boolean {
  const fa = fs.openSync(a, "r");
  const fb = fs.openSync(b, "r");
  const ba = Buffer.alloc(1 << 20);
  const bb = Buffer.alloc(1 << 20);
  try {
    for (;;) {
      const na = fs.readSync(fa, ba);
      const nb = fs.readSync(fb, bb);
      if (na !== nb || !ba.subarray(0, na).equals(bb.subarray(0, nb))) return false;
      if (na === 0) return true;
    }
  } finally {
    fs.closeSync(fa);
    fs.closeSync(fb);
  }
}

async function streamRow(ready: Ready, sandbox: string): Promise<void> {
  const call = api(ready);
  const { processes } = connectClients(ready);
  const rest: number[] = [];
  const connect: number[] = [];
  const start = async () =>
    (
      await call("POST", `/v1/${sandbox}/processes?autoRun=true`, {
        command: "head",
        args: ["-c", String(STREAM_BYTES), "/dev/zero"],
      })
    ).process.name as string;
  for (let i = 0; i < STREAM_RUNS; i++) {
    rest.push(
      await timed(async () => {
        const p = await start();
        const res = await fetch(`${ready.url}/v1/${p}:streamOutput`, {
          headers: { authorization: `Bearer ${ready.token}` },
        });
        let bytes = 0;
        // Newlines are looked for in each new chunk only; a line is joined once it is complete.
        let parts: Buffer[] = [];
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
          for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
            const line = Buffer.concat([...parts, buf.subarray(0, nl)]).toString();
            parts = [];
            buf = buf.subarray(nl + 1);
            const data = (JSON.parse(line) as { result?: { data?: string } }).result?.data;
            if (data) bytes += Buffer.byteLength(data, "base64");
          }
          if (buf.length > 0) parts.push(buf);
        }
        if (bytes !== STREAM_BYTES) throw new Error(`REST stream delivered ${bytes} bytes`);
      }),
    );
    connect.push(
      await timed(async () => {
        const p = await start();
        let bytes = 0;
        for await (const m of processes.streamProcessOutput({ name: p })) bytes += m.data.length;
        if (bytes !== STREAM_BYTES) throw new Error(`Connect stream delivered ${bytes} bytes`);
      }),
    );
  }
  const ratio = median(connect) / median(rest);
  console.log(
    `100 MB of output over REST NDJSON: ${stats(rest)} = ${mbps(STREAM_BYTES, median(rest)).toFixed(0)} MB/s, ratio ${ratio.toFixed(2)}x Connect`,
  );
  console.log(
    `  baseline the same over Connect:   ${stats(connect)} = ${mbps(STREAM_BYTES, median(connect)).toFixed(0)} MB/s`,
  );
  console.log(`  goal >= 0.5x Connect: ${verdict(ratio >= 0.5)}`);
}

async function burstRow(ready: Ready, sandbox: string): Promise<void> {
  const call = api(ready);
  const t0 = performance.now();
  const started = await Promise.all(
    Array.from({ length: BURST }, async () => {
      const t = performance.now();
      const name = (await call("POST", `/v1/${sandbox}/processes?autoRun=true`, { command: "/bin/true" })).process
        .name as string;
      return { name, ms: performance.now() - t };
    }),
  );
  const ended = await Promise.all(
    started.map(async (p) => (await call("POST", `/v1/${p.name}:wait`, {})).process.state as string),
  );
  const total = performance.now() - t0;
  const finished = ended.filter((s) => s === "STATE_SUCCEEDED").length;
  const latency = started.map((p) => p.ms);
  console.log(
    `${BURST} processes started at once in one sandbox: ${finished}/${BURST} finished in ${total.toFixed(0)} ms; start latency median ${median(latency).toFixed(1)} ms, p99 ${quantile(latency, 0.99).toFixed(1)} ms, max ${Math.max(...latency).toFixed(1)} ms`,
  );
  console.log(`  goal all finish, p99 reported: ${verdict(finished === BURST)}`);
}

// ---- main ---------------------------------------------------------------------------------------

console.log(
  `machine: ${os.cpus().length} cores, node ${process.version}, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")}`,
);
try {
  if (want("idle")) await idleRow();
  if (want("cold")) await coldRow();
  const server = await startSandboxServer({ warmPool: 1 });
  try {
    if (want("warm")) await warmRow(server.ready);
    const sandbox = await createSandbox(server.ready, "work");
    if (want("process")) await processRow(server.ready, sandbox, server.pid);
    if (want("stream")) await streamRow(server.ready, sandbox);
    if (want("file")) await fileRow(server, sandbox);
    if (want("large")) await largeRow(server, sandbox);
    if (want("burst")) await burstRow(server.ready, sandbox);
  } finally {
    await server.stop();
  }
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
