// Local sandbox runtime benchmark (issue 7).
//   npx tsx bench/sandbox-runtime.bench.ts
// Real sandboxes (bubblewrap, the agent, cgroups and storage images as the machine
// allows) in a temporary data directory that is removed at the end. Prints:
//   - sandbox start-to-ready (start call until the agent answered Health), median of 20 fresh
//     sandboxes, with the template limits applied and without any;
//   - running `true` through the agent (StartProcess, WaitProcess, ReadOutput) against spawning
//     `true` with child_process in the same run;
//   - streaming 100 MB of a process's output to the host against `head | cat > /dev/null`;
//   - writing and reading a 10 MB file through the agent against the host's own fs calls.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { OutputStream } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { createLocalSandboxRuntime } from "../services/sandbox/src/runtime/local-runtime.js";

const STARTS = 20;
const RUNS = 50;
const STREAM_BYTES = 100 * 1024 * 1024;
const FILE_BYTES = 10 * 1024 * 1024;
const FILE_RUNS = 10;

function stats(samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(s.length * q))]!;
  return `median ${at(0.5).toFixed(1)} ms  (min ${s[0]!.toFixed(1)}, p90 ${at(0.9).toFixed(1)}, n=${s.length})`;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

function spawnAndWait(command: string, args: string[], shell = false): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], shell });
    child.stdout.resume();
    child.stderr.resume();
    child.once("error", reject);
    child.once("close", () => resolve());
  });
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-bench-sandbox-"));
const runtime = createLocalSandboxRuntime({ dataDir, outputLimitBytes: 128 << 20 });

try {
  const caps = runtime.capabilities;
  if (caps.isolation !== "bwrap") throw new Error(`needs bubblewrap: ${caps.isolationUnavailableReason}`);
  await runtime.prepare();
  console.log(`machine: ${os.cpus().length} cores, node ${process.version}`);
  console.log(
    `limits: memory=${caps.memory.mechanism} cpu=${caps.cpu.mechanism} processes=${caps.processes.mechanism} storage=${caps.storage.mechanism}, exact signals: ${runtime.capabilities.exactSignals}`,
  );

  // Warm the host's client code and the disk cache once.
  await runtime.start("warm");
  await runtime.destroy("warm");

  for (const [label, limits] of [
    ["no limits", undefined],
    ["memory 512 MiB + 1 CPU (cgroups)", { memoryBytes: 512 << 20, milliCpuLimit: 1000 }],
  ] as const) {
    const samples: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      const id = `start-${i}`;
      const handle = await runtime.start(id, { limits });
      samples.push(handle.startMs);
      await runtime.destroy(id);
    }
    console.log(`start-to-ready, ${label}: ${stats(samples)}`);
  }

  // What the isolation layers of issue 14 cost a start: the same runtime with them switched off
  // (user namespace, bounding set, seccomp, private /etc, argument file) as the baseline.
  const bare = createLocalSandboxRuntime({
    dataDir: path.join(dataDir, "bare"),
    cacheDir: path.join(dataDir, "agent-cache"),
    uidRangeRegistry: path.join(dataDir, "uid-ranges"),
    isolationLayers: {
      userNamespace: false,
      emptyBoundingSet: false,
      seccomp: false,
      privateEtc: false,
      hideHostPaths: false,
    },
  });
  const layered = createLocalSandboxRuntime({
    dataDir: path.join(dataDir, "layered"),
    cacheDir: path.join(dataDir, "agent-cache"),
    uidRangeRegistry: path.join(dataDir, "uid-ranges"),
  });
  const medians: Record<string, number> = {};
  for (const [label, rt] of [
    ["layers off", bare],
    ["every layer", layered],
  ] as const) {
    const samples: number[] = [];
    await rt.destroy("warm").catch(() => undefined);
    await rt.start("warm");
    await rt.destroy("warm");
    for (let i = 0; i < STARTS; i++) {
      const handle = await rt.start(`start-${i}`);
      samples.push(handle.startMs);
      await rt.destroy(`start-${i}`);
    }
    medians[label] = [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
    console.log(`start-to-ready, ${label}: ${stats(samples)}`);
    await rt.close();
  }
  console.log(
    `isolation layers cost a start ${(medians["every layer"]! / medians["layers off"]!).toFixed(2)}x the bare start`,
  );

  const sandbox = await runtime.start("bench", { limits: { memoryBytes: 1 << 30 } });
  const { client } = sandbox;

  let n = 0;
  const viaAgent: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < 5; i++) {
    await client.startProcess({ processId: `warm-${i}`, command: "true" });
    await client.waitProcess({ processId: `warm-${i}` });
  }
  for (let i = 0; i < RUNS; i++) {
    viaAgent.push(
      await time(async () => {
        const processId = `true-${++n}`;
        await client.startProcess({ processId, command: "true" });
        await client.waitProcess({ processId });
        await client.readOutput({ processId, stream: OutputStream.COMBINED });
      }),
    );
    direct.push(await time(() => spawnAndWait("true", [])));
  }
  console.log(`run \`true\` via the agent (start, wait, read output): ${stats(viaAgent)}`);
  console.log(`spawn \`true\` with child_process on the host:         ${stats(direct)}`);

  const streamed: number[] = [];
  const catted: number[] = [];
  for (let i = 0; i < 3; i++) {
    streamed.push(
      await time(async () => {
        const processId = `stream-${i}`;
        await client.startProcess({ processId, command: "head", args: ["-c", String(STREAM_BYTES), "/dev/zero"] });
        let bytes = 0;
        for await (const m of client.streamOutput({ processId })) bytes += m.chunk?.data.length ?? 0;
        if (bytes !== STREAM_BYTES) throw new Error(`streamed ${bytes} bytes`);
      }),
    );
    catted.push(await time(() => spawnAndWait(`head -c ${STREAM_BYTES} /dev/zero | cat > /dev/null`, [], true)));
  }
  const mbps = (ms: number) => (STREAM_BYTES / 1048576 / (ms / 1000)).toFixed(0);
  const sMed = [...streamed].sort((a, b) => a - b)[1]!;
  const cMed = [...catted].sort((a, b) => a - b)[1]!;
  console.log(`stream 100 MB of output to the host: ${stats(streamed)}  = ${mbps(sMed)} MB/s`);
  console.log(`head | cat > /dev/null, same bytes:  ${stats(catted)}  = ${mbps(cMed)} MB/s`);

  const content = Buffer.alloc(FILE_BYTES, 0x61);
  const writes: number[] = [];
  const reads: number[] = [];
  const hostWrites: number[] = [];
  const hostReads: number[] = [];
  const hostFile = path.join(dataDir, "host-file");
  for (let i = 0; i < FILE_RUNS; i++) {
    writes.push(await time(() => client.writeFile({ path: "/workspace/ten-mb", content, overwrite: true })));
    reads.push(
      await time(async () => {
        let offset = 0n;
        let total = 0;
        for (;;) {
          const r = await client.readFile({ path: "/workspace/ten-mb", offset });
          total += r.content.length;
          offset += BigInt(r.content.length);
          if (r.eof) break;
        }
        if (total !== FILE_BYTES) throw new Error(`read ${total} bytes`);
      }),
    );
    hostWrites.push(await time(() => fs.promises.writeFile(hostFile, content)));
    hostReads.push(await time(() => fs.promises.readFile(hostFile)));
  }
  console.log(`write 10 MB via the agent: ${stats(writes)}`);
  console.log(`read 10 MB via the agent:  ${stats(reads)}`);
  console.log(`write 10 MB on the host:   ${stats(hostWrites)}`);
  console.log(`read 10 MB on the host:    ${stats(hostReads)}`);
} finally {
  await runtime.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
