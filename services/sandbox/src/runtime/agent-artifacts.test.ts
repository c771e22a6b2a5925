// The agent as the runtime starts it, outside any sandbox: from its startup snapshot and from
// the plain bundle (the way back when no snapshot can be built). Both must serve every call,
// including the ones that load the built-in modules the snapshot leaves for first use.
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentArtifacts, prepareAgentArtifacts } from "./agent-artifacts.js";
import { connectAgent } from "./agent-client.js";

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
function startAgent(name: string, args: string[]): Promise<string> {
  const root = path.join(dir, name);
  fs.mkdirSync(root);
  const socket = path.join(root, ".agent.sock");
  const config = JSON.stringify({ socket, root, version: "test", helperPath: artifacts.helperPath, ensureDirs: true });
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", AIEM_AGENT_CONFIG: config },
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
  it("builds a startup snapshot that names no host path of the cache", () => {
    expect(artifacts.snapshotUnavailableReason).toBeUndefined();
    expect(artifacts.snapshotPath).toBeDefined();
    const blob = fs.readFileSync(artifacts.snapshotPath!);
    expect(blob.includes(Buffer.from(dir))).toBe(false);
  });

  for (const [label, args] of [
    ["from the startup snapshot", () => ["--snapshot-blob", artifacts.snapshotPath!]],
    ["from the plain bundle", () => [artifacts.bundlePath]],
  ] as const) {
    it(`serves health, files and processes ${label}`, async () => {
      const socket = await startAgent(label.replace(/\W+/g, "-"), args());
      const { client, close } = connectAgent(socket);
      try {
        expect((await client.health({})).version).toBe(artifacts.version);
        await client.writeFile({ path: "/workspace/hello.txt", content: Buffer.from("hello") });
        expect(Buffer.from((await client.readFile({ path: "/workspace/hello.txt" })).content).toString()).toBe("hello");
        // Spawning loads child_process, which the snapshot leaves for first use.
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
  }
});
