// The agent's raw file routes through the real client (runtime/agent-files.ts) on a real unix
// socket, the agent serving a host directory as the sandbox root, with host files beside it.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as http2 from "node:http2";
import * as os from "node:os";
import * as path from "node:path";
import { Readable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentConnection, connectAgent } from "../runtime/agent-client.js";
import type { RawRead } from "../runtime/agent-files.js";
import { type AgentServer, listenAgent } from "./server.js";

const base = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-file-routes-"));
const root = path.join(base, "root");
const outside = path.join(base, "outside");
let agent: AgentServer;
let conn: AgentConnection;

async function code(work: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await work;
    return "ok";
  } catch (error) {
    if (error instanceof ConnectError) return error.code;
    throw error;
  }
}

async function drain(read: RawRead): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of read.body as AsyncIterable<Buffer>) parts.push(chunk);
  return Buffer.concat(parts);
}

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** Every byte value, in an order no filesystem could shorten. */
function binary(length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let x = 7;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

/** A source of `total` bytes in pieces of `piece`, made as they are asked for. */
function pieces(content: Buffer, piece: number): Readable {
  let at = 0;
  return new Readable({
    read() {
      this.push(at >= content.length ? null : content.subarray(at, (at += piece)));
    },
  });
}

beforeAll(async () => {
  fs.mkdirSync(path.join(root, "workspace"), { recursive: true });
  fs.mkdirSync(path.join(root, "usr", "bin"), { recursive: true });
  fs.mkdirSync(path.join(root, ".aiem"), { recursive: true });
  fs.mkdirSync(outside, { recursive: true });
  fs.writeFileSync(path.join(outside, "secret.txt"), "host secret");
  agent = await listenAgent(path.join(base, "agent.sock"), { version: "test", root });
  conn = connectAgent(path.join(base, "agent.sock"));
});

afterAll(async () => {
  conn?.close();
  await agent?.close();
  fs.rmSync(base, { recursive: true, force: true });
});

describe("raw file routes", () => {
  it("says it has them, and round-trips binary content of several HTTP/2 frames, byte for byte", async () => {
    expect(await conn.files.supported()).toBe(true);
    const content = binary(5 << 20);
    const info = await conn.files.write("/workspace/data.bin", pieces(content, 100_000), {
      createParents: false,
      overwrite: false,
      mode: 0o640,
    });
    expect(info).toMatchObject({ path: "/workspace/data.bin", size: BigInt(content.length), mode: "0640" });
    expect(sha(fs.readFileSync(path.join(root, "workspace", "data.bin")))).toBe(sha(content));
    const read = await conn.files.read("/workspace/data.bin");
    expect(read.size).toBe(content.length);
    expect(read.fileInfo).toMatchObject({ path: "/workspace/data.bin", size: BigInt(content.length) });
    expect(sha(await drain(read))).toBe(sha(content));
  });

  it("keeps WriteFile's rules: overwrite, parents, empty files, directories", async () => {
    await conn.files.write("/workspace/once", pieces(Buffer.from("one"), 1), {
      createParents: false,
      overwrite: false,
    });
    expect(
      await code(
        conn.files.write("/workspace/once", pieces(Buffer.from("two"), 1), { createParents: false, overwrite: false }),
      ),
    ).toBe(Code.AlreadyExists);
    expect(fs.readFileSync(path.join(root, "workspace", "once"), "utf8")).toBe("one");
    expect(
      await code(
        conn.files.write("/workspace/no/such", pieces(Buffer.alloc(0), 1), { createParents: false, overwrite: true }),
      ),
    ).toBe(Code.NotFound);
    const empty = await conn.files.write("/workspace/a/b/empty", pieces(Buffer.alloc(0), 1), {
      createParents: true,
      overwrite: true,
    });
    expect(empty?.size).toBe(0n);
    const read = await conn.files.read("/workspace/a/b/empty");
    expect(read.size).toBe(0);
    expect((await drain(read)).length).toBe(0);
    expect(await code(conn.files.read("/workspace/a"))).toBe(Code.FailedPrecondition);
    expect(await code(conn.files.read("/workspace/missing"))).toBe(Code.NotFound);
    expect(
      await code(
        conn.files.write("/workspace/m", pieces(Buffer.from("x"), 1), {
          createParents: false,
          overwrite: true,
          mode: 0o10000,
        }),
      ),
    ).toBe(Code.InvalidArgument);
    // Refused before the body was read: the connection stays usable for the next call.
    const refused = binary(3 << 20);
    expect(
      await code(
        conn.files.write("/workspace/once", pieces(refused, 64 << 10), { createParents: false, overwrite: false }),
      ),
    ).toBe(Code.AlreadyExists);
    expect((await drain(await conn.files.read("/workspace/once"))).toString()).toBe("one");
  });

  it("resolves paths as ReadFile does: links stay inside the sandbox, the agent's directory and system directories are out of reach", async () => {
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "workspace", "abs-link"));
    fs.symlinkSync("../../../outside/secret.txt", path.join(root, "workspace", "rel-link"));
    fs.symlinkSync(outside, path.join(root, "workspace", "dir-link"));
    // An absolute target starts at the sandbox root, where there is no such file.
    expect(await code(conn.files.read("/workspace/abs-link"))).toBe(Code.NotFound);
    expect(await code(conn.files.read("/workspace/rel-link"))).toBe(Code.PermissionDenied);
    expect(
      await code(
        conn.files.write("/workspace/rel-link", pieces(Buffer.from("x"), 1), { createParents: false, overwrite: true }),
      ),
    ).toBe(Code.PermissionDenied);
    expect(
      await code(
        conn.files.write("/workspace/dir-link/new.txt", pieces(Buffer.from("x"), 1), {
          createParents: false,
          overwrite: true,
        }),
      ),
    ).not.toBe("ok");
    expect(await code(conn.files.read("/workspace/../../outside/secret.txt"))).toBe(Code.InvalidArgument);
    expect(await code(conn.files.read("/.aiem/anything"))).toBe(Code.PermissionDenied);
    expect(
      await code(
        conn.files.write("/usr/bin/tool", pieces(Buffer.from("x"), 1), { createParents: false, overwrite: true }),
      ),
    ).toBe(Code.PermissionDenied);
    expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("host secret");
    expect(fs.readdirSync(outside)).toEqual(["secret.txt"]);
  });

  it("keeps no partial file when the writer gives up, and leaves the file whole when a reader does", async () => {
    const content = binary(4 << 20);
    await conn.files.write("/workspace/kept", pieces(content, 1 << 20), { createParents: false, overwrite: true });
    const failing = new Readable({
      read() {
        this.destroy(new Error("the client went away"));
      },
    });
    failing.push(Buffer.alloc(1 << 20, 1));
    expect(
      await code(conn.files.write("/workspace/kept", failing, { createParents: false, overwrite: true })),
    ).not.toBe("ok");
    const abort = new AbortController();
    const read = await conn.files.read("/workspace/kept", { signal: abort.signal });
    abort.abort();
    await expect(drain(read)).rejects.toThrow();
    expect(sha(await drain(await conn.files.read("/workspace/kept")))).toBe(sha(content));
    // Only the file: no temporary file of the abandoned write is left beside it.
    expect(fs.readdirSync(path.join(root, "workspace")).filter((n) => n.startsWith(".aiem-tmp-"))).toEqual([]);
  });
});

describe("an agent from before the raw routes", () => {
  it("is told apart by the probe, so callers use the Connect calls", async () => {
    const socket = path.join(base, "old.sock");
    // What an older agent's Connect adapter answers for a path it does not know.
    const old = http2.createServer((_req, res) => {
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((resolve) => old.listen(socket, resolve));
    const c = connectAgent(socket);
    try {
      expect(await c.files.supported()).toBe(false);
    } finally {
      c.close();
      await new Promise((resolve) => old.close(resolve));
    }
  });
});
