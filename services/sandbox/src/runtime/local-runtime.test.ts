// Real sandboxes: bubblewrap, the agent, cgroups and storage images as this machine allows.
// Skipped (with the reason) where bwrap is not installed.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { OutputStream } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { FileType } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentClient } from "./agent-client.js";
import { prepareAgentArtifacts } from "./agent-artifacts.js";
import { findBwrap } from "./bwrap.js";
import {
  type LocalSandboxRuntime,
  type SandboxHandle,
  SandboxRuntimeError,
  createLocalSandboxRuntime,
} from "./local-runtime.js";

const bwrap = findBwrap();
// Shared by every test run on this machine: the agent and the helpers are built once.
const cacheDir = path.join(os.tmpdir(), "aiem-agent-cache-test");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-runtime-test-"));

async function code(promise: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await promise;
    return "ok";
  } catch (error) {
    if (error instanceof ConnectError) return error.code;
    throw error;
  }
}

/** Whether `file`'s file system takes direct I/O (what a loop device needs to use it). */
function directIoWorks(file: string): boolean {
  try {
    fs.closeSync(fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_DIRECT));
    return true;
  } catch {
    return false;
  }
}

let counter = 0;

/** Runs a command to its end; returns exit code, signal and combined output. */
async function run(
  client: AgentClient,
  command: string,
  args: string[] = [],
  extra: { workingDirectory?: string; environment?: Record<string, string> } = {},
) {
  const processId = `p${++counter}`;
  await client.startProcess({ processId, command, args, ...extra });
  const { exit } = await client.waitProcess({ processId });
  // The exit comes before the pipes drain; read once the log is complete.
  for await (const m of client.streamOutput({ processId })) if (m.chunk?.end) break;
  const out = await client.readOutput({ processId, stream: OutputStream.COMBINED });
  return { processId, exitCode: exit!.exitCode, signal: exit!.signal, output: Buffer.from(out.data).toString() };
}

afterAll(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe("without bubblewrap", () => {
  it("refuses to start sandboxes unless the operator opts into unconfined mode", async () => {
    const runtime = createLocalSandboxRuntime({ dataDir, cacheDir, bwrapPath: "/nonexistent/bwrap" });
    expect(runtime.capabilities.isolation).toBe("unavailable");
    const error = await runtime.start("refused").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxRuntimeError);
    expect((error as SandboxRuntimeError).code).toBe("isolation-unavailable");
    expect((error as Error).message).toMatch(/bubblewrap.*unconfined/s);
    expect(runtime.isRunning("refused")).toBe(false);
  });

  it("runs unconfined on the host when the operator opts in, and says so", async () => {
    const runtime = createLocalSandboxRuntime({ dataDir, cacheDir, bwrapPath: "/nonexistent/bwrap", unconfined: true });
    try {
      const sandbox = await runtime.start("unconfined");
      expect(sandbox.isolation).toBe("unconfined");
      const { output, exitCode } = await run(sandbox.client, "pwd");
      expect(exitCode).toBe(0);
      expect(output.trim()).toBe(path.join(dataDir, "sandboxes", "unconfined", "root", "workspace"));
      await sandbox.client.writeFile({ path: "/workspace/f.txt", content: Buffer.from("x") });
      expect(fs.readFileSync(path.join(dataDir, "sandboxes", "unconfined", "root", "workspace", "f.txt"), "utf8")).toBe(
        "x",
      );
    } finally {
      await runtime.close();
    }
    expect(runtime.isRunning("unconfined")).toBe(false);
  });
});

describe.skipIf(!bwrap)("sandboxes in bubblewrap", () => {
  let runtime: LocalSandboxRuntime;
  let sandbox: SandboxHandle;
  let client: AgentClient;

  beforeAll(async () => {
    runtime = createLocalSandboxRuntime({
      dataDir,
      cacheDir,
      keepAliveMs: 200,
      drainTimeoutMs: 500,
      outputLimitBytes: 1 << 20,
    });
    sandbox = await runtime.start("box", { limits: { memoryBytes: 512 << 20, milliCpuLimit: 1500 } });
    client = sandbox.client;
  });

  afterAll(async () => {
    await runtime?.close();
  });

  describe("lifecycle", () => {
    it("is ready when the agent answers Health, and start is idempotent", async () => {
      expect(sandbox.isolation).toBe("bwrap");
      expect(runtime.isRunning("box")).toBe(true);
      const health = await client.health({});
      expect(health.version).toMatch(/^\d+\.\d+\.\d+/);
      expect(await runtime.start("box")).toBe(sandbox);
    });

    it("keeps files across stop and start, and destroy removes them", async () => {
      const first = await runtime.start("lifecycle");
      await first.client.writeFile({ path: "/workspace/keep.txt", content: Buffer.from("kept") });
      await runtime.stop("lifecycle");
      expect(runtime.isRunning("lifecycle")).toBe(false);
      expect((await first.exited).requested).toBe(true);
      const second = await runtime.start("lifecycle");
      const read = await second.client.readFile({ path: "/workspace/keep.txt" });
      expect(Buffer.from(read.content).toString()).toBe("kept");
      await runtime.destroy("lifecycle");
      expect(fs.existsSync(path.join(dataDir, "sandboxes", "lifecycle"))).toBe(false);
    });

    it("a start that fails says why and leaves nothing running", async () => {
      // An agent that exits at once.
      const broken = createLocalSandboxRuntime({
        dataDir,
        cacheDir,
        agentArtifacts: { ...(await prepareAgentArtifacts(cacheDir)), agentPath: "/usr/bin/false" },
      });
      const error = await broken.start("broken").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SandboxRuntimeError);
      expect((error as SandboxRuntimeError).code).toBe("start-failed");
      expect((error as Error).message).toMatch(/the agent exited/);
      expect(broken.isRunning("broken")).toBe(false);
      await broken.destroy("broken");
    });

    it("reports an agent that ended without being stopped", async () => {
      const exits: string[] = [];
      const watched = createLocalSandboxRuntime({
        dataDir,
        cacheDir,
        onExit: (id, exit) => exits.push(`${id}:${exit.requested}`),
      });
      const handle = await watched.start("crash");
      process.kill(handle.pid, "SIGKILL");
      expect((await handle.exited).requested).toBe(false);
      expect(exits).toEqual(["crash:false"]);
      expect(watched.isRunning("crash")).toBe(false);
      expect(await code(handle.client.health({}))).toBe(Code.Unavailable);
      await watched.destroy("crash");
    });

    it("runs the host-side steps in sandbox-launch, or from a shell without it, to the same sandbox; a failed step is named", async () => {
      const prepared = await prepareAgentArtifacts(cacheDir);
      if (runtime.capabilities.storage.mechanism !== "loop-ext4") return;
      expect(prepared.launchPath, prepared.launchUnavailableReason).toBeDefined();
      // Without sandbox-launch, bubblewrap (as the sandbox's uid) passes through the data
      // directory's parents itself.
      fs.chmodSync(dataDir, 0o711);
      const shell = createLocalSandboxRuntime({
        dataDir: path.join(dataDir, "shell"),
        cacheDir,
        agentArtifacts: { ...prepared, launchPath: undefined },
      });
      const limits = { memoryBytes: 256 << 20, storageBytes: 32 << 20 };
      // What the steps make: the image as the root (without mkfs's lost+found), the stage's
      // files, the private /etc (read-only, the shared entries readable), the sandbox's cgroup.
      const look = [
        "ls -a / | grep -c lost+found; ls /.aiem; awk '$5==\"/\"' /proc/self/mountinfo | sed 's/.* - //' | cut -d' ' -f1",
        "ls -A /etc | tr '\\n' ' '; echo; readlink /etc/mtab; cat /etc/hostname; test -s /etc/ld.so.cache && echo linker-cache; ls /etc/ssl/certs | grep -q . && echo certs",
        "touch /etc/probe /etc/ssl/certs/probe 2>&1 | grep -c Read-only",
      ].join("; ");
      try {
        const seen: string[] = [];
        for (const [rt, id] of [
          [runtime, "launch-c"],
          [shell, "launch-sh"],
        ] as const) {
          const handle = await rt.start(id, { limits });
          expect(handle.limits.storage.mechanism).toBe("loop-ext4");
          const result = await run(handle.client, "sh", ["-c", look]);
          seen.push(result.output);
          expect(fs.readFileSync(`/proc/${handle.pid}/cgroup`, "utf8")).toContain(`/${id}\n`);
          if (rt === runtime) {
            // sandbox-launch attaches the image for direct I/O wherever its file system allows it.
            const image = path.join(dataDir, "sandboxes", id, "root.img");
            const device = /^\/dev\/(loop\d+):/.exec(
              execFileSync("losetup", ["--associated", image], { encoding: "utf8" }),
            )?.[1];
            expect(fs.readFileSync(`/sys/block/${device}/loop/dio`, "utf8").trim()).toBe(
              directIoWorks(image) ? "1" : "0",
            );
          }
          await rt.stop(id);
        }
        // The agent alone of the agent's files.
        expect(seen[0]).toMatch(
          /^0\nagent\next4\n.*\bpasswd\b.*\n\.\.\/proc\/self\/mounts\nsandbox\nlinker-cache\ncerts\n2\n$/,
        );
        expect(seen[1]).toBe(seen[0]);
        // An image still attached to a loop device (a previous mount going away) is mounted
        // through that device, never a second one: two ext4 mounts of one file would corrupt it.
        for (const [rt, id, dir] of [
          [runtime, "launch-c", dataDir],
          [shell, "launch-sh", path.join(dataDir, "shell")],
        ] as const) {
          const image = path.join(dir, "sandboxes", id, "root.img");
          const device = execFileSync("losetup", ["--find", "--show", image], { encoding: "utf8" }).trim();
          try {
            const handle = await rt.start(id, { limits });
            expect((await run(handle.client, "sh", ["-c", "echo kept > /workspace/f; cat /workspace/f"])).output).toBe(
              "kept\n",
            );
            expect(
              execFileSync("losetup", ["--associated", image], { encoding: "utf8" }).trim().split("\n"),
            ).toHaveLength(1);
            await rt.stop(id);
          } finally {
            execFileSync("losetup", ["--detach", device]);
          }
        }
        // An image that is no file system: each path fails at the mount, and says so.
        for (const [rt, id, dir] of [
          [runtime, "launch-c", dataDir],
          [shell, "launch-sh", path.join(dataDir, "shell")],
        ] as const) {
          fs.writeFileSync(path.join(dir, "sandboxes", id, "root.img"), Buffer.alloc(1 << 20));
          const error = await rt.start(id, { limits }).catch((e: unknown) => e);
          expect((error as Error).message).toMatch(/could not mount the sandbox's storage image/);
          expect(rt.isRunning(id)).toBe(false);
        }
      } finally {
        await runtime.destroy("launch-c");
        await shell.destroy("launch-sh");
        await shell.close();
      }
    });

    it("rejects ids that are not safe directory names", async () => {
      await expect(runtime.start("../x")).rejects.toThrow(/invalid sandbox id/);
    });

    it("starts agents from a launcher process, so this process never forks; or directly when asked", async () => {
      const direct = createLocalSandboxRuntime({ dataDir: path.join(dataDir, "direct"), cacheDir, spawner: "direct" });
      try {
        const viaLauncher = await runtime.start("via-launcher");
        const viaThisProcess = await direct.start("via-direct");
        const parentOf = (pid: number) =>
          Number(fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
        expect(parentOf(viaLauncher.pid)).not.toBe(process.pid);
        expect(parentOf(parentOf(viaLauncher.pid))).toBe(process.pid);
        expect(parentOf(viaThisProcess.pid)).toBe(process.pid);
        expect((await run(viaThisProcess.client, "echo", ["direct"])).output).toBe("direct\n");
        await runtime.destroy("via-launcher");
      } finally {
        await direct.close();
      }
    });
  });

  describe("isolation", () => {
    it("sees only its own root and the read-only system directories", async () => {
      const marker = path.join(os.tmpdir(), `aiem-host-marker-${process.pid}`);
      fs.writeFileSync(marker, "host");
      try {
        const { output } = await run(client, "sh", [
          "-c",
          `ls -a /; test -e ${marker} && echo MARKER-VISIBLE; test -e /work || echo no-work; test -e /root || echo no-root`,
        ]);
        const entries = output.split("\n").filter((l) => l && !l.startsWith("no-"));
        expect(entries.sort()).toEqual(
          expect.arrayContaining(["bin", "dev", "etc", "proc", "tmp", "usr", "workspace"]),
        );
        expect(output).not.toContain("MARKER-VISIBLE");
        expect(output).toContain("no-work");
        expect(output).toContain("no-root");
      } finally {
        fs.rmSync(marker);
      }
    });

    it("cannot write the system directories, remount them, or change kernel settings", async () => {
      const result = await run(client, "sh", [
        "-c",
        [
          "touch /usr/evil 2>/dev/null && echo WROTE-USR",
          "touch /etc/evil 2>/dev/null && echo WROTE-ETC",
          "mount -o remount,rw /usr 2>/dev/null && echo REMOUNTED",
          // Writes back the current value: harmless even if the protection failed.
          'v=$(cat /proc/sys/kernel/core_pattern); (echo "$v" > /proc/sys/kernel/core_pattern) 2>/dev/null && echo WROTE-SYSCTL',
          "grep CapEff /proc/self/status",
          "cat /etc/shadow 2>/dev/null | grep -c : || true",
          "hostname",
        ].join("; "),
      ]);
      expect(result.output).not.toMatch(/WROTE|REMOUNTED/);
      expect(result.output).toContain("CapEff:\t0000000000000000");
      // The host's password hashes are masked.
      expect(result.output).toMatch(/^0$/m);
      expect(result.output).toContain("sandbox");
      expect(await code(client.writeFile({ path: "/usr/evil", content: Buffer.from("x") }))).toBe(
        Code.PermissionDenied,
      );
    });

    it("has its own PID namespace", async () => {
      const { output } = await run(client, "ps", ["-e", "-o", "pid=,comm="]);
      const pids = output.trim().split("\n");
      expect(pids.length).toBeLessThanOrEqual(6);
      // Its init is the agent itself.
      expect(output).toMatch(/^\s*1 agent$/m);
    });

    it("has no network to the host", async () => {
      const server = net.createServer((s) => s.end("host"));
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      const port = (server.address() as net.AddressInfo).port;
      try {
        const probe = (p: number) =>
          `require("net").connect(${p},"127.0.0.1").on("connect",()=>{console.log("CONNECTED");process.exit(0)}).on("error",e=>{console.log(e.code);process.exit(3)})`;
        const own = await run(client, "node", ["-e", probe(port)]);
        expect(own.output).not.toContain("CONNECTED");
        expect(own.exitCode).toBe(3);
        const postgres = await run(client, "node", ["-e", probe(5432)]);
        expect(postgres.output).not.toContain("CONNECTED");
        const devices = await run(client, "sh", ["-c", "tail -n +3 /proc/net/dev | cut -d: -f1"]);
        expect(devices.output.trim()).toBe("lo");
      } finally {
        server.close();
      }
    });
  });

  describe("filesystem through the agent", () => {
    it("writes, reads, stats and lists with the documented modes", async () => {
      const written = await client.writeFile({
        path: "/workspace/dir/a.txt",
        content: Buffer.from("abc"),
        createParents: true,
      });
      expect(written.fileInfo).toMatchObject({
        path: "/workspace/dir/a.txt",
        size: 3n,
        type: FileType.REGULAR,
        mode: "0644",
      });
      expect((await client.stat({ path: "/workspace/dir" })).fileInfo?.mode).toBe("0755");
      const listed = await client.listDirectory({ path: "/workspace/dir" });
      expect(listed.entries.map((e) => e.path)).toEqual(["/workspace/dir/a.txt"]);
      const { output } = await run(client, "cat", ["/workspace/dir/a.txt"]);
      expect(output).toBe("abc");
      expect(await code(client.writeFile({ path: "/workspace/dir/a.txt", content: Buffer.from("x") }))).toBe(
        Code.AlreadyExists,
      );
      expect(await code(client.remove({ path: "/workspace/dir" }))).toBe(Code.FailedPrecondition);
      await client.remove({ path: "/workspace/dir", recursive: true });
    });

    it("links made by the sandbox's processes cannot lead calls out", async () => {
      await run(client, "sh", [
        "-c",
        "mkdir -p /workspace/esc && cd /workspace/esc && ln -sf ../../../../../../../etc up && ln -sf /etc/hostname abs && mkfifo fifo",
      ]);
      expect(await code(client.readFile({ path: "/workspace/esc/up/hostname" }))).toBe(Code.PermissionDenied);
      // An absolute link means the sandbox's own /etc, which is read-only.
      expect((await client.readFile({ path: "/workspace/esc/abs" })).content.length).toBeGreaterThan(0);
      expect(
        await code(client.writeFile({ path: "/workspace/esc/abs", content: Buffer.from("x"), overwrite: true })),
      ).toBe(Code.PermissionDenied);
      expect(await code(client.readFile({ path: "/workspace/esc/fifo" }))).toBe(Code.FailedPrecondition);
      expect(await code(client.readFile({ path: "/dev/zero" }))).toBe(Code.FailedPrecondition);
      expect(await code(client.stat({ path: "/.aiem/agent.mjs" }))).toBe(Code.PermissionDenied);
      expect(await code(client.stat({ path: "/workspace/../etc" }))).toBe(Code.InvalidArgument);
    });
  });

  describe("processes", () => {
    it("reports exit codes, and 128 + N with the signal for every signal number", async () => {
      expect((await run(client, "sh", ["-c", "exit 3"])).exitCode).toBe(3);
      // Real-time signals need the spawn helper (a C compiler on the machine) to be reported exactly.
      const exact = runtime.capabilities.exactSignals === true;
      for (const signal of exact ? [9, 15, 1, 10, 34, 40, 64] : [9, 15, 1, 10]) {
        const processId = `sig-${signal}-${++counter}`;
        await client.startProcess({ processId, command: "sleep", args: ["30"] });
        await client.signalProcess({ processId, signal });
        const { exit } = await client.waitProcess({ processId });
        expect([signal, exit?.exitCode, exit?.signal]).toEqual([signal, 128 + signal, signal]);
      }
    });

    it("signals reach the whole process group; signalling an ended process fails", async () => {
      await client.startProcess({ processId: "group", command: "sh", args: ["-c", "sleep 30 & sleep 30 & wait"] });
      await new Promise((r) => setTimeout(r, 100));
      await client.signalProcess({ processId: "group", signal: 15 });
      const { exit } = await client.waitProcess({ processId: "group" });
      expect(exit?.exitCode).toBe(143);
      const { output } = await run(client, "sh", ["-c", "ps -e -o comm= | grep -c sleep || true"]);
      expect(output.trim()).toBe("0");
      expect(await code(client.signalProcess({ processId: "group", signal: 9 }))).toBe(Code.FailedPrecondition);
      expect(await code(client.signalProcess({ processId: "group", signal: 65 }))).toBe(Code.InvalidArgument);
      expect(await code(client.signalProcess({ processId: "nope", signal: 9 }))).toBe(Code.NotFound);
    });

    it("fails clearly for unknown or non-executable commands, missing directories and reused ids", async () => {
      expect(await code(client.startProcess({ processId: "e1", command: "no-such-program" }))).toBe(Code.NotFound);
      expect(await code(client.startProcess({ processId: "e2", command: "/etc/hostname" }))).toBe(
        Code.PermissionDenied,
      );
      expect(await code(client.startProcess({ processId: "e3", command: "true", workingDirectory: "/nope" }))).toBe(
        Code.NotFound,
      );
      await client.startProcess({ processId: "once", command: "true" });
      expect(await code(client.startProcess({ processId: "once", command: "true" }))).toBe(Code.AlreadyExists);
      expect(await code(client.getProcess({ processId: "never" }))).toBe(Code.NotFound);
    });

    it("starts in /workspace or the given directory, with exactly the given environment", async () => {
      const a = await run(client, "sh", ["-c", "pwd; env | sort"], { environment: { FOO: "bar" } });
      expect(a.output).toBe(
        "/workspace\nFOO=bar\nPATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nPWD=/workspace\n",
      );
      const b = await run(client, "pwd", [], { workingDirectory: "/tmp", environment: { PATH: "/usr/bin:/bin" } });
      expect(b.output).toBe("/tmp\n");
    });

    it("keeps stdout and stderr apart and their combined order", async () => {
      const { processId, output } = await run(client, "sh", [
        "-c",
        "echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three; sleep 0.1; echo four >&2",
      ]);
      expect(output).toBe("one\ntwo\nthree\nfour\n");
      const stdout = await client.readOutput({ processId, stream: OutputStream.STDOUT });
      const stderr = await client.readOutput({ processId, stream: OutputStream.STDERR });
      expect(Buffer.from(stdout.data).toString()).toBe("one\nthree\n");
      expect(Buffer.from(stderr.data).toString()).toBe("two\nfour\n");
      const streams: [OutputStream, string, bigint][] = [];
      for await (const m of client.streamOutput({ processId })) {
        if (m.chunk?.data.length) streams.push([m.chunk.stream, Buffer.from(m.chunk.data).toString(), m.chunk.offset]);
      }
      expect(streams).toEqual([
        [OutputStream.STDOUT, "one\n", 0n],
        [OutputStream.STDERR, "two\n", 4n],
        [OutputStream.STDOUT, "three\n", 8n],
        [OutputStream.STDERR, "four\n", 14n],
      ]);
    });

    it("never blocks a process nobody reads; the log keeps the newest bytes and says how many it dropped", async () => {
      const total = 50 * 1024 * 1024;
      const started = Date.now();
      const { processId, exitCode } = await run(client, "head", ["-c", String(total), "/dev/zero"]);
      expect(exitCode).toBe(0);
      expect(Date.now() - started).toBeLessThan(15_000);
      const out = await client.readOutput({ processId, stream: OutputStream.COMBINED });
      expect(out.data.length).toBe(1 << 20);
      expect(out.droppedBytes).toBe(BigInt(total - (1 << 20)));
      const chunks = [];
      for await (const m of client.streamOutput({ processId })) chunks.push(m.chunk!);
      expect(chunks[0]!.droppedBytes).toBe(BigInt(total - (1 << 20)));
      expect(chunks[0]!.offset).toBe(BigInt(total - (1 << 20)));
      expect(chunks.at(-1)!.end).toBe(true);
      expect(chunks.at(-1)!.offset).toBe(BigInt(total));
    });

    it("a stream cut and resumed from its last offset gets every byte exactly once", async () => {
      const processId = "resume";
      await client.startProcess({
        processId,
        command: "sh",
        args: [
          "-c",
          "i=0; while [ $i -lt 300 ]; do echo out-$i; echo err-$i >&2; i=$((i+1)); [ $((i % 50)) -eq 0 ] && sleep 0.05; done",
        ],
      });
      const received: Buffer[] = [];
      let next = 0n;
      let ended = false;
      // Stdout and stderr alternate line by line, so the log may hold one chunk per line (600);
      // every attempt takes two chunks or the end, so 400 attempts always suffice.
      for (let attempt = 0; attempt < 400 && !ended; attempt++) {
        const abort = new AbortController();
        let taken = 0;
        try {
          for await (const m of client.streamOutput({ processId, startOffset: next }, { signal: abort.signal })) {
            const c = m.chunk!;
            if (c.end) {
              ended = true;
              break;
            }
            if (c.data.length === 0) continue;
            expect(c.offset).toBe(next);
            received.push(Buffer.from(c.data));
            next = c.offset + BigInt(c.data.length);
            if (++taken === 2) abort.abort();
          }
        } catch (error) {
          if (!(error instanceof ConnectError && error.code === Code.Canceled)) throw error;
        }
        expect(ended || taken === 2).toBe(true);
      }
      expect(ended).toBe(true);
      const all = await client.readOutput({ processId, stream: OutputStream.COMBINED });
      expect(Buffer.concat(received).toString()).toBe(Buffer.from(all.data).toString());
      expect(all.data.length).toBeGreaterThan(3000);
    });

    it("replay options: skip_replay tails, offsets past the end are OUT_OF_RANGE", async () => {
      // "after" is written once the test says so, when the tail is known to run (its first
      // keep-alive came): no timing to guess on a busy machine.
      const script = "echo before; while [ ! -e /workspace/tail-go ]; do sleep 0.02; done; echo after";
      await client.startProcess({ processId: "tail", command: "sh", args: ["-c", script] });
      const stdout = async () =>
        Buffer.from((await client.readOutput({ processId: "tail", stream: OutputStream.STDOUT })).data).toString();
      while ((await stdout()) !== "before\n") await new Promise((r) => setTimeout(r, 10));
      const data: string[] = [];
      let released = false;
      for await (const m of client.streamOutput({ processId: "tail", skipReplay: true })) {
        if (m.chunk?.data.length) data.push(Buffer.from(m.chunk.data).toString());
        if (m.chunk?.keepAlive && !released) {
          released = true;
          await client.writeFile({ path: "/workspace/tail-go", content: Buffer.from("") });
        }
      }
      expect(data.join("")).toBe("after\n");
      const consume = async (req: { startOffset?: bigint; skipReplay?: boolean }) => {
        for await (const _ of client.streamOutput({ processId: "tail", ...req })) void _;
      };
      expect(await code(consume({ startOffset: 1000n }))).toBe(Code.OutOfRange);
      expect(await code(consume({ startOffset: 3n, skipReplay: true }))).toBe(Code.InvalidArgument);
    });

    it("sends keep-alives on a quiet stream, then the end marker", async () => {
      await client.startProcess({ processId: "quiet", command: "sleep", args: ["0.7"] });
      const kinds: string[] = [];
      for await (const m of client.streamOutput({ processId: "quiet" })) {
        kinds.push(m.chunk!.keepAlive ? "keep-alive" : m.chunk!.end ? "end" : "data");
      }
      expect(kinds.filter((k) => k === "keep-alive").length).toBeGreaterThanOrEqual(2);
      expect(kinds.at(-1)).toBe("end");
    });

    it("the stream ends when the process has ended, not when it closes its pipes, nor later than the drain time", async () => {
      await client.startProcess({
        processId: "closer",
        command: "sh",
        args: ["-c", "echo bye; exec >&- 2>&-; sleep 0.4"],
      });
      for await (const m of client.streamOutput({ processId: "closer" })) if (m.chunk?.end) break;
      expect((await client.getProcess({ processId: "closer" })).running).toBe(false);
      // A background child keeps the pipes open; the stream still ends about drainTimeoutMs (500 ms here) after the exit.
      const started = Date.now();
      await client.startProcess({ processId: "holder", command: "sh", args: ["-c", "sleep 5 & echo parent-done"] });
      let text = "";
      for await (const m of client.streamOutput({ processId: "holder" })) text += Buffer.from(m.chunk!.data).toString();
      expect(text).toBe("parent-done\n");
      expect(Date.now() - started).toBeLessThan(3000);
    });

    it("wait with wait_for_output answers once the output is complete, in one call", async () => {
      // The program ends at once; a child it left behind writes once more, then closes the pipes.
      const script = "(sleep 0.3; echo late) & echo early";
      await client.startProcess({ processId: "tail-writer", command: "sh", args: ["-c", script] });
      const plain = await client.waitProcess({ processId: "tail-writer" });
      expect(plain.exit?.exitCode).toBe(0);
      const full = await client.waitProcess({ processId: "tail-writer", waitForOutput: true });
      expect(full.outputComplete).toBe(true);
      expect(full.exit).toEqual(plain.exit);
      expect(
        Buffer.from(
          (await client.readOutput({ processId: "tail-writer", stream: OutputStream.STDOUT })).data,
        ).toString(),
      ).toBe("early\nlate\n");
      // Asked again, an ended process with complete output answers at once.
      expect((await client.waitProcess({ processId: "tail-writer", waitForOutput: true })).outputComplete).toBe(true);
    });

    it("wait returns at once for an ended process; cancelling a wait leaves the process running", async () => {
      await client.startProcess({ processId: "waited", command: "sleep", args: ["30"] });
      const running = await client.getProcess({ processId: "waited" });
      expect(running.running).toBe(true);
      expect(running.pid).toBeGreaterThan(1);
      expect(await code(client.waitProcess({ processId: "waited" }, { timeoutMs: 100 }))).toBe(Code.DeadlineExceeded);
      expect((await client.getProcess({ processId: "waited" })).running).toBe(true);
      await client.signalProcess({ processId: "waited", signal: 9 });
      await client.waitProcess({ processId: "waited" });
      const ended = await client.getProcess({ processId: "waited" });
      expect(ended.running).toBe(false);
      expect(ended.exit?.exitCode).toBe(137);
      expect((await client.waitProcess({ processId: "waited" })).exit?.signal).toBe(9);
    });
  });

  describe("tunnels", () => {
    const httpServer =
      "require('http').createServer((q,s)=>s.end('hello from '+require('os').hostname()+' '+process.argv[1])).listen(8080,'127.0.0.1')";

    async function openWhenListening(target: SandboxHandle, port: number) {
      for (let i = 0; ; i++) {
        try {
          return await target.openTunnel(port);
        } catch (error) {
          if (i > 100 || !(error instanceof ConnectError && error.code === Code.Unavailable)) throw error;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }

    async function request(target: SandboxHandle, port: number): Promise<string> {
      const socket = await openWhenListening(target, port);
      socket.end("GET / HTTP/1.0\r\nHost: x\r\n\r\n");
      const parts: Buffer[] = [];
      for await (const data of socket) parts.push(data as Buffer);
      return Buffer.concat(parts).toString();
    }

    it("forwards to a server in the sandbox; two sandboxes use the same port without colliding", async () => {
      const other = await runtime.start("tunnel-b");
      try {
        await client.startProcess({ processId: "http-a", command: "node", args: ["-e", httpServer, "A"] });
        await other.client.startProcess({ processId: "http-b", command: "node", args: ["-e", httpServer, "B"] });
        const a = await request(sandbox, 8080);
        const b = await request(other, 8080);
        expect(a).toMatch(/^HTTP\/1\.[01] 200/);
        expect(a).toContain("hello from sandbox A");
        expect(b).toContain("hello from sandbox B");
        // A Python server works as well.
        await client.startProcess({
          processId: "py",
          command: "python3",
          args: ["-m", "http.server", "9000", "--bind", "127.0.0.1"],
        });
        expect(await request(sandbox, 9000)).toMatch(/^HTTP\/1\.[01] 200/);
      } finally {
        await runtime.destroy("tunnel-b");
      }
    });

    it("half-closes like TCP and fails with UNAVAILABLE where nothing listens", async () => {
      await client.startProcess({
        processId: "upper",
        command: "node",
        args: [
          "-e",
          "require('net').createServer(s=>{let d='';s.on('data',x=>d+=x);s.on('end',()=>s.end(d.toUpperCase()))}).listen(7070,'127.0.0.1')",
        ],
      });
      const socket = await openWhenListening(sandbox, 7070);
      socket.write("hello ");
      socket.end("tunnel");
      const parts: Buffer[] = [];
      for await (const data of socket) parts.push(data as Buffer);
      expect(Buffer.concat(parts).toString()).toBe("HELLO TUNNEL");
      const refused = await sandbox.openTunnel(6553).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConnectError);
      expect((refused as ConnectError).code).toBe(Code.Unavailable);
    });
  });

  describe("limits", () => {
    function hostCgroupFile(pid: number, controller: string, file: string): string | undefined {
      const line = fs
        .readFileSync(`/proc/${pid}/cgroup`, "utf8")
        .split("\n")
        .find((l) => l.split(":")[1]?.split(",").includes(controller));
      const mount = controller === "cpu" ? "/sys/fs/cgroup/cpu" : `/sys/fs/cgroup/${controller}`;
      if (!line || !fs.existsSync(mount)) return undefined;
      return fs.readFileSync(path.join(mount, line.split(":")[2]!, file), "utf8").trim();
    }

    it("reports how each limit is enforced", () => {
      const caps = runtime.capabilities;
      expect(["cgroup-v1", "cgroup-v2", "rlimit"]).toContain(caps.memory.mechanism);
      expect(sandbox.limits.memory.value).toBe(512 << 20);
      if (sandbox.limits.cpu.mechanism === "cgroup-v1") {
        expect(hostCgroupFile(sandbox.pid, "cpu", "cpu.cfs_quota_us")).toBe("150000");
        expect(hostCgroupFile(sandbox.pid, "pids", "pids.max")).toBe("4096");
        expect(hostCgroupFile(sandbox.pid, "memory", "memory.limit_in_bytes")).toBe(String(512 << 20));
      }
    });

    it("measures usage: the cgroup's memory and CPU time, and from inside the disk and the process tree", async () => {
      const busy = "busy";
      await sandbox.client.startProcess({
        processId: busy,
        command: "sh",
        args: ["-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"],
      });
      try {
        await new Promise((r) => setTimeout(r, 300));
        const inside = await sandbox.client.readUsage({});
        expect(inside.diskTotalBytes).toBeGreaterThan(0n);
        expect(inside.diskAvailableBytes).toBeLessThanOrEqual(inside.diskTotalBytes);
        // The agent (a Node process) and the busy shell.
        expect(inside.memoryBytes).toBeGreaterThan(10n << 20n);
        expect(inside.cpuNanos).toBeGreaterThan(0n);
        const cgroup = sandbox.cgroupUsage();
        if (runtime.capabilities.memory.mechanism.startsWith("cgroup"))
          expect(cgroup.memoryBytes).toBeGreaterThan(10n << 20n);
        else expect(cgroup.memoryBytes).toBeUndefined();
        // Where the machine accounts CPU per cgroup (cpuacct on v1, cpu.stat on v2).
        const first = sandbox.cgroupUsage().cpuNanos;
        if (fs.existsSync("/sys/fs/cgroup/cpuacct") || fs.existsSync("/sys/fs/cgroup/cgroup.controllers")) {
          if (runtime.capabilities.cpu.mechanism.startsWith("cgroup")) expect(first).toBeDefined();
        }
        if (first !== undefined) {
          await new Promise((r) => setTimeout(r, 200));
          expect(sandbox.cgroupUsage().cpuNanos!).toBeGreaterThan(first);
        }
      } finally {
        await sandbox.client.signalProcess({ processId: busy, signal: 9 }).catch(() => undefined);
      }
    });

    it("a process allocating past the memory limit is killed, and the agent survives", async () => {
      const limited = await runtime.start("memory", { limits: { memoryBytes: 96 << 20 } });
      try {
        const hog = await run(limited.client, "python3", ["-c", "a=[]\nwhile True: a.append(bytearray(1<<20))"]);
        if (limited.limits.memory.mechanism.startsWith("cgroup")) {
          expect([hog.exitCode, hog.signal]).toEqual([137, 9]);
        } else {
          expect(hog.exitCode).not.toBe(0);
          expect(hog.output).toContain("MemoryError");
        }
        expect((await limited.client.health({})).version).toBeTruthy();
      } finally {
        await runtime.destroy("memory");
      }
    });

    it("a fork bomb filling the sandbox's process bound leaves the agent answering many calls at once", async () => {
      if (runtime.capabilities.processes.mechanism === "none") return;
      const bounded = createLocalSandboxRuntime({ dataDir, cacheDir, maxProcesses: 48 });
      try {
        const box = await bounded.start("bomb");
        // The bomb says when the kernel first refused it a process: the bound is full from then on.
        const bomb =
          "import os, time\nfull = False\nwhile True:\n    try:\n        if os.fork() == 0:\n            time.sleep(120); os._exit(0)\n" +
          "    except OSError:\n        if not full: open('/tmp/full', 'w').close(); full = True\n        time.sleep(0.05)\n";
        await box.client.writeFile({ path: "/tmp/bomb.py", content: Buffer.from(bomb) });
        await box.client.startProcess({ processId: "bomb", command: "python3", args: ["/tmp/bomb.py"] });
        for (let i = 0; (await code(box.client.stat({ path: "/tmp/full" }))) !== "ok"; i++) {
          expect(i).toBeLessThan(300);
          await new Promise((r) => setTimeout(r, 50));
        }
        for (let round = 0; round < 5; round++) {
          const calls = await Promise.all(
            Array.from({ length: 200 }, (_, i) =>
              code(i % 2 ? box.client.listDirectory({ path: "/tmp" }) : box.client.readFile({ path: "/tmp/bomb.py" })),
            ),
          );
          expect(calls.every((c) => c === "ok")).toBe(true);
        }
        expect(await code(box.client.startProcess({ processId: "one-more", command: "true" }))).not.toBe("ok");
        expect((await box.client.health({})).version).toBeTruthy();
        expect(bounded.isRunning("bomb")).toBe(true);
      } finally {
        await bounded.close();
      }
    });

    it("a spare image mounted ahead is the next sandbox's root, handed over once", async () => {
      const limits = { storageBytes: 40 << 20 };
      const first = await runtime.start("ahead-1", { limits });
      try {
        if (first.limits.storage.mechanism !== "loop-ext4") return;
        const size = first.limits.storage.value!;
        const held = path.join(dataDir, "spare-images", `${size}.sock`);
        // The spare is formatted, then mounted ahead, in the background once the start is over.
        const deadline = Date.now() + 60_000;
        while (!fs.existsSync(held) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect(fs.existsSync(held)).toBe(true);
        const second = await runtime.start("ahead-2", { limits });
        const image = path.join(dataDir, "sandboxes", "ahead-2", "root.img");
        expect(fs.existsSync(held)).toBe(false);
        expect(fs.existsSync(path.join(dataDir, "sandboxes", "ahead-2", "premount.sock"))).toBe(false);
        // Its root is that image, through one loop device, mounted as before.
        expect(execFileSync("losetup", ["--associated", image], { encoding: "utf8" }).trim().split("\n")).toHaveLength(
          1,
        );
        const look = await run(second.client, "sh", [
          "-c",
          "awk '$5==\"/\"' /proc/self/mountinfo | sed 's/.* - //' | cut -d' ' -f1; df -k / | tail -1",
        ]);
        const [fsType, df] = look.output.trim().split("\n");
        expect(fsType).toBe("ext4");
        expect(Number(df!.split(/\s+/)[1])).toBeLessThan(size / 1024);
        expect((await run(second.client, "sh", ["-c", "echo kept > /workspace/f; cat /workspace/f"])).output).toBe(
          "kept\n",
        );
        expect(first.limits.storage).toEqual(second.limits.storage);
      } finally {
        await runtime.destroy("ahead-1");
        await runtime.destroy("ahead-2");
      }
    });

    it("storage is bounded by the sandbox's filesystem", async () => {
      const small = await runtime.start("storage", { limits: { storageBytes: 32 << 20 } });
      try {
        if (small.limits.storage.mechanism !== "loop-ext4") return;
        const df = await run(small.client, "df", ["-k", "/"]);
        const sizeKb = Number(df.output.trim().split("\n")[1]!.split(/\s+/)[1]);
        expect(sizeKb).toBeLessThan(33 * 1024);
        const fill = await run(small.client, "sh", ["-c", "head -c 40000000 /dev/zero > /workspace/big"]);
        expect(fill.exitCode).not.toBe(0);
        expect(fill.output).toMatch(/No space left/);
        await small.client.remove({ path: "/workspace/big" });
        expect(await code(small.client.writeFile({ path: "/workspace/big", content: Buffer.alloc(40_000_000) }))).toBe(
          Code.ResourceExhausted,
        );
        // The files live in the image: a later start keeps them, and the limit.
        await small.client.writeFile({ path: "/workspace/kept", content: Buffer.from("in the image") });
        await runtime.stop("storage");
        const again = await runtime.start("storage");
        expect(again.limits.storage.mechanism).toBe("loop-ext4");
        expect(Buffer.from((await again.client.readFile({ path: "/workspace/kept" })).content).toString()).toBe(
          "in the image",
        );
      } finally {
        await runtime.destroy("storage");
      }
    });
  });
});

describe.skipIf(!bwrap)("rlimit fallback (cgroups and storage images turned off)", () => {
  it("limits memory per process with RLIMIT_AS and files with RLIMIT_FSIZE, and says so", async () => {
    const runtime = createLocalSandboxRuntime({ dataDir, cacheDir, useCgroups: false, useStorageImages: false });
    try {
      expect(runtime.capabilities.memory.mechanism).toBe("rlimit");
      expect(runtime.capabilities.cpu.mechanism).toBe("none");
      const sandbox = await runtime.start("fallback", { limits: { memoryBytes: 128 << 20, storageBytes: 8 << 20 } });
      expect(sandbox.limits.memory).toMatchObject({ mechanism: "rlimit", value: 128 << 20 });
      expect(sandbox.limits.storage).toMatchObject({ mechanism: "rlimit", value: 8 << 20 });
      const hog = await run(sandbox.client, "python3", ["-c", "a=bytearray(300<<20)"]);
      expect(hog.exitCode).toBe(1);
      expect(hog.output).toContain("MemoryError");
      const big = await run(sandbox.client, "sh", ["-c", "head -c 10000000 /dev/zero > /workspace/big"]);
      expect(big.exitCode).not.toBe(0);
      expect((await run(sandbox.client, "sh", ["-c", "echo ok"])).output).toBe("ok\n");
    } finally {
      await runtime.close();
    }
  });
});
