// Sandboxes that outlive the process holding them (runtime option keepRunning): a runtime in a
// child process starts them, is SIGKILLed, and a new runtime re-adopts them with their processes
// and every line of their output, before, during and after the outage.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { OutputStream } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { waitFor } from "@aiem/kit/testing";
import { afterAll, describe, expect, it } from "vitest";
import { findBwrap } from "./bwrap.js";
import { type LocalSandboxRuntime, SandboxRuntimeError, createLocalSandboxRuntime } from "./local-runtime.js";

const bwrap = findBwrap();
const cacheDir = path.join(os.tmpdir(), "aiem-agent-cache-test");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-restart-test-"));
const registry = path.join(dataDir, "uid-ranges");
const HOLDER = new URL("./restart-holder.ts", import.meta.url).pathname;
const LINES = 40;

/** Starts a holder for `ids`; resolves with it and the bwrap pid of each sandbox once all run. */
function startHolder(ids: string[]) {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", HOLDER, dataDir, cacheDir, registry, String(LINES), ...ids],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const pids = new Promise<Map<string, number>>((resolve, reject) => {
    const found = new Map<string, number>();
    let text = "";
    child.stdout.on("data", (data: Buffer) => {
      text += data.toString();
      for (const m of text.matchAll(/^started (\S+) (\d+)$/gm)) found.set(m[1]!, Number(m[2]));
      if (found.size === ids.length) resolve(found);
    });
    child.once("exit", (code, signal) => reject(new Error(`the holder ended early (${signal ?? code})`)));
  });
  return { child, exited, pids };
}

/** Starts the sandbox `id` under a holder and SIGKILLs the holder; returns the sandbox's bwrap pid. */
async function orphanedSandbox(id: string): Promise<number> {
  const holder = startHolder([id]);
  const pids = await holder.pids;
  holder.child.kill("SIGKILL");
  await holder.exited;
  return pids.get(id)!;
}

/** Whether the process has ended (it is gone, or a zombie). */
const ended = (pid: number) =>
  !fs.existsSync(`/proc/${pid}/stat`) || /\) [ZX] /.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));

describe.skipIf(!bwrap || process.getuid?.() !== 0)("sandboxes that outlive their runtime", () => {
  const runtimes: LocalSandboxRuntime[] = [];
  const adopter = () => {
    const runtime = createLocalSandboxRuntime({ dataDir, cacheDir, uidRangeRegistry: registry, keepRunning: true });
    runtimes.push(runtime);
    return runtime;
  };

  afterAll(async () => {
    const runtime = adopter();
    for (const id of ["a", "b", "c", "gone", "mute"]) await runtime.destroy(id).catch(() => undefined);
    await Promise.all(runtimes.map((r) => r.close()));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("keeps three sandboxes' processes running through a SIGKILL of their runtime; every line is read once, in order", async () => {
    const ids = ["a", "b", "c"];
    const holder = startHolder(ids);
    await holder.pids;
    // Let each counter print for a while, kill the holder, and leave the sandboxes alone a while.
    await new Promise((r) => setTimeout(r, 800));
    holder.child.kill("SIGKILL");
    await holder.exited;
    await new Promise((r) => setTimeout(r, 700));

    const runtime = adopter();
    for (const id of ids) {
      const sandbox = await runtime.start(id);
      const { exit } = await sandbox.client.waitProcess({ processId: "counter" });
      expect([id, exit!.exitCode]).toEqual([id, 0]);
      for await (const m of sandbox.client.streamOutput({ processId: "counter" })) if (m.chunk?.end) break;
      const out = await sandbox.client.readOutput({ processId: "counter", stream: OutputStream.STDOUT });
      const expected = Array.from({ length: LINES }, (_, i) => `${i}\n`).join("");
      expect([id, Buffer.from(out.data).toString()]).toEqual([id, expected]);
    }
    // Stopping an adopted sandbox ends every process in it; a runtime that never held a sandbox
    // left running takes it over to destroy it.
    const pids = ids.map((id) => runtime.get(id)!.pid);
    await runtime.stop("a");
    expect(ended(pids[0]!)).toBe(true);
    await runtime.close();
    expect(ended(pids[1]!)).toBe(false);
    const another = adopter();
    await another.destroy("b");
    await another.destroy("c");
    expect([ended(pids[1]!), ended(pids[2]!)]).toEqual([true, true]);
    expect(fs.existsSync(path.join(dataDir, "sandboxes", "b"))).toBe(false);
  });

  it("reports a sandbox whose agent died while no runtime held it, once, instead of restarting it silently", async () => {
    const bwrapPid = await orphanedSandbox("gone");
    // Its namespace's init, then bwrap: the whole sandbox ends with nobody watching.
    for (const inner of fs.readFileSync(`/proc/${bwrapPid}/task/${bwrapPid}/children`, "utf8").trim().split(/\s+/)) {
      process.kill(Number(inner), "SIGKILL");
    }
    const runtime = adopter();
    await waitFor(() => ended(bwrapPid), { timeoutMs: 5_000, what: "the sandbox to end" });
    const error = await runtime.start("gone").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxRuntimeError);
    expect((error as SandboxRuntimeError).code).toBe("agent-gone");
    // Said once: the next start runs it afresh, on its files; stopping and starting it again is
    // an ordinary start (the runtime that saw it end has nothing to report).
    const fresh = await runtime.start("gone");
    expect((await fresh.client.health({})).version).toBeTruthy();
    await runtime.stop("gone");
    const again = await runtime.start("gone");
    expect((await again.client.health({})).version).toBeTruthy();
    await runtime.destroy("gone");
  });

  it("ends a sandbox left running whose agent does not answer, from its record, when it is destroyed", async () => {
    const bwrapPid = await orphanedSandbox("mute");
    const [init] = fs
      .readFileSync(`/proc/${bwrapPid}/task/${bwrapPid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .map(Number);
    // The namespace's init (the agent) and every process under it are stopped: it cannot answer.
    const below = fs.readFileSync(`/proc/${init}/task/${init}/children`, "utf8").trim().split(/\s+/);
    const stopped = [init!, ...below.filter((pid) => pid !== "").map(Number)];
    for (const pid of stopped) process.kill(pid, "SIGSTOP");
    const runtime = createLocalSandboxRuntime({
      dataDir,
      cacheDir,
      uidRangeRegistry: registry,
      keepRunning: true,
      startTimeoutMs: 500,
    });
    runtimes.push(runtime);
    const error = await runtime.start("mute").catch((e: unknown) => e);
    expect((error as SandboxRuntimeError).code).toBe("start-failed");
    await runtime.destroy("mute");
    await waitFor(() => [bwrapPid, init!, ...stopped].every(ended), { timeoutMs: 5_000, what: "the sandbox to end" });
    expect(fs.existsSync(path.join(dataDir, "sandboxes", "mute"))).toBe(false);
  });
});
