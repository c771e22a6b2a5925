// The escape and hardening suite: escape-checks.py runs inside real sandboxes and tries what
// untrusted code would (mount, a new user namespace, the kernel keyring, bpf, ptrace of a host
// process, the host's configuration, the host's data directory in /proc, and each resource
// limit). With every layer on, each attempt fails. Then each layer (or the few that guard the
// same check together) is switched off, and the checks it guards are shown to see the difference:
// no check here passes merely because the attempt was malformed.
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { OutputStream } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentClient } from "./agent-client.js";
import type { IsolationLayers } from "./bwrap.js";
import { findBwrap } from "./bwrap.js";
import { type LocalSandboxRuntime, type SandboxHandle, createLocalSandboxRuntime } from "./local-runtime.js";
import type { SandboxLimits } from "./limits.js";

const bwrap = findBwrap();
const root = process.getuid?.() === 0;
const cacheDir = path.join(os.tmpdir(), "aiem-agent-cache-test");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-isolation-test-"));
const registry = path.join(dataDir, "uid-ranges");
const checksSource = fs.readFileSync(new URL("./escape-checks.py", import.meta.url));
const limits: SandboxLimits = { memoryBytes: 128 << 20, milliCpuLimit: 200, storageBytes: 32 << 20, maxProcesses: 64 };

type Results = Record<string, string | number>;

let counter = 0;
async function run(client: AgentClient, command: string, args: string[]) {
  const processId = `p${++counter}`;
  await client.startProcess({ processId, command, args });
  const { exit } = await client.waitProcess({ processId });
  for await (const m of client.streamOutput({ processId })) if (m.chunk?.end) break;
  const out = await client.readOutput({ processId, stream: OutputStream.COMBINED });
  return { exitCode: exit!.exitCode, signal: exit!.signal, output: Buffer.from(out.data).toString() };
}

/** The pids of `pid` and all its descendants, from the host's /proc. */
function processTree(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(parents.get(tree[i]!) ?? []));
  return tree;
}

function hostUids(pid: number): number[] {
  return processTree(pid).flatMap((p) => {
    try {
      const line = fs
        .readFileSync(`/proc/${p}/status`, "utf8")
        .split("\n")
        .find((l) => l.startsWith("Uid:"));
      return line ? [Number(line.split(/\s+/)[1])] : [];
    } catch {
      return [];
    }
  });
}

describe.skipIf(!bwrap || !root)("escape and hardening suite", () => {
  const runtimes: LocalSandboxRuntime[] = [];
  // A host process for the ptrace attempt: nothing in a sandbox may attach to it.
  let hostProcess: ChildProcess;

  async function sandboxWith(
    name: string,
    off: Partial<IsolationLayers>,
    options: { useCgroups?: boolean; useStorageImages?: boolean } = {},
  ) {
    const runtime = createLocalSandboxRuntime({
      dataDir,
      cacheDir,
      uidRangeRegistry: registry,
      isolationLayers: off,
      ...options,
    });
    runtimes.push(runtime);
    return runtime.start(name, { limits });
  }

  async function checks(sandbox: SandboxHandle): Promise<Results> {
    await sandbox.client.writeFile({ path: "/tmp/escape-checks.py", content: checksSource });
    const given = { hostPid: hostProcess.pid, dataDir };
    await sandbox.client.writeFile({ path: "/tmp/checks.json", content: Buffer.from(JSON.stringify(given)) });
    const { exitCode, output } = await run(sandbox.client, "python3", ["/tmp/escape-checks.py"]);
    expect(exitCode, output).toBe(0);
    return JSON.parse(output) as Results;
  }

  let hardened: SandboxHandle;
  let results: Results;

  beforeAll(async () => {
    hostProcess = spawn("sleep", ["300"], { stdio: "ignore" });
    hardened = await sandboxWith("hardened", {});
    results = await checks(hardened);
  });

  afterAll(async () => {
    hostProcess?.kill("SIGKILL");
    await Promise.all(runtimes.map((r) => r.close()));
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  describe("with every layer on", () => {
    it("runs as an unprivileged host uid of its own range, checked from the host", async () => {
      expect(hardened.layers.userNamespace.active).toBe(true);
      expect(hardened.hostUid).toBeGreaterThanOrEqual(1 << 20);
      // bubblewrap and the agent, at least.
      const uids = hostUids(hardened.pid);
      expect(uids.length).toBeGreaterThanOrEqual(2);
      for (const uid of uids) expect(uid).toBe(hardened.hostUid);
      const other = await sandboxWith("neighbour", {});
      expect(other.hostUid).not.toBe(hardened.hostUid);
      expect(Math.abs(other.hostUid - hardened.hostUid)).toBeGreaterThanOrEqual(65536);
    });

    it("has an empty bounding set and a seccomp filter", () => {
      expect(results.capBnd).toBe("0000000000000000");
      expect(results.seccomp).toBe("2");
    });

    it("cannot mount, make a user namespace, use the keyring or bpf, or ptrace a host process", () => {
      expect(results.mount).toBe("failed");
      expect(results.unshareUser).toBe("failed");
      expect(results.keyctl).toMatch(/^failed/);
      expect(results.bpf).toMatch(/^failed/);
      expect(results.ptraceOutside).toMatch(/^failed/);
    });

    it("passes none of the service's descriptors on: a program holds only its own", async () => {
      // Whatever the service inherited from its own parent (a shell's, a supervisor's) and did not
      // mark close-on-exec must stop at the launcher.
      const { exitCode, output } = await run(hardened.client, "sh", ["-c", "exec ls /proc/self/fd"]);
      expect(exitCode, output).toBe(0);
      // 0-2, and 3: the directory ls is listing.
      expect(output.trim().split("\n").sort()).toEqual(["0", "1", "2", "3"]);
    });

    it("sees none of the host's configuration and no host path in /proc", () => {
      expect(results.hostConfig).toBe("failed");
      expect(results.dataDirInProc).toBe("failed");
      expect(results.hostCgroupPath).toBe("failed");
    });

    it("holds the process, CPU and storage limits", () => {
      expect(results.processes).toMatch(/^started (\d+), then Resource temporarily unavailable$/);
      expect(Number(/started (\d+)/.exec(String(results.processes))![1])).toBeLessThan(64);
      expect(results.cpuShare).toBeLessThan(0.4);
      expect(results.storage).toMatch(/^wrote (\d+) MiB, then No space left on device$/);
      expect(Number(/wrote (\d+)/.exec(String(results.storage))![1])).toBeLessThanOrEqual(32);
    });

    it("kills a process over its memory limit, counts it as an OOM kill, and keeps the agent", async () => {
      expect(hardened.limits.memory.mechanism).toMatch(/^cgroup/);
      const before = hardened.cgroupUsage().oomKills!;
      const hog = await run(hardened.client, "python3", ["-c", "a=[]\nwhile True: a.append(bytearray(1<<20))"]);
      expect([hog.exitCode, hog.signal]).toEqual([137, 9]);
      // The reason, as the host sees it: the kernel's OOM killer, not another SIGKILL.
      expect(hardened.cgroupUsage().oomKills).toBe(before + 1);
      expect((await hardened.client.health({})).version).toBeTruthy();
    });
  });

  // Each row: the layers switched off, and what the checks then see.
  const rows: [string, Partial<IsolationLayers>, (r: Results, s: SandboxHandle) => void][] = [
    ["userNamespace", { userNamespace: false }, (_r, s) => expect(hostUids(s.pid)).toContain(0)],
    ["emptyBoundingSet", { emptyBoundingSet: false }, (r) => expect(r.capBnd).not.toBe("0000000000000000")],
    [
      "seccomp",
      { seccomp: false },
      (r) => {
        expect(r.seccomp).toBe("0");
        expect(r.unshareUser).toBe("ok");
        expect(r.keyctl).toBe("ok");
      },
    ],
    [
      "seccomp + dropCapabilities + emptyBoundingSet",
      { seccomp: false, dropCapabilities: false, emptyBoundingSet: false },
      (r) => expect(r.mount).toBe("ok"),
    ],
    [
      "seccomp + capabilities + user and PID namespaces",
      { seccomp: false, dropCapabilities: false, emptyBoundingSet: false, userNamespace: false, pidNamespace: false },
      (r) => {
        expect(r.bpf).toBe("ok");
        expect(r.ptraceOutside).toBe("ok");
      },
    ],
    ["privateEtc", { privateEtc: false }, (r) => expect(r.hostConfig).toMatch(/^found:/)],
    [
      "hideHostPaths",
      { hideHostPaths: false },
      (r) => {
        // The agent is the namespace's init itself, so no process inside holds bubblewrap's
        // arguments to show.
        expect(r.dataDirInProc).toBe("failed");
        expect(r.hostCgroupPath).toMatch(/^found:.*aiem-/);
      },
    ],
  ];
  it.each(rows)("with %s off, the checks it guards see the difference", async (name, off, expectation) => {
    const sandbox = await sandboxWith(`off-${name.replace(/[^a-z]+/gi, "-")}`, off);
    expectation(await checks(sandbox), sandbox);
  });

  it("with cgroups and storage images off, the process, CPU, storage and memory checks see the difference", async () => {
    const sandbox = await sandboxWith("off-limits", {}, { useCgroups: false, useStorageImages: false });
    const r = await checks(sandbox);
    expect(r.processes).toBe("started 200");
    // The CPU share of an unlimited sandbox depends on how busy the machine is, so only the
    // absence of a quota is asserted here.
    expect(sandbox.limits.cpu.mechanism).toBe("none");
    expect(r.storage).toBe("wrote 64 MiB");
    // Only the per-process address-space limit is left: an allocation fails, nothing is killed.
    const hog = await run(sandbox.client, "python3", ["-c", "a=[]\nwhile True: a.append(bytearray(1<<20))"]);
    expect([hog.exitCode, hog.signal]).not.toEqual([137, 9]);
  });
});
