// A sandbox attacking the channel between the service and its agent, as a hostile user would:
// point the service at another sandbox's agent or at any host socket, open a debugger in its own
// agent, trace it, or read its descriptors and memory. Real sandboxes, every layer on.
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { OutputStream } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentClient, connectAgent } from "./agent-client.js";
import { prepareAgentArtifacts } from "./agent-artifacts.js";
import { loadPeerCredentials } from "./agent-peer.js";
import { processStartTime } from "./adopted-sandboxes.js";
import { findBwrap } from "./bwrap.js";
import { type LocalSandboxRuntime, SandboxRuntimeError, createLocalSandboxRuntime } from "./local-runtime.js";

const bwrap = findBwrap();
const cacheDir = path.join(os.tmpdir(), "aiem-agent-cache-test");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-takeover-test-"));
const registry = path.join(dataDir, "uid-ranges");

let counter = 0;
async function run(client: AgentClient, script: string) {
  const processId = `p${++counter}`;
  await client.startProcess({ processId, command: "sh", args: ["-c", script] });
  const { exit } = await client.waitProcess({ processId, waitForOutput: true });
  const out = await client.readOutput({ processId, stream: OutputStream.COMBINED });
  return { exitCode: exit!.exitCode, output: Buffer.from(out.data).toString() };
}

async function python(client: AgentClient, code: string) {
  await client.writeFile({ path: "/tmp/attack.py", content: Buffer.from(code), overwrite: true });
  return run(client, "python3 /tmp/attack.py");
}

/**
 * The agent's pid as its sandbox sees it: the process running /.aiem/agent (bubblewrap's init,
 * pid 1, names it in its arguments too).
 */
const FIND_AGENT = `
import os
def agent_pid():
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                argv = open(f"/proc/{p}/cmdline", "rb").read().split(b"\\0")
                if b"bwrap" not in argv[0] and b"/.aiem/agent" in argv:
                    return int(p)
            except OSError:
                pass
`;

describe.skipIf(!bwrap || process.getuid?.() !== 0)("a sandbox attacking its agent's channel", () => {
  const runtimes: LocalSandboxRuntime[] = [];
  const runtime = () => {
    const r = createLocalSandboxRuntime({ dataDir, cacheDir, uidRangeRegistry: registry, keepRunning: true });
    runtimes.push(r);
    return r;
  };
  // A host socket a sandbox might name: nothing may ever connect to it.
  const hostSocket = path.join(dataDir, "host.sock");
  let hostConnections = 0;
  let hostServer: net.Server;

  beforeAll(async () => {
    hostServer = net.createServer((c) => {
      hostConnections++;
      c.destroy();
    });
    await new Promise<void>((resolve) => hostServer.listen(hostSocket, resolve));
  });

  afterAll(async () => {
    const last = runtime();
    for (const id of ["a", "b", "old"]) await last.destroy(id).catch(() => undefined);
    await Promise.all(runtimes.map((r) => r.close({ stopSandboxes: true })));
    hostServer.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("keeps every call on sandbox A in A after A names B's agent and a host socket and its session is broken", async () => {
    const first = runtime();
    const a = await first.start("a");
    const b = await first.start("b");
    await b.client.writeFile({ path: "/workspace/secret-of-b", content: Buffer.from("b's secret") });
    const socketOfB = path.join(dataDir, "sandboxes", "b", "agent.sock");
    // Every place the old layout had, and the agent's own directory: links to B's agent and to
    // the host socket, as absolute paths (resolved on the host, were the service to follow them).
    const planted = await run(
      a.client,
      [
        "mkdir -p /.aiem/run /run",
        `ln -sfn ${socketOfB} /.aiem/run/agent.sock`,
        `ln -sfn ${hostSocket} /.aiem/run/host.sock`,
        `ln -sfn ${socketOfB} /run/agent.sock`,
        `ln -sfn ${socketOfB} /agent.sock`,
        "readlink /.aiem/run/agent.sock",
      ].join(" && "),
    );
    expect(planted.output.trim()).toBe(socketOfB);
    // Break A's session: the debugger way (SIGUSR1 to the agent) ...
    const usr1 = await python(
      a.client,
      `${FIND_AGENT}
import signal, socket, time
pid = agent_pid()
os.kill(pid, signal.SIGUSR1)
time.sleep(0.5)
s = socket.socket()
try:
    s.connect(("127.0.0.1", 9229))
    print("inspector open")
except OSError as e:
    print("inspector closed:", e.strerror)
`,
    );
    expect(usr1.output).toMatch(/^inspector closed: Connection refused/);
    // ... and the service's restart: a new runtime adopts both and connects afresh.
    await first.close();
    const second = runtime();
    const adoptedA = await second.start("a");
    const adoptedB = await second.start("b");
    expect([adoptedA.adopted, adoptedB.adopted]).toEqual([true, true]);
    expect(adoptedA.agentPid).toBe(a.agentPid);

    await adoptedA.client.writeFile({ path: "/workspace/written-through-a", content: Buffer.from("a") });
    const inB = (await adoptedB.client.listDirectory({ path: "/workspace" })).entries.map((e) => path.basename(e.path));
    expect(inB).toEqual(["secret-of-b"]);
    const readOfB = await adoptedA.client.readFile({ path: "/workspace/secret-of-b" }).catch((e: unknown) => e);
    expect(ConnectError.from(readOfB).code).toBe(Code.NotFound);
    const ranIn = await run(adoptedA.client, "ls /workspace");
    expect(ranIn.output).toBe("written-through-a\n");
    // The descriptor routes (the bytes moved by the service itself) stay in A too.
    const read = await adoptedA.files.read("/workspace/written-through-a");
    expect(read.readAll).toBeDefined();
    expect(Buffer.concat(await read.body.toArray()).toString()).toBe("a");
    expect(hostConnections).toBe(0);
  });

  it("lets no process of the sandbox trace the agent, steal its descriptors or read its memory or environment", async () => {
    const sandbox = await runtime().start("a");
    const result = await python(
      sandbox.client,
      `${FIND_AGENT}
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
pid = agent_pid()
out = {"uid": int(open(f"/proc/{pid}/status").read().split("Uid:")[1].split()[1]) == os.getuid(), "pid": pid}
def attempt(name, f):
    try:
        f()
        out[name] = "ok"
    except OSError as e:
        out[name] = "failed:" + e.strerror
attempt("fd", lambda: [os.readlink(f"/proc/{pid}/fd/{n}") for n in os.listdir(f"/proc/{pid}/fd")])
attempt("environ", lambda: open(f"/proc/{pid}/environ", "rb").read())
attempt("mem", lambda: open(f"/proc/{pid}/mem", "rb"))
attempt("maps", lambda: open(f"/proc/{pid}/maps", "rb").read())
out["ptrace"] = "ok" if libc.syscall(101, 16, pid, 0, 0) == 0 else "failed:" + os.strerror(ctypes.get_errno())
pidfd = libc.syscall(434, pid, 0)  # pidfd_open
if pidfd < 0:
    out["pidfd_getfd"] = "failed:" + os.strerror(ctypes.get_errno())
else:
    got = [libc.syscall(438, pidfd, n, 0) for n in range(64)]  # pidfd_getfd of every low descriptor
    out["pidfd_getfd"] = "ok" if any(g >= 0 for g in got) else "failed:" + os.strerror(ctypes.get_errno())
print(json.dumps(out))
`,
    );
    expect(result.exitCode, result.output).toBe(0);
    const seen = JSON.parse(result.output) as Record<string, string | boolean>;
    // Nor bubblewrap's init (pid 1), which holds the agent's output and the host's log of it.
    const init = await python(
      sandbox.client,
      `import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(*args):
    return "ok" if libc.syscall(*args) >= 0 else "failed:" + os.strerror(ctypes.get_errno())
out = {"ptrace": call(101, 16, 1, 0, 0), "pidfd_open": call(434, 1, 0)}
buf = ctypes.create_string_buffer(16)
iov = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 16)
out["process_vm_writev"] = call(311, 1, iov, 1, iov, 1, 0)
try:
    open("/proc/1/mem", "r+b")
    out["mem"] = "ok"
except OSError as e:
    out["mem"] = "failed:" + e.strerror
print(json.dumps(out))
`,
    );
    for (const [key, value] of Object.entries(JSON.parse(init.output) as Record<string, string>)) {
      expect([key, value]).toEqual([key, expect.stringMatching(/^failed:(Operation not permitted|Permission denied)/)]);
    }
    // Same uid as the agent: only the agent being undumpable stands in the way. (The agent is the
    // namespace's init, pid 1.)
    expect(seen.uid).toBe(true);
    expect(seen.pid).toBeGreaterThanOrEqual(1);
    for (const key of ["fd", "environ", "mem", "maps", "ptrace", "pidfd_getfd"]) {
      expect([key, seen[key]]).toEqual([
        key,
        expect.stringMatching(/^failed:(Permission denied|Operation not permitted)/),
      ]);
    }
    // The agent is whole and its descriptors still serve the service (it is root on the host).
    expect((await sandbox.client.health({})).version).toBeTruthy();
    await sandbox.client.writeFile({ path: "/workspace/after", content: Buffer.from("still") });
    const read = await sandbox.files.read("/workspace/after");
    expect(read.readAll).toBeDefined();
    expect(Buffer.concat(await read.body.toArray()).toString()).toBe("still");
  });

  it("refuses a connection to a socket served by anyone but the agent, before anything is sent on it", async () => {
    const artifacts = await prepareAgentArtifacts(cacheDir);
    const read = loadPeerCredentials(artifacts.peerCredentialsPath!);
    let bytes = 0;
    const impostor = net.createServer((c) => c.on("data", (d: Buffer) => (bytes += d.length)));
    const file = path.join(dataDir, "impostor.sock");
    await new Promise<void>((resolve) => impostor.listen(file, resolve));
    try {
      // This process listens, but the identity expected is another's (the agent's).
      const other = { pid: 1, startTime: processStartTime(1)!, uid: 0 };
      const connection = connectAgent(file, { agent: { identity: other, read } });
      const error = await connection.client.health({}).catch((e: unknown) => e);
      connection.close();
      expect(ConnectError.from(error).code).toBe(Code.Unavailable);
      expect(ConnectError.from(error).rawMessage).toMatch(
        new RegExp(`served by pid ${process.pid} uid 0, not by the agent \\(pid 1 uid 0\\)`),
      );
      await new Promise((r) => setTimeout(r, 100));
      expect(bytes).toBe(0);
    } finally {
      impostor.close();
    }
  });

  it("does not adopt a sandbox left running by a version whose agent it cannot check, and says so", async () => {
    const first = runtime();
    const old = await first.start("old");
    await first.close();
    // What an earlier version recorded: no agent, no socket of the host's.
    const recordPath = path.join(dataDir, "sandboxes", "old", "sandbox.json");
    const { agent: _agent, ...record } = JSON.parse(fs.readFileSync(recordPath, "utf8")) as Record<string, unknown>;
    fs.writeFileSync(recordPath, JSON.stringify(record));
    fs.rmSync(path.join(dataDir, "sandboxes", "old", "agent.sock"));
    const second = runtime();
    const error = await second.start("old").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SandboxRuntimeError);
    expect((error as SandboxRuntimeError).code).toBe("agent-unverifiable");
    expect((error as Error).message).toMatch(/earlier version of the service.*stopped and its processes ended/);
    const deadline = Date.now() + 5_000;
    while (processStartTime(old.pid) !== undefined && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(processStartTime(old.pid)).toBeUndefined();
    // Said once: the next start runs it afresh.
    const fresh = await second.start("old");
    expect(fresh.adopted).toBe(false);
  });
});
