// Metrics over REST: memory, disk and CPU of a running sandbox as the runtime measures them
// (cgroup figures where the sandbox has a cgroup, the agent's otherwise), the CPU share against
// the template's limit, and strict mode when a figure cannot be measured.
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import type { RestJson } from "@aiem/kit/testing";
import { createLocalSandboxRuntime, type LocalSandboxRuntime } from "./runtime/index.js";
import {
  AGENT_CACHE,
  createRunningSandbox,
  expectError,
  ok,
  sharedHarness,
  sleep,
  startExtraModule,
  WS,
  type SandboxHarness,
} from "./testing/index.js";

let h: SandboxHarness;
let sb: RestJson;
const MiB = 1 << 20;

beforeAll(async () => {
  h = await sharedHarness();
  sb = await h.createSandbox("metrics");
});

const metrics = async (name = sb.name, query = "") =>
  ok(await h.rest("GET", `/v1/${name}/metrics:read${query}`)).metrics;

/** Holds 200 MiB and keeps one core busy. */
const HOG = "const b = Buffer.alloc(200 << 20, 1); let x = 0; for (;;) x += b[x % b.length];";
/** /proc counts CPU time in ticks of 1/100 s (USER_HZ on Linux). */
const TICK_MS = 10;

/** The CPU time (user + system) the hog has received, read from /proc inside the sandbox. */
async function hogCpuMs(name: string): Promise<number> {
  // `[m]arker` matches the hog's command line but not the command lines of this shell and grep.
  const script = `for p in /proc/[0-9]*; do tr '\\0' ' ' < "$p/cmdline" 2>/dev/null | grep -q 'cpu-hog-[m]arker' && cat "$p/stat"; done; true`;
  const r = await h.run(name, "sh", ["-c", script]);
  expect(r.process.exitCode).toBe(0);
  const stats = r.output.split("\n").filter((line) => line.includes("(node)"));
  expect(stats).toHaveLength(1);
  const fields = stats[0]!.slice(stats[0]!.lastIndexOf(")") + 2).split(" ");
  // utime and stime, fields 14 and 15 of stat, the 12th and 13th after the command name.
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

async function until<T>(read: () => Promise<T>, check: (v: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > end) return v;
    await sleep(100);
  }
}

describe("metrics", () => {
  it("reports memory against the template's limit, the sandbox's disk, CPU as a share, and when", async () => {
    const before = Date.now();
    const m = await metrics();
    expect(BigInt(m.memory.currentBytes)).toBeGreaterThan(0n);
    expect(m.memory.limitBytes).toBe(String(512 * MiB));
    expect(BigInt(m.disk.totalBytes)).toBeGreaterThan(0n);
    expect(BigInt(m.disk.availableBytes)).toBeLessThanOrEqual(BigInt(m.disk.totalBytes));
    expect(m.cpu.usageRatio).toBeGreaterThanOrEqual(0);
    expect(m.cpu.usageRatio).toBeLessThanOrEqual(1);
    expect(Date.parse(m.collectTime)).toBeGreaterThanOrEqual(before - 1000);
    // As the official client sends it.
    expect((await metrics(encodeURIComponent(sb.name), "?strictMode=True")).memory.limitBytes).toBe(String(512 * MiB));
  });

  it("follows what the sandbox's processes do: memory they hold, CPU they burn", async () => {
    const idle = await metrics();
    const hog = ok(
      await h.rest("POST", `/v1/${sb.name}/processes?autoRun=true`, {
        body: { command: "node", args: ["-e", `"cpu-hog-marker"; ${HOG}`] },
      }),
    ).process;
    try {
      const busy = await until(
        metrics,
        (m) => BigInt(m.memory.currentBytes) > BigInt(idle.memory.currentBytes) + 150n * BigInt(MiB),
      );
      expect(BigInt(busy.memory.currentBytes)).toBeGreaterThan(BigInt(idle.memory.currentBytes) + 150n * BigInt(MiB));

      // The share is held against the CPU time the hog really got, not against a busy core: on
      // a loaded machine it gets what the scheduler gives it. The service compares this call's
      // reading with the previous one, so the two calls bracket the hog's own readings, and the
      // wall time around both calls is at least the service's window.
      const start = performance.now();
      await metrics();
      const from = await hogCpuMs(sb.name);
      let to = from;
      // Waits for the hog to have burnt a measurable amount, however long the machine takes.
      while (to - from < 100) {
        await sleep(100);
        to = await hogCpuMs(sb.name);
      }
      const m = await metrics();
      const wall = performance.now() - start;
      // One /proc tick of rounding on each side of the hog's figure; the template's limit is one core.
      expect(m.cpu.usageRatio).toBeGreaterThanOrEqual((to - from - 2 * TICK_MS) / wall);
      expect(m.cpu.usageRatio).toBeLessThanOrEqual(1);
    } finally {
      ok(await h.rest("POST", `/v1/${hog.name}:sendSignal`, { body: { signal: 9 } }));
      ok(await h.rest("POST", `/v1/${hog.name}:wait`, { body: {} }));
    }
    const calm = await until(metrics, (m) => m.cpu.usageRatio < 0.3);
    expect(calm.cpu.usageRatio).toBeLessThan(0.3);
  });

  it("measures the sandbox's own storage where the template gives it one", async (ctx) => {
    if (h.sandbox.runtime.capabilities.storage.mechanism !== "loop-ext4") ctx.skip();
    const small = (await h.catalogueFixture("metrics-disk", { storageBytes: String(64 * MiB) })).template;
    const disk = await h.createSandbox("metrics-disk", { template: small });
    const first = (await metrics(disk.name)).disk;
    expect(Number(first.totalBytes)).toBeGreaterThan(40 * MiB);
    expect(Number(first.totalBytes)).toBeLessThanOrEqual(64 * MiB);
    const r = await h.run(disk.name, "sh", ["-c", "head -c 8388608 /dev/zero > /workspace/fill && sync"]);
    expect(r.process.exitCode).toBe(0);
    const second = (await metrics(disk.name)).disk;
    expect(Number(first.availableBytes) - Number(second.availableBytes)).toBeGreaterThanOrEqual(7 * MiB);
  });

  it("answers only for a running sandbox engine with a well-formed name", async () => {
    expectError(
      await h.rest("GET", `/v1/workspaces/${WS}/sandboxEngines/Bad_Name/metrics:read`),
      "INVALID_ARGUMENT",
      "name",
    );
    expectError(await h.rest("GET", `/v1/workspaces/${WS}/sandboxEngines/nope/metrics:read`), "NOT_FOUND");
    expectError(await h.rest("GET", `/v1/${sb.name}/metrics:read?strictMode=maybe`), "INVALID_ARGUMENT", "strictMode");
    const stopped = await h.createSandbox("metrics-stopped");
    ok(await h.rest("POST", `/v1/${stopped.name}:terminate`, { body: {} }));
    await h.waitState(stopped.name, "STATE_TERMINATED");
    expectError(await h.rest("GET", `/v1/${stopped.name}/metrics:read`), "FAILED_PRECONDITION", "STATE_TERMINATED");
  });

  it("reads 0 for what cannot be measured, or fails in strict mode", async () => {
    const real = createLocalSandboxRuntime({ dataDir: path.join(h.t.dataDir, "mute-rt"), cacheDir: AGENT_CACHE });
    // An agent that will not report its usage.
    const mute: LocalSandboxRuntime = {
      ...real,
      capabilities: real.capabilities,
      get(id) {
        const handle = real.get(id);
        if (!handle) return undefined;
        const client = new Proxy(handle.client, {
          get: (target, key) =>
            key === "readUsage"
              ? () => Promise.reject(new ConnectError("not today", Code.Unavailable))
              : Reflect.get(target, key),
        });
        return { ...handle, client };
      },
    };
    const extra = await startExtraModule(h, "mute", {}, { runtime: mute });
    try {
      const c = await extra.clients("alice");
      const created = await createRunningSandbox(h, c, "mute");
      const lenient = (await c.metrics.readMetrics({ name: created.name })).metrics!;
      expect(lenient.disk).toMatchObject({ totalBytes: 0n, availableBytes: 0n });
      const err = await c.metrics.readMetrics({ name: created.name, strictMode: true }).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(err?.code).toBe(Code.Unavailable);
      expect(err?.rawMessage).toContain("did not report its usage");
      await c.engines.terminateSandboxEngine({ name: created.name });
    } finally {
      await extra.stop();
    }
  });
});
