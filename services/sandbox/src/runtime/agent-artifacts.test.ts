// The agent as the runtime builds and caches it, started outside any sandbox: it serves every
// call, and the runtime's options refuse an agent setting that names no agent.
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentArtifacts, prepareAgentArtifacts } from "./agent-artifacts.js";
import { connectAgent } from "./agent-client.js";
import { SandboxRuntimeError, createLocalSandboxRuntime } from "./local-runtime.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-artifacts-test-"));
const cacheDir = path.join(dir, "cache");
let artifacts: AgentArtifacts;
const children: ChildProcess[] = [];

beforeAll(async () => {
  artifacts = await prepareAgentArtifacts(cacheDir);
}, 120_000);

afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Starts the agent unconfined on a root of its own; resolves with its socket once it said ready. */
function startAgent(name: string): Promise<string> {
  const root = path.join(dir, name);
  fs.mkdirSync(root);
  const socket = path.join(root, ".agent.sock");
  const config = JSON.stringify({ socket, root, version: "test", ensureDirs: true });
  const child = spawn(artifacts.agentPath!, [], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", AIEM_AGENT_CONFIG: config },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes("ready\n")) resolve(socket);
    });
    child.once("exit", (code) => reject(new Error(`the agent exited (${code}): ${stderr}`)));
  });
}

describe("agent artifacts", () => {
  it("builds the agent into the cache, as one static binary", () => {
    expect(artifacts.agentUnavailableReason).toBeUndefined();
    expect(path.dirname(artifacts.agentPath!)).toBe(cacheDir);
    // A static executable has no program interpreter to load it.
    const header = fs.readFileSync(artifacts.agentPath!).subarray(0, 4096);
    expect(header.subarray(0, 4).toString("latin1")).toBe("\x7fELF");
    expect(header.includes(Buffer.from("ld-linux"))).toBe(false);
  });

  it("serves health, files and processes", async () => {
    const socket = await startAgent("served");
    const { client, close } = connectAgent(socket);
    try {
      expect((await client.health({})).version).toBe(artifacts.version);
      await client.writeFile({ path: "/workspace/hello.txt", content: Buffer.from("hello") });
      expect(Buffer.from((await client.readFile({ path: "/workspace/hello.txt" })).content).toString()).toBe("hello");
      await client.startProcess({ processId: "p1", command: "/bin/sh", args: ["-c", "echo hello; exit 3"] });
      const { exit } = await client.waitProcess({ processId: "p1" });
      expect(exit?.exitCode).toBe(3);
      // The exit can come before the pipes drained: the stream's end marker says the log is whole.
      for await (const message of client.streamOutput({ processId: "p1" })) if (message.chunk?.end) break;
      const output = await client.readOutput({ processId: "p1" });
      expect(Buffer.from(output.data).toString()).toContain("hello");
    } finally {
      close();
    }
  });

  it("refuses an AIEM_SANDBOX_AGENT that names no agent when the runtime is made, naming the setting", () => {
    const before = process.env.AIEM_SANDBOX_AGENT;
    try {
      for (const value of ["node", "nativ"]) {
        process.env.AIEM_SANDBOX_AGENT = value;
        let error: unknown;
        try {
          createLocalSandboxRuntime({ dataDir: path.join(dir, "refused"), cacheDir });
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(SandboxRuntimeError);
        expect((error as SandboxRuntimeError).code).toBe("invalid-argument");
        expect((error as Error).message).toContain(`AIEM_SANDBOX_AGENT="${value}"`);
      }
      process.env.AIEM_SANDBOX_AGENT = "native";
      expect(createLocalSandboxRuntime({ dataDir: path.join(dir, "accepted"), cacheDir }).dataDir).toBe(
        path.join(dir, "accepted"),
      );
    } finally {
      if (before === undefined) delete process.env.AIEM_SANDBOX_AGENT;
      else process.env.AIEM_SANDBOX_AGENT = before;
    }
  });
});
