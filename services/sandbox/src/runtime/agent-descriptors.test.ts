// The service's side of file transfers through the agent's descriptors: finding the agent's host
// process, the checks on every open, the reads and writes; then the same in real sandboxes,
// with the fall-back to the agent's byte routes.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as http2 from "node:http2";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connectAgent } from "./agent-client.js";
import { type AgentFiles, type AgentRequest, createAgentFiles, type RawRead } from "./agent-files.js";
import {
  DescriptorUnusable,
  descriptorBody,
  fillDescriptor,
  findAgentProcess,
  openAgentDescriptor,
  readDescriptorInto,
} from "./agent-descriptors.js";
import { processStartTime } from "./adopted-sandboxes.js";
import { findBwrap } from "./bwrap.js";
import { type LocalSandboxRuntime, type SandboxHandle, createLocalSandboxRuntime } from "./local-runtime.js";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-descriptors-test-"));
const children: ChildProcess[] = [];

/** Writes `content` as the whole file at `file`, over what is there. */
function writeWhole(files: AgentFiles, file: string, content: Uint8Array) {
  return files.write(file, Readable.from([content], { objectMode: false }), { createParents: false, overwrite: true });
}

/** A read's body, gathered. */
async function bodyOf(read: RawRead): Promise<Buffer> {
  return Buffer.concat(await read.body.toArray());
}

/** A shell that holds `file` open as its descriptor 7 (read, or append with `>>`) and waits. */
async function holder(script: string): Promise<ChildProcess> {
  const child = spawn("sh", ["-c", `${script}; echo ready; exec sleep 30`], { stdio: ["ignore", "pipe", "ignore"] });
  children.push(child);
  await new Promise<void>((resolve) => child.stdout!.once("data", () => resolve()));
  return child;
}

function idOf(file: string): string {
  const st = fs.statSync(file);
  return `${st.dev}:${st.ino}`;
}

function codeOf(error: unknown): Code | undefined {
  return error instanceof ConnectError ? error.code : undefined;
}

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe("finding the agent", () => {
  it("finds a process under the root by its pid in its namespace: children of any thread, and grandchildren", async () => {
    const child = await holder(`sleep 30 & echo $! > ${path.join(scratch, "grandchild")}`);
    expect(findAgentProcess(process.pid, child.pid!)).toEqual({
      pid: child.pid,
      startTime: processStartTime(child.pid!),
    });
    const grandchild = Number(fs.readFileSync(path.join(scratch, "grandchild"), "utf8"));
    expect(findAgentProcess(child.pid!, grandchild)?.pid).toBe(grandchild);
    // A child started from a worker thread is listed under that thread, and found too.
    const { Worker } = await import("node:worker_threads");
    const fromThread = await new Promise<number>((resolve, reject) => {
      const worker = new Worker(
        `const { spawn } = require("node:child_process"); const { parentPort } = require("node:worker_threads");
         const c = spawn("sleep", ["30"], { detached: false, stdio: "ignore" }); parentPort.postMessage(c.pid);`,
        { eval: true },
      );
      worker.once("message", (pid: number) => resolve(pid));
      worker.once("error", reject);
    });
    expect(findAgentProcess(process.pid, fromThread)?.pid).toBe(fromThread);
    process.kill(fromThread, "SIGKILL");
    // Not under the root: not found, however it is named.
    expect(findAgentProcess(grandchild, child.pid!)).toBeUndefined();
    process.kill(grandchild, "SIGKILL");
  });
});

describe("opening the agent's descriptor", () => {
  it("opens the very file the agent holds, with the access asked for", async () => {
    const file = path.join(scratch, "held");
    fs.writeFileSync(file, "held bytes");
    const child = await holder(`exec 7<'${file}'`);
    const agent = findAgentProcess(process.pid, child.pid!)!;
    const fd = openAgentDescriptor(agent, 7, fs.constants.O_RDONLY, idOf(file));
    try {
      expect(fs.readFileSync(fd, "utf8")).toBe("held bytes");
    } finally {
      fs.closeSync(fd);
    }
  });

  it("refuses another file than the one named, anything but a regular file, and a process that is not the agent any more", async () => {
    const file = path.join(scratch, "named");
    const other = path.join(scratch, "other");
    fs.writeFileSync(file, "a");
    fs.writeFileSync(other, "b");
    const child = await holder(`exec 7<'${file}'`);
    const agent = findAgentProcess(process.pid, child.pid!)!;
    expect(() => openAgentDescriptor(agent, 7, fs.constants.O_RDONLY, idOf(other))).toThrow(DescriptorUnusable);
    // Its standard input is /dev/null: a device, even when named by its own identity.
    const devNull = fs.statSync("/dev/null");
    expect(() => openAgentDescriptor(agent, 0, fs.constants.O_RDONLY, `${devNull.dev}:${devNull.ino}`)).toThrow(
      DescriptorUnusable,
    );
    // A pid whose start time is not the agent's: another process now has it.
    expect(() => openAgentDescriptor({ pid: agent.pid, startTime: "1" }, 7, fs.constants.O_RDONLY, idOf(file))).toThrow(
      DescriptorUnusable,
    );
    // Writing: only an empty file of the process's own (the one the agent made for the write).
    const child2 = await holder(`exec 7>>'${other}'`);
    const writer = findAgentProcess(process.pid, child2.pid!)!;
    expect(() => openAgentDescriptor(writer, 7, fs.constants.O_WRONLY, idOf(other))).toThrow(
      /not a new file of its own/,
    );
    fs.truncateSync(other, 0);
    fs.closeSync(openAgentDescriptor(writer, 7, fs.constants.O_WRONLY, idOf(other)));
    // A descriptor the process does not have.
    expect(() => openAgentDescriptor(agent, 99, fs.constants.O_RDONLY, idOf(file))).toThrow(DescriptorUnusable);
  });
});

describe("moving the bytes", () => {
  it("reads exactly the size the file had, and fails should it shrink meanwhile", async () => {
    const file = path.join(scratch, "shrinks");
    const content = randomBytes(3 << 20);
    fs.writeFileSync(file, content);
    const whole = Buffer.concat(await descriptorBody(fs.openSync(file, "r"), content.length, "/shrinks").toArray());
    expect(whole.equals(content)).toBe(true);

    const body = descriptorBody(fs.openSync(file, "r"), content.length, "/shrinks");
    fs.truncateSync(file, 1 << 20);
    const error = await body.toArray().catch((e: unknown) => e);
    expect(codeOf(error)).toBe(Code.Aborted);
    expect(String(error)).toContain("/shrinks: shrank while it was being read");
  });

  it("reads a file that gives no size (as /proc's) to its end", async () => {
    const read = await text(descriptorBody(fs.openSync("/proc/self/status", "r"), 0, "/proc/self/status"));
    expect(read).toContain("NSpid:");
  });

  it("reads a whole file straight into the caller's buffer", async () => {
    const file = path.join(scratch, "whole");
    const content = randomBytes((9 << 20) + 5);
    fs.writeFileSync(file, content);
    const fd = fs.openSync(file, "r");
    try {
      const target = Buffer.alloc(content.length);
      expect(await readDescriptorInto(fd, target)).toBe(content.length);
      expect(target.equals(content)).toBe(true);
    } finally {
      fs.closeSync(fd);
    }
  });

  it("writes a body whole, refuses one past the limit without closing it, and stops when told to", async () => {
    const file = path.join(scratch, "written");
    const content = randomBytes((2 << 20) + 17);
    const fd = fs.openSync(file, "w");
    try {
      const pieces = async function* () {
        for (let at = 0; at < content.length; at += 100_000) yield content.subarray(at, at + 100_000);
      };
      expect(await fillDescriptor(fd, pieces(), "/written", undefined, undefined)).toBe(content.length);
      expect(fs.readFileSync(file).equals(content)).toBe(true);

      const body = Readable.from([content.subarray(0, 1 << 20), content.subarray(1 << 20)], { objectMode: false });
      const refused = await fillDescriptor(fd, body, "/written", 1 << 20, undefined).catch((e: unknown) => e);
      expect(codeOf(refused)).toBe(Code.ResourceExhausted);
      expect(String(refused)).toContain(`/written: larger than the sandbox's file size limit of ${1 << 20} bytes`);
      // Its owner (an HTTP request still to be answered) decides what becomes of the rest.
      expect(body.destroyed).toBe(false);

      const stop = new AbortController();
      stop.abort(new ConnectError("the client went away", Code.Canceled));
      expect(
        codeOf(await fillDescriptor(fd, pieces(), "/written", undefined, stop.signal).catch((e: unknown) => e)),
      ).toBe(Code.Canceled);
    } finally {
      fs.closeSync(fd);
    }
  });
});

const bwrap = findBwrap();

describe.skipIf(!bwrap)("in real sandboxes", () => {
  // A directory of its own: the runtime opens it to the sandbox's uid, which a parent of 0700 would not.
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-descriptors-data-"));
  /** The sandbox's agent socket, for connections of the tests' own. */
  const agentSocket = path.join(dataDir, "sandboxes", "descriptors", "agent.sock");
  let runtime: LocalSandboxRuntime;
  let sandbox: SandboxHandle;

  beforeAll(async () => {
    runtime = createLocalSandboxRuntime({
      dataDir,
      cacheDir: path.join(os.tmpdir(), "aiem-agent-cache-test"),
      outputLimitBytes: 1 << 20,
    });
    sandbox = await runtime.start("descriptors", { limits: { memoryBytes: 256 << 20 } });
  });

  afterAll(async () => {
    await runtime?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  async function listing(dir: string): Promise<string[]> {
    return (await sandbox.client.listDirectory({ path: dir })).entries.map((e) => e.path.slice(dir.length + 1));
  }

  it("writes and reads a file through the agent's descriptors, byte for byte, with the agent's checks", async () => {
    const content = randomBytes((5 << 20) + 3);
    const info = await sandbox.files.write("/workspace/through-fd", Readable.from([content], { objectMode: false }), {
      createParents: false,
      overwrite: true,
      mode: 0o640,
    });
    expect(info).toMatchObject({ path: "/workspace/through-fd", size: BigInt(content.length), mode: "0640" });
    const read = await sandbox.files.read("/workspace/through-fd");
    // Only a read through a descriptor can fill the caller's buffer itself.
    expect(read.readAll).toBeDefined();
    expect(read.size).toBe(content.length);
    const target = Buffer.alloc(read.size);
    expect(await read.readAll!(target)).toBe(content.length);
    expect(target.equals(content)).toBe(true);
    const streamed = Buffer.concat(await (await sandbox.files.read("/workspace/through-fd")).body.toArray());
    expect(streamed.equals(content)).toBe(true);

    // The agent still resolves and checks the path.
    expect(codeOf(await sandbox.files.read("/workspace").catch((e: unknown) => e))).toBe(Code.FailedPrecondition);
    expect(codeOf(await sandbox.files.read("/workspace/none").catch((e: unknown) => e))).toBe(Code.NotFound);
    expect(
      codeOf(
        await sandbox.files
          .write("/workspace/through-fd", Readable.from([content]), { createParents: false, overwrite: false })
          .catch((e: unknown) => e),
      ),
    ).toBe(Code.AlreadyExists);
    expect(await listing("/workspace")).toEqual(expect.not.arrayContaining([expect.stringMatching(/^\.aiem-tmp-/)]));
  });

  it("keeps nothing of a write whose body broke off", async () => {
    const broken = new Readable({ read() {} });
    // The break may come before the write reads the body (a busy machine): the write still meets
    // it then, as the stream's error; this listener only keeps it from being reported as uncaught.
    broken.on("error", () => undefined);
    broken.push(randomBytes(2 << 20));
    setTimeout(() => broken.destroy(new Error("the client's connection broke")), 50);
    const error = await sandbox.files
      .write("/workspace/broken", broken, { createParents: false, overwrite: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    // The agent has dropped its temporary file by the time the write fails.
    const names = await listing("/workspace");
    expect(names).not.toContain("broken");
    expect(names.filter((n) => n.startsWith(".aiem-tmp-"))).toEqual([]);
  });

  it("falls back to the byte routes for good with an agent that has no descriptor routes (one started before them)", async () => {
    // Such an agent answers the descriptor routes as any route it does not know.
    const session = http2.connect("http://agent", { createConnection: () => net.createConnection(agentSocket) });
    const asked: string[] = [];
    const request: AgentRequest = async (method, route, headers, options) => {
      asked.push(route);
      return session.request(
        { ...headers, ":method": method, ":path": route.replace("-descriptor?", "-descriptor-unknown?") },
        options,
      );
    };
    const files = createAgentFiles(request, sandbox.pid);
    try {
      const content = randomBytes(1 << 20);
      await writeWhole(files, "/workspace/older-agent", content);
      const read = await files.read("/workspace/older-agent");
      expect(read.readAll).toBeUndefined();
      expect((await bodyOf(read)).equals(content)).toBe(true);
      // Asked once; every transfer after that goes straight to the byte routes.
      expect(asked.filter((route) => route.includes("-descriptor?"))).toHaveLength(1);
      expect(asked.length).toBeGreaterThan(1);
    } finally {
      session.close();
    }
  });

  it("falls back to the agent's byte routes where its descriptors cannot be opened", async () => {
    // A process with no children is no sandbox: the agent is not found under it.
    const stranger = await holder("true");
    const connection = connectAgent(agentSocket, { sandboxPid: stranger.pid! });
    try {
      const content = randomBytes(1 << 20);
      await writeWhole(connection.files, "/workspace/fallback", content);
      const read = await connection.files.read("/workspace/fallback");
      expect(read.readAll).toBeUndefined();
      expect((await bodyOf(read)).equals(content)).toBe(true);
    } finally {
      connection.close();
    }
  });
});

describe.skipIf(!bwrap)("where files are limited per file (RLIMIT_FSIZE)", () => {
  it("refuses a write through the descriptor past the sandbox's file size limit, which the service's own writes do not have", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-descriptors-limited-"));
    const runtime = createLocalSandboxRuntime({
      dataDir,
      cacheDir: path.join(os.tmpdir(), "aiem-agent-cache-test"),
      useCgroups: false,
      useStorageImages: false,
    });
    try {
      const sandbox = await runtime.start("limited", { limits: { storageBytes: 4 << 20 } });
      const error = await sandbox.files
        .write("/workspace/big", Readable.from([randomBytes(6 << 20)], { objectMode: false }), {
          createParents: false,
          overwrite: true,
        })
        .catch((e: unknown) => e);
      expect(codeOf(error)).toBe(Code.ResourceExhausted);
      const names = (await sandbox.client.listDirectory({ path: "/workspace" })).entries.map((e) => e.path);
      expect(names).toEqual([]);
      const small = randomBytes(1 << 20);
      await writeWhole(sandbox.files, "/workspace/small", small);
      const read = await sandbox.files.read("/workspace/small");
      expect(read.readAll).toBeDefined();
      expect((await bodyOf(read)).equals(small)).toBe(true);
    } finally {
      await runtime.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
