// Sandbox service benchmark through the public API (issue 7).
//   npx tsx bench/sandbox-service.bench.ts
// The server is bench/sandbox-server.ts, in a child process. Prints:
//   - create to STATE_RUNNING (POST, then GET until RUNNING), median of 20, from cold and with a
//     warm sandbox ready (AIEM_SANDBOX_WARM_POOL=1, the default);
//   - running `true` as a process (create with autoRun, :wait, :readOutput) against spawning
//     `true` with child_process in the same run;
//   - streaming 100 MB of a process's output (REST NDJSON, and Connect binary through the edge)
//     against `head -c 100M /dev/zero | cat > /dev/null`;
//   - writing and reading a 10 MB file (REST, base64 JSON) against the host's own fs calls.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ProcessService } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { type Ready, startSandboxServer } from "./sandbox-server.js";

const CREATES = 20;
const RUNS = 50;
const STREAM_BYTES = 100 * 1024 * 1024;
const STREAM_RUNS = 3;
const FILE_BYTES = 10 * 1024 * 1024;
const FILE_RUNS = 10;
const WS = "workspaces/bench";

// ---- the client ---------------------------------------------------------------------------------

function stats(samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(s.length * q))]!;
  return `median ${at(0.5).toFixed(1)} ms  (min ${s[0]!.toFixed(1)}, p90 ${at(0.9).toFixed(1)}, n=${s.length})`;
}
const median = (samples: number[]) => [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function spawnAndWait(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.resume();
    child.stderr.resume();
    child.once("error", reject);
    child.once("close", () => resolve());
  });
}

async function startServer(warmPool: number) {
  // This bench predates the edge's streaming file routes: it writes its 10 MB file as JSON.
  return startSandboxServer({ warmPool, bodyLimitBytes: 64 << 20 });
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
    if (res.status !== 200) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
}

async function createToRunning(ready: Ready, label: string, pause: number): Promise<void> {
  const call = api(ready);
  const body = {
    sandboxEngineImage: "workspaces/global/sandboxEngineImages/default",
    sandboxEngineTemplate: "workspaces/global/sandboxEngineTemplates/default",
  };
  // One to warm the code paths (and, with a pool, to start filling it).
  const first = (await call("POST", `/v1/${WS}/sandboxEngines?sandboxEngineId=first`, body)).sandboxEngine.name;
  while ((await call("GET", `/v1/${first}`)).sandboxEngine.state !== "STATE_RUNNING") await sleep(5);
  await call("DELETE", `/v1/${first}`);
  const samples: number[] = [];
  for (let i = 0; i < CREATES; i++) {
    await sleep(pause);
    const t = performance.now();
    const name = (await call("POST", `/v1/${WS}/sandboxEngines?sandboxEngineId=s${i}`, body)).sandboxEngine.name;
    // Polls every 2 ms: faster polling only takes CPU from the start on a small machine.
    while ((await call("GET", `/v1/${name}`)).sandboxEngine.state !== "STATE_RUNNING") await sleep(2);
    samples.push(performance.now() - t);
    await call("DELETE", `/v1/${name}`);
  }
  console.log(`create to RUNNING, ${label}: ${stats(samples)}`);
}

async function main(): Promise<void> {
  console.log(
    `machine: ${os.cpus().length} cores, node ${process.version}, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );

  const cold = await startServer(0);
  try {
    await createToRunning(cold.ready, "cold (no warm sandbox)", 300);
  } finally {
    await cold.stop();
  }

  const server = await startServer(1);
  try {
    const { ready } = server;
    const call = api(ready);
    await createToRunning(ready, "warm sandbox ready", 400);

    const sb = (
      await call("POST", `/v1/${WS}/sandboxEngines?sandboxEngineId=work`, {
        sandboxEngineImage: "workspaces/global/sandboxEngineImages/default",
        sandboxEngineTemplate: "workspaces/global/sandboxEngineTemplates/default",
      })
    ).sandboxEngine.name;
    while ((await call("GET", `/v1/${sb}`)).sandboxEngine.state !== "STATE_RUNNING") await sleep(5);

    // `true` as a process, against child_process in this process.
    const viaApi: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < RUNS + 5; i++) {
      const t = performance.now();
      const p = (await call("POST", `/v1/${sb}/processes?autoRun=true`, { command: "true" })).process.name;
      await call("POST", `/v1/${p}:wait`, {});
      await call("GET", `/v1/${p}:readOutput`);
      if (i >= 5) viaApi.push(performance.now() - t);
      const d = performance.now();
      await spawnAndWait("true", []);
      if (i >= 5) direct.push(performance.now() - d);
    }
    console.log(`run \`true\` through the API (create autoRun, wait, readOutput): ${stats(viaApi)}`);
    console.log(
      `spawn \`true\` with child_process: ${stats(direct)}  -> ratio ${(median(viaApi) / median(direct)).toFixed(1)}x`,
    );

    // 100 MB of output, streamed.
    const restMs: number[] = [];
    const connectMs: number[] = [];
    const catMs: number[] = [];
    const processes = createClient(
      ProcessService,
      createConnectTransport({
        baseUrl: ready.url,
        httpVersion: "1.1",
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${ready.token}`);
            return next(req);
          },
        ],
      }),
    );
    for (let i = 0; i < STREAM_RUNS; i++) {
      let t = performance.now();
      let p = (
        await call("POST", `/v1/${sb}/processes?autoRun=true`, {
          command: "head",
          args: ["-c", String(STREAM_BYTES), "/dev/zero"],
        })
      ).process.name;
      const res = await fetch(`${ready.url}/v1/${p}:streamOutput`, {
        headers: { authorization: `Bearer ${ready.token}` },
      });
      let bytes = 0;
      let parts: Buffer[] = [];
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        let buf = Buffer.from(chunk);
        for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
          const line = JSON.parse(Buffer.concat([...parts, buf.subarray(0, nl)]).toString());
          parts = [];
          buf = buf.subarray(nl + 1);
          if (line.result?.data) bytes += Buffer.from(line.result.data, "base64").length;
        }
        if (buf.length > 0) parts.push(buf);
      }
      if (bytes !== STREAM_BYTES) throw new Error(`REST stream delivered ${bytes} bytes`);
      restMs.push(performance.now() - t);

      t = performance.now();
      p = (
        await call("POST", `/v1/${sb}/processes?autoRun=true`, {
          command: "head",
          args: ["-c", String(STREAM_BYTES), "/dev/zero"],
        })
      ).process.name;
      bytes = 0;
      for await (const m of processes.streamProcessOutput({ name: p })) bytes += m.data.length;
      if (bytes !== STREAM_BYTES) throw new Error(`Connect stream delivered ${bytes} bytes`);
      connectMs.push(performance.now() - t);

      t = performance.now();
      await spawnAndWait("sh", ["-c", `head -c ${STREAM_BYTES} /dev/zero | cat > /dev/null`]);
      catMs.push(performance.now() - t);
    }
    const mbps = (ms: number) => `${(STREAM_BYTES / 1e6 / (ms / 1000)).toFixed(0)} MB/s`;
    console.log(`stream 100 MB of output, REST NDJSON (base64): ${stats(restMs)} = ${mbps(median(restMs))}`);
    console.log(
      `stream 100 MB of output, Connect through the edge (binary): ${stats(connectMs)} = ${mbps(median(connectMs))}`,
    );
    console.log(`head -c 100M /dev/zero | cat > /dev/null: ${stats(catMs)} = ${mbps(median(catMs))}`);

    // A 10 MB file, written and read back.
    const content = Buffer.alloc(FILE_BYTES);
    for (let i = 0; i < content.length; i += 4) content.writeUInt32LE((i * 2654435761) >>> 0, i);
    const b64 = content.toString("base64");
    const writes: number[] = [];
    const reads: number[] = [];
    const hostWrites: number[] = [];
    const hostReads: number[] = [];
    const hostFile = path.join(os.tmpdir(), `aiem-bench-file-${process.pid}`);
    for (let i = 0; i < FILE_RUNS; i++) {
      let t = performance.now();
      await call("POST", `/v1/${sb}/filesystem:writeFile`, {
        path: "/workspace/ten.bin",
        content: b64,
        overwrite: true,
      });
      writes.push(performance.now() - t);
      t = performance.now();
      const back = await call("GET", `/v1/${sb}/filesystem:readFile?path=/workspace/ten.bin`);
      reads.push(performance.now() - t);
      if (back.content.length !== b64.length) throw new Error("the file came back different");
      t = performance.now();
      fs.writeFileSync(hostFile, content);
      hostWrites.push(performance.now() - t);
      t = performance.now();
      fs.readFileSync(hostFile);
      hostReads.push(performance.now() - t);
    }
    fs.rmSync(hostFile, { force: true });
    console.log(`write a 10 MB file through the API: ${stats(writes)}; host fs: ${stats(hostWrites)}`);
    console.log(`read a 10 MB file through the API: ${stats(reads)}; host fs: ${stats(hostReads)}`);
  } finally {
    await server.stop();
  }
}

await main();
