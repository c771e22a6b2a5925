// The ReadFile-message fallback against a real agent on a unix socket, serving a host directory as
// the sandbox root, with parts of 64 KiB so that a small file takes several.
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@aiem/kit/logger";
import { binaryContent } from "@aiem/kit/testing";
import type { AccessDeps, SandboxCall } from "./access.js";
import { type MessagePart, readByMessages } from "./read-by-messages.js";
import { type AgentConnection, connectAgent } from "./runtime/agent-client.js";
import { buildGoAgent } from "./runtime/go-agent-build.js";
import type { SandboxHandle } from "./runtime/index.js";

const PART = 64 << 10;
const base = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-read-messages-"));
const root = path.join(base, "root");
let agent: ChildProcess | undefined;
let conn: AgentConnection;
let handle: SandboxHandle;
const call = { row: { name: "workspaces/w/sandboxEngines/s" } } as unknown as SandboxCall;
const deps = {
  context: { logger: createLogger({ level: "error", write: () => undefined }) },
  lifecycle: { handle: () => handle },
} as unknown as AccessDeps;

beforeAll(async () => {
  fs.mkdirSync(path.join(root, "workspace"), { recursive: true });
  const built = await buildGoAgent();
  if (!built.path) throw new Error(built.reason);
  const socket = path.join(base, "agent.sock");
  const child = spawn(built.path, [], {
    env: { AIEM_AGENT_CONFIG: JSON.stringify({ socket, root, version: "test", maxReadBytes: PART }) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  agent = child;
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`the agent exited (${code})`)));
  });
  conn = connectAgent(socket);
  handle = { client: conn.client, files: conn.files } as unknown as SandboxHandle;
});

afterAll(async () => {
  conn?.close();
  agent?.kill("SIGKILL");
  fs.rmSync(base, { recursive: true, force: true });
});

async function all(file: string): Promise<MessagePart[]> {
  const parts: MessagePart[] = [];
  for await (const part of readByMessages(deps, call, handle, file)) parts.push(part);
  return parts;
}

describe("readByMessages", () => {
  it("reads a file of several parts in order, byte for byte, describing it on the first part only", async () => {
    const content = binaryContent(3 * PART + 1234, 11);
    fs.writeFileSync(path.join(root, "workspace", "several.bin"), content);
    const parts = await all("/workspace/several.bin");
    expect(parts.map((p) => p.data.length)).toEqual([PART, PART, PART, 1234]);
    expect(Buffer.concat(parts.map((p) => p.data))).toEqual(content);
    expect(parts[0]!.fileInfo?.size).toBe(BigInt(content.length));
    expect(parts.slice(1).every((p) => p.fileInfo === undefined)).toBe(true);
    expect(new Set(parts.map((p) => p.size))).toEqual(new Set([content.length]));
  });

  it("gives an empty file as one empty part with its description", async () => {
    fs.writeFileSync(path.join(root, "workspace", "empty"), "");
    const parts = await all("/workspace/empty");
    expect(parts).toHaveLength(1);
    expect(parts[0]!.data.length).toBe(0);
    expect(parts[0]!.fileInfo?.path).toBe("/workspace/empty");
  });

  it("stops at the size the file had at the first part, and fails when it shrinks meanwhile", async () => {
    const file = path.join(root, "workspace", "changing.bin");
    const content = binaryContent(4 * PART, 11);
    fs.writeFileSync(file, content);
    const grown: Buffer[] = [];
    for await (const part of readByMessages(deps, call, handle, "/workspace/changing.bin")) {
      if (grown.length === 0) fs.appendFileSync(file, binaryContent(PART, 11));
      grown.push(Buffer.from(part.data));
    }
    expect(Buffer.concat(grown)).toEqual(content);

    fs.writeFileSync(file, content);
    let error: unknown;
    try {
      let first = true;
      for await (const _ of readByMessages(deps, call, handle, "/workspace/changing.bin")) {
        if (first) fs.truncateSync(file, PART + 10);
        first = false;
      }
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.Aborted);
    expect((error as ConnectError).rawMessage).toContain("shrank");
  });

  it("answers the agent's errors as the API's, and lets a caller stop early", async () => {
    let error: unknown;
    try {
      await all("/workspace/missing");
    } catch (e) {
      error = e;
    }
    expect((error as ConnectError).code).toBe(Code.NotFound);

    fs.writeFileSync(path.join(root, "workspace", "early.bin"), binaryContent(4 * PART, 11));
    for await (const part of readByMessages(deps, call, handle, "/workspace/early.bin")) {
      expect(part.data.length).toBe(PART);
      break;
    }
  });
});
