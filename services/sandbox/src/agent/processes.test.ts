// The process table on its own, outside any sandbox, with and without the spawn helper.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareAgentArtifacts } from "../runtime/agent-artifacts.js";
import { type ProcessManager, createProcessManager } from "./processes.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-proc-test-"));
let helperPath: string | undefined;

beforeAll(async () => {
  fs.mkdirSync(path.join(root, "workspace"));
  helperPath = (await prepareAgentArtifacts(path.join(os.tmpdir(), "aiem-agent-cache-test"))).helperPath;
});

afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

async function codeOf(fn: () => unknown): Promise<Code | "ok"> {
  try {
    await fn();
    return "ok";
  } catch (error) {
    if (error instanceof ConnectError) return error.code;
    throw error;
  }
}

for (const mode of ["resident", "helper", "direct"] as const) {
  describe(`processes (${mode})`, () => {
    let manager: ProcessManager;
    let n = 0;
    const id = () => `${mode}-${++n}`;

    beforeAll(() => {
      if (mode !== "direct" && helperPath === undefined) return;
      manager = createProcessManager({
        root,
        helperPath: mode !== "direct" ? helperPath : undefined,
        residentHelper: mode === "resident",
        outputLimitBytes: 1 << 16,
        drainTimeoutMs: 200,
        oomScoreAdj: 500,
      });
    });

    it("answers a wait that comes while the process is being started, once it started and ended", async (ctx) => {
      if (!manager) ctx.skip();
      const processId = id();
      const start = manager.start({
        processId,
        command: "sh",
        args: ["-c", "exit 3"],
        workingDirectory: "",
        environment: {},
      });
      // Asked before the start answered, as the service asks for the exit together with the start.
      const waited = manager.wait(processId);
      expect((await waited).exitCode).toBe(3);
      expect((await start).exit?.exitCode).toBe(3);
      // A process whose start failed is unknown to the wait, as one never started.
      const failed = id();
      const refused = manager.start({
        processId: failed,
        command: "/nonexistent/program",
        args: [],
        workingDirectory: "",
        environment: {},
      });
      expect(await codeOf(() => manager.wait(failed))).toBe(Code.NotFound);
      expect(await codeOf(() => refused)).toBe(Code.NotFound);
    });

    it("runs in the sandbox's /workspace with the given environment and captures both streams", async (ctx) => {
      if (!manager) ctx.skip();
      const record = await manager.start({
        processId: id(),
        command: "sh",
        // Only the helper sets the OOM score before the program runs; directly it follows a moment later.
        args: ["-c", `pwd; echo "$A" >&2; ${mode !== "direct" ? "cat /proc/self/oom_score_adj" : "echo 500"}; exit 7`],
        workingDirectory: "",
        environment: { A: "x" },
      });
      expect((await record.exited).exitCode).toBe(7);
      await record.log.changed();
      while (!record.log.sealed) await record.log.changed();
      expect(record.log.collect("stdout").data.toString()).toBe(`${path.join(root, "workspace")}\n500\n`);
      expect(record.log.collect("stderr").data.toString()).toBe("x\n");
    });

    it("reports signals as 128 + N", async (ctx) => {
      if (!manager) ctx.skip();
      const record = await manager.start({
        processId: id(),
        command: "sleep",
        args: ["10"],
        workingDirectory: "/",
        environment: {},
      });
      manager.signal(record.id, 15);
      expect(await manager.wait(record.id)).toMatchObject({ exitCode: 143, signal: 15 });
      expect(await codeOf(() => manager.signal(record.id, 9))).toBe(Code.FailedPrecondition);
    });

    it("refuses malformed environments without quoting their values", async (ctx) => {
      if (!manager) ctx.skip();
      const start = (environment: Record<string, string>) =>
        manager.start({ processId: id(), command: "true", args: [], workingDirectory: "", environment });
      const error = await start({ TOKEN: "s3cret\0x" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.InvalidArgument);
      expect((error as Error).message).not.toContain("s3cret");
      expect(await codeOf(() => start({ "A=B": "x" }))).toBe(Code.InvalidArgument);
    });

    it("maps a missing or non-executable command to NOT_FOUND or PERMISSION_DENIED", async (ctx) => {
      if (!manager) ctx.skip();
      fs.writeFileSync(path.join(root, "workspace", "noexec"), "#!/bin/sh\n", { mode: 0o644 });
      const start = (command: string) => () =>
        manager.start({ processId: id(), command, args: [], workingDirectory: "", environment: {} });
      expect(await codeOf(start("definitely-not-a-program"))).toBe(Code.NotFound);
      expect(await codeOf(start("./noexec"))).toBe(Code.PermissionDenied);
      expect(await codeOf(start("/nonexistent/prog"))).toBe(Code.NotFound);
    });
  });
}

describe("processes: the resident helper", () => {
  let manager: ProcessManager;
  beforeAll(() => {
    // Compiled with the machine's C compiler; without one there is no helper to test.
    if (helperPath !== undefined)
      manager = createProcessManager({ root, helperPath, outputLimitBytes: 1 << 16, drainTimeoutMs: 200 });
  });
  afterAll(() => manager?.close());

  const start = (processId: string, script: string) =>
    manager.start({ processId, command: "sh", args: ["-c", script], workingDirectory: "", environment: {} });
  const stdoutOf = async (processId: string) => {
    const { log } = manager.get(processId);
    while (!log.sealed) await log.changed();
    return log.collect("stdout").data.toString();
  };

  it("loses no output written before the agent opened the pipes", async (ctx) => {
    if (!manager) ctx.skip();
    // Far more than a pipe holds: the program blocks until the agent reads, and nothing is dropped.
    const record = await start("much", "head -c 1000000 /dev/zero; echo done >&2");
    expect((await record.exited).exitCode).toBe(0);
    while (!record.log.sealed) await record.log.changed();
    expect(record.log.end).toBe(1000000 + "done\n".length);
    expect(record.log.collect("stderr").data.toString()).toBe("done\n");
  });

  it("gives no process another's pipes, so one's output ends when it does", async (ctx) => {
    if (!manager) ctx.skip();
    const holder = await start("holder", "sleep 30");
    const holderPipes = ["1", "2"].map((fd) => fs.readlinkSync(`/proc/${holder.pid}/fd/${fd}`));
    expect(holderPipes.every((link) => link.startsWith("pipe:"))).toBe(true);
    const looker = await start("looker", "for fd in /proc/self/fd/*; do readlink $fd; done");
    await looker.exited;
    const seen = (await stdoutOf("looker")).split("\n");
    expect(seen).toContain("/dev/null");
    for (const pipe of holderPipes) expect(seen).not.toContain(pipe);
    manager.signal("holder", 9);
    await holder.exited;
  });

  it("ends the processes of a helper that died, and starts a new helper for the next start", async (ctx) => {
    if (!manager) ctx.skip();
    const orphan = await start("orphan", "echo $PPID; exec sleep 30");
    while (!orphan.log.collect("stdout").data.includes(0x0a)) await orphan.log.changed();
    const helperPid = Number(orphan.log.collect("stdout").data.toString().trim());
    process.kill(helperPid, "SIGKILL");
    expect(await orphan.exited).toMatchObject({ exitCode: 137, signal: 9 });
    // Its process group is ended with it (gone, or a zombie until someone reaps it).
    const state = () => {
      try {
        return fs.readFileSync(`/proc/${orphan.pid}/stat`, "latin1").split(") ")[1]![0];
      } catch {
        return "gone";
      }
    };
    for (let i = 0; i < 100 && !["Z", "X", "gone"].includes(state()!); i++) await new Promise((r) => setTimeout(r, 10));
    expect(["Z", "X", "gone"]).toContain(state());
    const next = await start("next", "echo $PPID");
    expect((await next.exited).exitCode).toBe(0);
    const newHelper = Number((await stdoutOf("next")).trim());
    expect(newHelper).not.toBe(helperPid);
    expect(fs.readFileSync(`/proc/${newHelper}/cmdline`, "latin1")).toContain("--serve");
  });
});

describe("processes: output kept across processes", () => {
  it("releases the logs of ended processes, oldest first, past the total budget", async () => {
    const manager = createProcessManager({
      root,
      helperPath,
      outputLimitBytes: 1000,
      totalOutputLimitBytes: 2500,
      drainTimeoutMs: 200,
    });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const record = await manager.start({
        processId: `budget-${i}`,
        command: "head",
        args: ["-c", "900", "/dev/zero"],
        workingDirectory: "",
        environment: {},
      });
      await record.exited;
      while (!record.log.sealed) await record.log.changed();
      ids.push(record.id);
    }
    const kept = ids.map((id) => manager.get(id).log.kept);
    expect(kept).toEqual([0, 0, 900, 900]);
    expect(manager.get(ids[0]!).log.collect("combined").dropped).toBe(900);
    expect(manager.get(ids[0]!).exit?.exitCode).toBe(0);
    // A running process keeps its log whatever the others hold.
    const running = await manager.start({
      processId: "budget-live",
      command: "sh",
      args: ["-c", "head -c 1000 /dev/zero; sleep 5"],
      workingDirectory: "",
      environment: {},
    });
    while (running.log.end < 1000) await running.log.changed();
    expect(running.log.kept).toBe(1000);
    manager.killAll();
  });
});
