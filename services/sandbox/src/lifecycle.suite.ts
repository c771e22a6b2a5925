// The sandbox lifecycle beyond single calls: a restart of the service (sandboxes that ran are
// adopted, their processes running on; one whose agent died meanwhile is FAILED), an agent that dies, a start that fails, a machine without bubblewrap
// (refused unless the operator opts into unconfined sandboxes, where the agent's path resolution
// is the only wall), and warm sandboxes. Restarts the shared module, so this suite runs last.
import * as fs from "node:fs";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { waitFor as waitForCondition } from "@aiem/kit/testing";
import { Process_State } from "@aiem/proto/enginemanager/sandbox/v1/process_pb.js";
import {
  SandboxEngine_PendingReason,
  SandboxEngine_State,
} from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { createLocalSandboxRuntime, type LocalSandboxRuntime, prepareAgentArtifacts } from "./runtime/index.js";
import type { SandboxModule } from "./module.js";
import { childrenOf, processStartTime } from "./runtime/adopted-sandboxes.js";
import { loadSandboxByUid, type SandboxRow } from "./store.js";
import {
  AGENT_CACHE,
  b64,
  expectError,
  ok,
  sharedHarness,
  sleep,
  startExtraModule,
  unb64,
  WS,
  type ExtraClients,
  type SandboxHarness,
} from "./testing/index.js";

let h: SandboxHarness;

beforeAll(async () => {
  h = await sharedHarness();
});

/** A sandbox with `sleep 30` running in it, and the pid of its bubblewrap. */
async function sleepingSandbox(id: string) {
  const sb = await h.createSandbox(id);
  const p = ok(
    await h.rest("POST", `/v1/${sb.name}/processes?autoRun=true`, { body: { command: "sleep", args: ["30"] } }),
  ).process;
  return { sb, p, bwrapPid: h.sandbox.runtime.get((await rowOf(h.sandbox, sb.uid)).runtime_id)!.pid };
}

/** The sandbox's row in `module`'s database. */
async function rowOf(module: SandboxModule, uid: string): Promise<SandboxRow> {
  return (await loadSandboxByUid(module.database!.db, uid))!;
}

async function failure(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

const waitFor = <T>(check: () => Promise<T>, timeoutMs = 15_000) =>
  waitForCondition(check, { timeoutMs, intervalMs: 25 });

async function createVia(c: ExtraClients, id: string) {
  const res = await c.engines.createSandboxEngine({
    parent: `workspaces/${WS}`,
    sandboxEngineId: id,
    sandboxEngine: { sandboxEngineImage: h.image, sandboxEngineTemplate: h.template },
  });
  return res.sandboxEngine!;
}

const stateOf = async (c: ExtraClients, name: string) =>
  (await c.engines.getSandboxEngine({ name })).sandboxEngine!.state;

describe("host-wide bounds", () => {
  it("refuses a sandbox past the storage and process bounds of the host, naming them, and answers under fork bombs", async () => {
    const MiB = 1 << 20;
    const { template } = await h.catalogueFixture("bounded", { storageBytes: String(32 * MiB) });
    const bounded = await startExtraModule(h, "bounded", {
      maxTotalStorageBytes: 2 * 32 * MiB,
      maxTotalProcesses: 400,
    });
    try {
      const c = await bounded.clients("alice");
      const create = (id: string, withTemplate = template) =>
        c.engines.createSandboxEngine({
          parent: `workspaces/${WS}`,
          sandboxEngineId: id,
          sandboxEngine: { sandboxEngineImage: h.image, sandboxEngineTemplate: withTemplate },
        });
      const sandboxes = [(await create("bound-a")).sandboxEngine!, (await create("bound-b")).sandboxEngine!];
      for (const sb of sandboxes)
        await waitFor(async () => (await stateOf(c, sb.name)) === SandboxEngine_State.RUNNING);
      // Storage: two images of 32 MiB fill the bound; a third is refused, nothing is made.
      const storage = await failure(create("bound-c"));
      expect(storage.code).toBe(Code.ResourceExhausted);
      expect(storage.rawMessage).toMatch(/64 MiB for all of them \(AIEM_SANDBOX_MAX_TOTAL_STORAGE_BYTES\)/);
      expect(
        (await failure(c.engines.getSandboxEngine({ name: `workspaces/${WS}/sandboxEngines/bound-c` }))).code,
      ).toBe(Code.NotFound);
      // Processes: a fork bomb in each sandbox (each alone may have 4096) stops at the host's bound.
      // Both bombs wait for one moment, so that the first cannot fill the bound before the second
      // has started.
      const bomb =
        "import os, sys, time\ntime.sleep(max(0, float(sys.argv[1]) - time.time()))\nwhile True:\n    try:\n        if os.fork() == 0:\n            time.sleep(120); os._exit(0)\n    except OSError:\n        time.sleep(0.05)\n";
      const fuse = String(Date.now() / 1000 + 6);
      for (const sb of sandboxes) {
        await c.filesystem.writeFile({ name: sb.name, path: "/tmp/bomb.py", content: Buffer.from(bomb) });
        await c.processes.createProcess({
          parent: sb.name,
          autoRun: true,
          process: { command: "python3", args: ["/tmp/bomb.py", fuse] },
        });
      }
      expect(Date.now() / 1000).toBeLessThan(Number(fuse));
      await sleep(Number(fuse) * 1000 - Date.now());
      const group = bounded.module.runtime;
      // Without storage only the process bound applies; one made before the bombs filled it is
      // deleted with the others.
      let attempt = 0;
      await waitFor(async () => {
        const id = `bound-d${++attempt}`;
        const made = await create(id, h.template).then(
          (r) => r.sandboxEngine!,
          (e: unknown) => ConnectError.from(e),
        );
        if (!(made instanceof ConnectError)) {
          sandboxes.push(made);
          return undefined;
        }
        return made.rawMessage.includes("AIEM_SANDBOX_MAX_TOTAL_PROCESSES") ? made : undefined;
      }, 30_000).then((error) => {
        expect(error.code).toBe(Code.ResourceExhausted);
        expect(error.rawMessage).toMatch(/the most all of them may run together being 400/);
      });
      // The service answers meanwhile, quickly: a get through it, and each sandbox's agent.
      for (let i = 0; i < 5; i++) {
        const begin = performance.now();
        expect((await c.engines.getSandboxEngine({ name: sandboxes[0]!.name })).sandboxEngine!.state).toBe(
          SandboxEngine_State.RUNNING,
        );
        const listed = await c.filesystem.listDirectory({ name: sandboxes[1]!.name, path: "/tmp" });
        expect(listed.files.map((f) => f.path)).toContain("/tmp/bomb.py");
        expect(performance.now() - begin).toBeLessThan(2_000);
        await sleep(200);
      }
      expect(group.isRunning(sandboxes[0]!.uid) || group.isRunning(sandboxes[1]!.uid)).toBe(true);
      for (const sb of sandboxes) await c.engines.deleteSandboxEngine({ name: sb.name });
    } finally {
      await bounded.stop();
    }
  }, 120_000);
});

describe("sandbox lifecycle", () => {
  it("marks a sandbox whose agent died FAILED, with its running processes ended; it can still be terminated", async () => {
    const { sb, p, bwrapPid } = await sleepingSandbox("crash");
    const inits = childrenOf(bwrapPid);
    expect(inits.length).toBe(1);
    process.kill(bwrapPid, "SIGKILL");
    await h.waitState(sb.name, "STATE_FAILED");
    // Its bwrap alone was killed: the runtime ends the rest of the sandbox (its PID namespace).
    await waitFor(async () => processStartTime(inits[0]!) === undefined);
    expect(ok(await h.rest("GET", `/v1/${p.name}`)).process).toMatchObject({ state: "STATE_FAILED", exitCode: 137 });
    expectError(
      await h.rest("GET", `/v1/${sb.name}/filesystem:statFile?path=/`),
      "FAILED_PRECONDITION",
      "STATE_FAILED",
    );
    expect(ok(await h.rest("POST", `/v1/${sb.name}:terminate`, { body: {} })).sandboxEngine.state).toBe(
      "STATE_TERMINATING",
    );
    await h.waitState(sb.name, "STATE_TERMINATED");
  });

  it("marks a sandbox that cannot start FAILED", async () => {
    const broken = await startExtraModule(
      h,
      "broken",
      {},
      {
        runtime: createLocalSandboxRuntime({
          dataDir: path.join(h.t.dataDir, "broken-rt"),
          cacheDir: AGENT_CACHE,
          // A machine where the agent could not be built.
          agentArtifacts: {
            ...(await prepareAgentArtifacts(AGENT_CACHE)),
            agentPath: undefined,
            agentUnavailableReason: "no `go` at /nonexistent/go",
          },
        }),
      },
    );
    try {
      const c = await broken.clients("alice");
      const sb = await createVia(c, "cannot-start");
      expect(sb.state).toBe(SandboxEngine_State.STARTING);
      await waitFor(async () => (await stateOf(c, sb.name)) === SandboxEngine_State.FAILED);
      expect((await rowOf(broken.module, sb.uid)).failure_reason).toContain("/nonexistent/go");
      // Said to the client too.
      const failed = (await c.engines.getSandboxEngine({ name: sb.name })).sandboxEngine!;
      expect(failed.failureReason).toMatch(/the sandbox agent is not available: no `go` at \/nonexistent\/go/);
      await c.engines.deleteSandboxEngine({ name: sb.name });
      await waitFor(async () =>
        c.engines.getSandboxEngine({ name: sb.name }).then(
          () => false,
          (e: unknown) => ConnectError.from(e).code === Code.NotFound,
        ),
      );
    } finally {
      await broken.stop();
    }
  });

  it("says what a starting sandbox waits for: its resources, then its agent", async () => {
    const real = createLocalSandboxRuntime({ dataDir: path.join(h.t.dataDir, "gated-rt"), cacheDir: AGENT_CACHE });
    let launch!: () => void;
    let answer!: () => void;
    const launched = new Promise<void>((r) => (launch = r));
    const answered = new Promise<void>((r) => (answer = r));
    // The real runtime, held at two points: before the launch, and before the agent's answer.
    const gated: LocalSandboxRuntime = {
      ...real,
      capabilities: real.capabilities,
      start: async (id, options) => {
        await launched;
        options?.onLaunched?.();
        await answered;
        return real.start(id, options);
      },
    };
    const slow = await startExtraModule(h, "gated", {}, { runtime: gated });
    try {
      const c = await slow.clients("alice");
      const reason = async (name: string) => {
        const e = (await c.engines.getSandboxEngine({ name })).sandboxEngine!;
        return [SandboxEngine_State[e.state], SandboxEngine_PendingReason[e.pendingReason], e.pendingMessage] as const;
      };
      const sb = await createVia(c, "gated");
      expect(SandboxEngine_PendingReason[sb.pendingReason]).toBe("CREATING_RESOURCES");
      await sleep(200);
      expect(await reason(sb.name)).toEqual([
        "STARTING",
        "CREATING_RESOURCES",
        "setting up the sandbox's isolated environment",
      ]);
      launch();
      await waitFor(async () => (await reason(sb.name))[1] === "WAITING_READINESS");
      expect((await reason(sb.name))[2]).toBe("waiting for the sandbox's agent to answer");
      answer();
      await waitFor(async () => (await stateOf(c, sb.name)) === SandboxEngine_State.RUNNING);
      expect(await reason(sb.name)).toEqual(["RUNNING", "UNSPECIFIED", ""]);
      await c.engines.terminateSandboxEngine({ name: sb.name });
      await waitFor(async () => (await stateOf(c, sb.name)) === SandboxEngine_State.TERMINATED);
    } finally {
      launch();
      answer();
      await slow.stop();
    }
  });

  it("refuses sandboxes without bubblewrap, naming the opt-in", async () => {
    const none = await startExtraModule(h, "nobwrap", { bwrapPath: "/nonexistent/bwrap" });
    try {
      const c = await none.clients("alice");
      const err = await failure(createVia(c, "refused"));
      expect(err.code).toBe(Code.FailedPrecondition);
      expect(err.rawMessage).toContain("bubblewrap");
      expect(err.rawMessage).toContain("AIEM_SANDBOX_UNCONFINED=true");
      expect(
        (await failure(c.engines.getSandboxEngine({ name: `workspaces/${WS}/sandboxEngines/refused` }))).code,
      ).toBe(Code.NotFound);
    } finally {
      await none.stop();
    }
  });

  it("runs unconfined sandboxes when the operator opts in; the API's paths still stay inside", async () => {
    const loose = await startExtraModule(h, "unconfined", { bwrapPath: "/nonexistent/bwrap", unconfined: true });
    try {
      const c = await loose.clients("alice");
      const sb = await createVia(c, "loose");
      await waitFor(async () => (await stateOf(c, sb.name)) === SandboxEngine_State.RUNNING);
      const root = path.join(loose.dataDir, "sandboxes", sb.uid, "root");
      const marker = path.join(loose.dataDir, "host-marker.txt");
      fs.writeFileSync(marker, "HOST");
      // Without isolation the process itself sees the host, as the operator accepted.
      const p = (
        await c.processes.createProcess({
          parent: sb.name,
          autoRun: true,
          process: {
            command: "sh",
            args: ["-c", `pwd; cat ${marker}; ln -s ${marker} link; ln -s ../../../../../../../../.. up`],
          },
        })
      ).process!;
      await c.processes.waitProcess({ name: p.name });
      const out = Buffer.from((await c.processes.readProcessOutput({ name: p.name })).data).toString();
      expect(out).toBe(`${path.join(root, "workspace")}\nHOST`);
      // The API resolves the same links inside the sandbox's root.
      expect((await failure(c.filesystem.readFile({ name: sb.name, path: "/workspace/link" }))).code).toBe(
        Code.NotFound,
      );
      expect((await failure(c.filesystem.readFile({ name: sb.name, path: "/workspace/up/etc/passwd" }))).code).toBe(
        Code.PermissionDenied,
      );
      await c.filesystem.writeFile({
        name: sb.name,
        path: "/workspace/link",
        content: Buffer.from("inside"),
        overwrite: true,
        createParentDirectories: true,
      });
      expect(fs.readFileSync(marker, "utf8")).toBe("HOST");
      expect(fs.readFileSync(path.join(root, marker), "utf8")).toBe("inside");
      await c.engines.terminateSandboxEngine({ name: sb.name });
      await waitFor(async () => (await stateOf(c, sb.name)) === SandboxEngine_State.TERMINATED);
    } finally {
      await loose.stop();
    }
  });

  it("starts sandboxes from warm ones when a template was used before, and clears leftovers after a restart", async () => {
    const warm = await startExtraModule(h, "warm", { warmPoolSize: 1 });
    const c = await warm.clients("alice");
    const runtimeId = async (uid: string) => (await rowOf(warm.module, uid)).runtime_id;
    const pools = () => fs.readdirSync(path.join(warm.dataDir, "sandboxes")).filter((d) => d.startsWith("pool-"));
    try {
      const first = await createVia(c, "warm-1");
      await waitFor(async () => (await stateOf(c, first.name)) === SandboxEngine_State.RUNNING);
      expect(await runtimeId(first.uid)).toBe(first.uid);
      const ready = await waitFor(async () => pools().find((id) => warm.module.runtime.isRunning(id)));
      const t0 = Date.now();
      const second = await createVia(c, "warm-2");
      // Handed out by the create itself: its answer says STARTING, as every create's does, and
      // calls into it are refused as for a starting sandbox until a read has shown it RUNNING
      // (clients of a service whose sandboxes take seconds to start read the state first). The
      // very next read says RUNNING, with nothing left to wait for.
      expect(second.state).toBe(SandboxEngine_State.STARTING);
      const early = await failure(c.filesystem.statFile({ name: second.name, path: "/" }));
      expect(early.code).toBe(Code.FailedPrecondition);
      expect(early.rawMessage).toBe(`${second.name} is not in running state: it is STATE_STARTING`);
      expect(
        (await failure(c.processes.createProcess({ parent: second.name, autoRun: true, process: { command: "true" } })))
          .rawMessage,
      ).toContain("not in running state");
      expect(await stateOf(c, second.name)).toBe(SandboxEngine_State.RUNNING);
      const ms = Date.now() - t0;
      expect((await c.filesystem.statFile({ name: second.name, path: "/" })).fileInfo?.path).toBe("/");
      expect(await runtimeId(second.uid)).toBe(ready);
      const echo = (
        await c.processes.createProcess({
          parent: second.name,
          autoRun: true,
          process: { command: "echo", args: ["warm"] },
        })
      ).process!;
      await c.processes.waitProcess({ name: echo.name });
      expect(Buffer.from((await c.processes.readProcessOutput({ name: echo.name })).data).toString()).toBe("warm\n");
      console.log(`create to RUNNING from a warm sandbox: ${ms} ms`);
      // The pool refills; a restart leaves its sandboxes behind, and the next start removes them.
      await waitFor(async () => pools().filter((id) => id !== ready && warm.module.runtime.isRunning(id)).length > 0);
      await warm.module.stop();
      const leftover = pools().filter((id) => id !== ready);
      expect(leftover.length).toBeGreaterThan(0);
      await warm.module.start();
      await waitFor(async () => leftover.every((id) => !fs.existsSync(path.join(warm.dataDir, "sandboxes", id))));
      expect(await stateOf(c, second.name)).toBe(SandboxEngine_State.RUNNING);
    } finally {
      await warm.stop();
    }
  });

  it("starts a cold sandbox's agent before writing its row: a refused create removes it, and so does a restart when no row was written", async () => {
    const early = await startExtraModule(h, "early");
    const c = await early.clients("alice");
    const sandboxes = path.join(early.dataDir, "sandboxes");
    const dirs = () => fs.readdirSync(sandboxes).sort();
    try {
      const first = await createVia(c, "early-1");
      expect(first.state).toBe(SandboxEngine_State.STARTING);
      await waitFor(async () => (await stateOf(c, first.name)) === SandboxEngine_State.RUNNING);
      expect(dirs()).toEqual([first.uid]);
      // The same id again: its agent was already on its way when the row turned out to exist.
      expect((await failure(createVia(c, "early-1"))).code).toBe(Code.AlreadyExists);
      // Its removal waits for that start to end, so the refusal comes while it is still there.
      expect(dirs()).toHaveLength(2);
      await waitFor(async () => dirs().length === 1);
      expect(dirs()).toEqual([first.uid]);

      // A service that died between starting an agent and writing its row left the agent running.
      await early.module.stop();
      const orphanRuntime = createLocalSandboxRuntime({
        dataDir: early.dataDir,
        cacheDir: AGENT_CACHE,
        keepRunning: true,
      });
      const orphan = await orphanRuntime.start("never-written");
      await orphanRuntime.close();
      expect(processStartTime(orphan.pid)).toBeDefined();
      expect(dirs()).toEqual([first.uid, "never-written"].sort());
      await early.module.start();
      expect(dirs()).toEqual([first.uid]);
      await waitFor(async () => processStartTime(orphan.pid) === undefined);
      expect(await stateOf(c, first.name)).toBe(SandboxEngine_State.RUNNING);
    } finally {
      await early.stop();
    }
  });

  it("after a restart of the service, adopts the sandboxes that ran: processes run on, and none of their output is lost", async () => {
    const sb = await h.createSandbox("restart");
    ok(
      await h.rest("POST", `/v1/${sb.name}/filesystem:writeFile`, {
        body: { path: "/workspace/kept.txt", content: b64("kept") },
      }),
    );
    const lines = 30;
    const counter = ok(
      await h.rest("POST", `/v1/${sb.name}/processes?autoRun=true`, {
        body: {
          command: "sh",
          args: ["-c", `i=0; while [ $i -lt ${lines} ]; do echo $i; i=$((i+1)); sleep 0.05; done`],
        },
      }),
    ).process;
    const done = await h.run(sb.name, "echo", ["before"]);
    await waitFor(async () => unb64(ok(await h.rest("GET", `/v1/${counter.name}:readOutput`)).data).length > 0);
    await h.sandbox.stop();
    expectError(await h.rest("GET", `/v1/${sb.name}`), "UNAVAILABLE");
    await h.sandbox.start();
    expect(ok(await h.rest("GET", `/v1/${sb.name}`)).sandboxEngine.state).toBe("STATE_RUNNING");
    expect(
      unb64(ok(await h.rest("GET", `/v1/${sb.name}/filesystem:readFile?path=/workspace/kept.txt`)).content).toString(),
    ).toBe("kept");
    // The counter ran on through the restart; its end is recorded by the new process of the service.
    expect(ok(await h.rest("POST", `/v1/${counter.name}:wait`, { body: {} })).process).toMatchObject({
      state: "STATE_SUCCEEDED",
      exitCode: 0,
    });
    const expected = Array.from({ length: lines }, (_, i) => `${i}\n`).join("");
    expect(unb64(ok(await h.rest("GET", `/v1/${counter.name}:readOutput`)).data).toString()).toBe(expected);
    expect(unb64(ok(await h.rest("GET", `/v1/${done.process.name}:readOutput`)).data).toString()).toBe("before\n");
    expect((await h.run(sb.name, "echo", ["after"])).output).toBe("after\n");
  });

  it("after a restart of the service, starts unconfined sandboxes again on their files: their processes ended with it", async () => {
    const loose = await startExtraModule(h, "unconfined-restart", {
      bwrapPath: "/nonexistent/bwrap",
      unconfined: true,
    });
    try {
      const c = await loose.clients("alice");
      const sb = await createVia(c, "loose-restart");
      await waitFor(async () => (await stateOf(c, sb.name)) === SandboxEngine_State.RUNNING);
      await c.filesystem.writeFile({
        name: sb.name,
        path: "/workspace/kept.txt",
        content: Buffer.from("kept"),
        createParentDirectories: true,
      });
      const p = (
        await c.processes.createProcess({
          parent: sb.name,
          autoRun: true,
          process: { command: "sh", args: ["-c", "echo $$; exec sleep 30"] },
        })
      ).process!;
      const pid = Number(
        await waitFor(
          async () =>
            Buffer.from((await c.processes.readProcessOutput({ name: p.name })).data)
              .toString()
              .trim() || undefined,
        ),
      );
      await loose.module.stop();
      // Nothing unconfined outlives the service: the process is gone with its agent.
      expect(processStartTime(pid)).toBeUndefined();
      await loose.module.start();
      expect(await stateOf(c, sb.name)).toBe(SandboxEngine_State.RUNNING);
      expect((await c.processes.getProcess({ name: p.name })).process).toMatchObject({
        state: Process_State.FAILED,
        exitCode: 137,
      });
      expect(
        Buffer.from((await c.filesystem.readFile({ name: sb.name, path: "/workspace/kept.txt" })).content).toString(),
      ).toBe("kept");
      await c.engines.deleteSandboxEngine({ name: sb.name });
    } finally {
      await loose.stop();
    }
  });

  it("after a restart of the service, marks FAILED a sandbox whose agent ended while the service was down", async () => {
    const { sb, p, bwrapPid } = await sleepingSandbox("died-meanwhile");
    await h.sandbox.stop();
    // The whole sandbox ends with nobody watching: its namespace's init, then bwrap.
    for (const init of childrenOf(bwrapPid)) process.kill(init, "SIGKILL");
    await waitFor(async () => processStartTime(bwrapPid) === undefined);
    await h.sandbox.start();
    await h.waitState(sb.name, "STATE_FAILED");
    expect((await rowOf(h.sandbox, sb.uid)).failure_reason).toContain("ended while the service was not running");
    expect(ok(await h.rest("GET", `/v1/${p.name}`)).process).toMatchObject({ state: "STATE_FAILED", exitCode: 137 });
    ok(await h.rest("DELETE", `/v1/${sb.name}`));
  });
});
