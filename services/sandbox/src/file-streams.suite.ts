// WriteFileStream and ReadFileStream through the edge over Connect on HTTP/2, as a Connect or
// gRPC client sends a file larger than one request may be.
import { createHash, randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { waitFor, type RestJson } from "@aiem/kit/testing";
import { type Client, Code, ConnectError, createClient } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  FilesystemService,
  type WriteFileStreamRequestSchema,
} from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import { connectTransport, WS, ok, sharedHarness, type SandboxHarness } from "./testing/index.js";
import { READ_STREAM_MESSAGE_BYTES } from "./file-stream-handlers.js";

let h: SandboxHarness;
let sb: RestJson;
let files: Client<typeof FilesystemService>;

type WriteMessage = MessageInitShape<typeof WriteFileStreamRequestSchema>;
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

async function clientAs(user: string): Promise<Client<typeof FilesystemService>> {
  return createClient(FilesystemService, await connectTransport(h, user, "2"));
}

/** The header, then `content` in messages of `piece` bytes (each under the test host's 1 MiB request limit). */
async function* messages(
  header: WriteMessage["header"],
  content: Buffer,
  piece = 512 << 10,
): AsyncGenerator<WriteMessage> {
  yield { header };
  for (let at = 0; at < content.length; at += piece) yield { data: content.subarray(at, at + piece) };
  yield { last: true };
}

async function* each(...all: WriteMessage[]): AsyncGenerator<WriteMessage> {
  yield* all;
}

async function readAll(client: Client<typeof FilesystemService>, name: string, path: string) {
  const parts: Uint8Array[] = [];
  const infos = [];
  let largest = 0;
  for await (const m of client.readFileStream({ name, path })) {
    parts.push(m.data);
    largest = Math.max(largest, m.data.length);
    infos.push(m.fileInfo);
  }
  return { bytes: Buffer.concat(parts), infos, largest };
}

async function failure(work: Promise<unknown> | AsyncIterable<unknown>): Promise<ConnectError> {
  try {
    if (Symbol.asyncIterator in work) for await (const _ of work);
    else await work;
  } catch (e) {
    return ConnectError.from(e);
  }
  throw new Error("the call succeeded");
}

beforeAll(async () => {
  h = await sharedHarness();
  sb = await h.createSandbox("streams");
  files = await clientAs("alice");
});

describe("files as message streams (Connect)", () => {
  it("writes and reads back a file larger than one request may be, byte for byte", async () => {
    // 24 MiB, against the test host's 1 MiB request limit (which WriteFile's request is under).
    const content = randomBytes(24 << 20);
    const written = await files.writeFileStream(
      messages({ name: sb.name, path: "/workspace/s/big.bin", createParentDirectories: true }, content),
    );
    expect(written.fileInfo).toMatchObject({
      path: "/workspace/s/big.bin",
      size: BigInt(content.length),
      mode: "0644",
    });
    const back = await readAll(files, sb.name, "/workspace/s/big.bin");
    expect(back.bytes.length).toBe(content.length);
    expect(sha256(back.bytes)).toBe(sha256(content));
    // The description comes once, first; no message is larger than the service's bound.
    expect(back.infos[0]).toMatchObject({ path: "/workspace/s/big.bin", size: BigInt(content.length) });
    expect(back.infos.slice(1).every((i) => i === undefined)).toBe(true);
    expect(back.largest).toBe(READ_STREAM_MESSAGE_BYTES);
    expect((await h.run(sb.name, "sha256sum", ["/workspace/s/big.bin"])).output.split(" ")[0]).toBe(sha256(content));
    // The unary read answers its content beside protobuf-es's encoder (kit/server/detached-bytes.ts).
    const whole = await files.readFile({ name: sb.name, path: "/workspace/s/big.bin" });
    expect(sha256(whole.content)).toBe(sha256(content));
    expect(whole.fileInfo).toMatchObject({ path: "/workspace/s/big.bin", size: BigInt(content.length) });
  });

  it("keeps WriteFile's rules: data on the header's message, overwrite, mode, parents, empty files", async () => {
    const name = sb.name;
    const one = await files.writeFileStream(
      each({
        header: { name, path: "/workspace/s/r.txt", createParentDirectories: true },
        data: Buffer.from("one"),
        last: true,
      }),
    );
    expect(one.fileInfo?.size).toBe(3n);
    const exists = await failure(
      files.writeFileStream(
        each({ header: { name, path: "/workspace/s/r.txt", overwrite: false }, data: Buffer.from("two"), last: true }),
      ),
    );
    expect([exists.code, exists.rawMessage]).toEqual([
      Code.AlreadyExists,
      expect.stringContaining("/workspace/s/r.txt"),
    ]);
    expect((await readAll(files, name, "/workspace/s/r.txt")).bytes.toString()).toBe("one");
    const moded = await files.writeFileStream(
      messages({ name, path: "/workspace/s/r.txt", mode: "0600" }, Buffer.from("three")),
    );
    expect(moded.fileInfo?.mode).toBe("0600");
    expect((await readAll(files, name, "/workspace/s/r.txt")).bytes.toString()).toBe("three");
    const parent = await failure(
      files.writeFileStream(messages({ name, path: "/workspace/none/f" }, Buffer.from("x"))),
    );
    expect([parent.code, parent.rawMessage]).toEqual([
      Code.FailedPrecondition,
      expect.stringContaining("create_parent_directories"),
    ]);
    const empty = await files.writeFileStream(each({ header: { name, path: "/workspace/s/empty" }, last: true }));
    expect(empty.fileInfo?.size).toBe(0n);
    const read = await readAll(files, name, "/workspace/s/empty");
    expect([read.bytes.length, read.infos.length, read.infos[0]?.size]).toEqual([0, 1, 0n]);
  });

  it("reads a file that gives no size (as /proc's) to its end", async () => {
    const read = await readAll(files, sb.name, "/proc/self/status");
    expect(read.bytes.toString()).toMatch(/^Name:/);
  });

  it("answers bad streams and bad requests with the API's errors, naming the field", async () => {
    const name = sb.name;
    // Each call is made when its turn comes: a refusal nobody waits on yet would go unhandled.
    const cases: [() => Promise<unknown> | AsyncIterable<unknown>, Code, string][] = [
      [() => files.writeFileStream(each({ data: Buffer.from("x") })), Code.InvalidArgument, "header"],
      [() => files.writeFileStream(each()), Code.InvalidArgument, "header"],
      [
        () =>
          files.writeFileStream(
            each({ header: { name, path: "/workspace/s/h" } }, { header: { name, path: "/workspace/s/h" } }),
          ),
        Code.InvalidArgument,
        "header",
      ],
      [
        () =>
          files.writeFileStream(each({ header: { name, path: "/workspace/s/unended" } }, { data: Buffer.from("x") })),
        Code.InvalidArgument,
        "last",
      ],
      [
        () =>
          files.writeFileStream(
            each({ header: { name, path: "/workspace/s/after" }, last: true }, { data: Buffer.from("x") }),
          ),
        Code.InvalidArgument,
        "last",
      ],
      [() => files.writeFileStream(each({ header: { name, path: "relative" } })), Code.InvalidArgument, "header.path"],
      [
        () => files.writeFileStream(each({ header: { name, path: "/workspace/s/m", mode: "999" } })),
        Code.InvalidArgument,
        "header.mode",
      ],
      [
        () => files.writeFileStream(each({ header: { name, path: "/workspace/s/\0" } })),
        Code.InvalidArgument,
        "header.path",
      ],
      [
        () => files.writeFileStream(each({ header: { name: "nonsense", path: "/workspace/s/x" } })),
        Code.InvalidArgument,
        "header.name",
      ],
      [
        () =>
          files.writeFileStream(
            each({ header: { name: `workspaces/${WS}/sandboxEngines/none`, path: "/workspace/x" } }),
          ),
        Code.NotFound,
        "",
      ],
      [() => files.writeFileStream(each({ header: { name, path: "/usr/x" }, last: true })), Code.PermissionDenied, ""],
      [() => files.readFileStream({ name, path: "/workspace/none" }), Code.NotFound, "/workspace/none"],
      [() => files.readFileStream({ name, path: "/workspace" }), Code.FailedPrecondition, "/workspace"],
      [() => files.readFileStream({ name, path: "" }), Code.InvalidArgument, "path"],
    ];
    for (const [work, code, text] of cases) {
      const err = await failure(work());
      expect([Code[err.code], err.rawMessage], text).toEqual([Code[code], expect.stringContaining(text)]);
    }
    // Nobody else's sandbox: to another member it does not exist.
    const bob = await clientAs("bob");
    expect(
      (await failure(bob.writeFileStream(each({ header: { name, path: "/workspace/s/b" }, last: true })))).code,
    ).toBe(Code.NotFound);
    expect((await failure(bob.readFileStream({ name, path: "/workspace/s/r.txt" }))).code).toBe(Code.NotFound);
    // A stream refused before its end wrote nothing.
    const left = (await h.run(name, "ls", ["-A", "/workspace/s"])).output.split("\n");
    expect(left.filter((n) => ["h", "unended", "after"].includes(n) || n.startsWith(".aiem-tmp-"))).toEqual([]);
  });

  it("leaves no file, partial or temporary, when the client cancels mid-stream", async () => {
    const name = sb.name;
    await files.writeFileStream(
      each({
        header: { name, path: "/workspace/cut-s/placeholder", createParentDirectories: true },
        data: Buffer.from("x"),
        last: true,
      }),
    );
    const listing = async () =>
      (await h.run(name, "ls", ["-A", "/workspace/cut-s"])).output.split("\n").filter((n) => n !== "");
    const abort = new AbortController();
    let sent = 0;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    async function* endless(): AsyncGenerator<WriteMessage> {
      yield { header: { name, path: "/workspace/cut-s/half.bin" } };
      for (;;) {
        yield { data: randomBytes(256 << 10) };
        // After a few MiB the stream stops sending, its end never comes, until it is cancelled.
        if (++sent === 8) await held;
      }
    }
    const call = files.writeFileStream(endless(), { signal: abort.signal }).catch((e: unknown) => ConnectError.from(e));
    await waitFor(async () => (await listing()).some((n) => n.startsWith(".aiem-tmp-")), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: "the agent to write a temporary file",
    });
    abort.abort();
    release();
    expect(((await call) as ConnectError).code).toBe(Code.Canceled);
    let names: string[] = [];
    await waitFor(
      async () => {
        names = await listing();
        return names.length <= 1;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    expect(names).toEqual(["placeholder"]);
  });

  it("moves a file larger than the sandbox's memory limit in and out: nothing on the way holds it whole", async (ctx) => {
    // The agent runs in the sandbox's cgroup: had it gathered the file, the kernel would have killed it.
    if (!h.sandbox.runtime.capabilities.memory.mechanism.startsWith("cgroup")) ctx.skip();
    const limit = 128 << 20;
    const small = (await h.catalogueFixture("streams-small-memory", { memoryBytesLimit: String(limit) })).template;
    const tight = await h.createSandbox("streams-tight", { template: small });
    const content = randomBytes(limit + (32 << 20));
    await files.writeFileStream(messages({ name: tight.name, path: "/workspace/larger-than-memory.bin" }, content));
    const back = await readAll(files, tight.name, "/workspace/larger-than-memory.bin");
    expect(sha256(back.bytes)).toBe(sha256(content));
    expect(ok(await h.rest("GET", `/v1/${tight.name}`)).sandboxEngine.state).toBe("STATE_RUNNING");
  });
});
