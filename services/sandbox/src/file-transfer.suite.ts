// Files as raw HTTP bodies (…/filesystem:upload and …/filesystem:download) through the edge, and
// binary content through the base64 JSON paths (ReadFile, WriteFile, NDJSON output streams).
import { createHash, randomBytes } from "node:crypto";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binaryContent as binary, replyOf as reply, type RestJson } from "@aiem/kit/testing";
import { createLocalSandboxRuntime } from "./runtime/local-runtime.js";
import {
  AGENT_CACHE,
  WS,
  b64,
  createRunningSandbox,
  expectError,
  ok,
  readNdjson,
  sharedHarness,
  startExtraModule,
  unb64,
  type ExtraModule,
  type Reply,
  type SandboxHarness,
} from "./testing/index.js";

let h: SandboxHarness;
let sb: RestJson;

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** Sends `content` in 64 KiB pieces as a stream, as a client sending a large file would. */
function streamed(content: Buffer): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= content.length) {
        controller.close();
        return;
      }
      controller.enqueue(content.subarray(at, at + (64 << 10)));
      at += 64 << 10;
    },
  });
}

async function upload(
  base: string,
  token: string,
  sandbox: string,
  query: string,
  content: Buffer,
  method = "PUT",
): Promise<Reply> {
  const res = await fetch(`${base}/v1/${sandbox}/filesystem:upload?${query}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/octet-stream" },
    body: streamed(content),
    duplex: "half",
  } as RequestInit);
  return reply(res);
}

async function download(
  base: string,
  token: string,
  sandbox: string,
  file: string,
): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(`${base}/v1/${sandbox}/filesystem:download?path=${encodeURIComponent(file)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

beforeAll(async () => {
  h = await sharedHarness();
  sb = await h.createSandbox("transfer");
});

describe("raw-body file upload and download", () => {
  it("moves a file larger than the request-body limit in and out, byte for byte", async () => {
    const token = await h.token("alice");
    // 24 MiB: far over the edge's request-body limit, which refuses the same file as JSON.
    const content = binary(24 << 20, 15);
    const refused = await h.rest("POST", `/v1/${sb.name}/filesystem:writeFile`, {
      body: { path: "/workspace/big.bin", content: b64(content) },
    });
    expect([refused.status, refused.body.code]).toEqual([413, 8]);
    const info = ok(
      await upload(h.t.url, token, sb.name, "path=/workspace/data/big.bin&createParentDirectories=true", content),
    ).fileInfo;
    expect(info).toMatchObject({
      path: "/workspace/data/big.bin",
      size: String(content.length),
      type: "FILE_TYPE_REGULAR",
      mode: "0644",
    });
    const got = await download(h.t.url, token, sb.name, "/workspace/data/big.bin");
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("application/octet-stream");
    expect(got.headers.get("content-length")).toBe(String(content.length));
    expect(got.bytes.length).toBe(content.length);
    expect(sha256(got.bytes)).toBe(sha256(content));
    // The sandbox sees the same bytes.
    const sum = await h.run(sb.name, "sha256sum", ["/workspace/data/big.bin"]);
    expect(sum.output.split(" ")[0]).toBe(sha256(content));
  });

  it("moves a file larger than the sandbox's memory limit in and out: nothing on the way holds it whole", async (ctx) => {
    // The agent runs in the sandbox's cgroup: had it gathered the file, the kernel would have
    // killed it. The service's own memory is the bench's to measure (bench/sandbox-data-path).
    if (!h.sandbox.runtime.capabilities.memory.mechanism.startsWith("cgroup")) ctx.skip();
    const limit = 128 << 20;
    const small = (await h.catalogueFixture("transfer-small-memory", { memoryBytesLimit: String(limit) })).template;
    const tight = await h.createSandbox("transfer-tight", { template: small });
    const token = await h.token("alice");
    const content = randomBytes(limit + (32 << 20));
    ok(await upload(h.t.url, token, tight.name, "path=/workspace/larger-than-memory.bin", content));
    const got = await download(h.t.url, token, tight.name, "/workspace/larger-than-memory.bin");
    expect(got.status).toBe(200);
    expect(sha256(got.bytes)).toBe(sha256(content));
    // The same agent is still there: it was not killed and restarted on the way.
    expect(ok(await h.rest("GET", `/v1/${tight.name}`)).sandboxEngine.state).toBe("STATE_RUNNING");
    expect((await h.run(tight.name, "sha256sum", ["/workspace/larger-than-memory.bin"])).output.split(" ")[0]).toBe(
      sha256(content),
    );
  });

  it("reads a file that gives no size (as /proc's) to its end through ReadFile", async () => {
    const res = ok(await h.rest("GET", `/v1/${sb.name}/filesystem:readFile?path=/proc/self/status`));
    expect(unb64(res.content).toString()).toMatch(/^Name:/);
    expect(Number(res.fileInfo.size)).toBe(unb64(res.content).length);
  });

  it("keeps WriteFile's rules: overwrite, mode, parents, empty files, POST as well as PUT", async () => {
    const token = await h.token("alice");
    ok(await upload(h.t.url, token, sb.name, "path=/workspace/u.txt", Buffer.from("one")));
    expectError(
      await upload(h.t.url, token, sb.name, "path=/workspace/u.txt&overwrite=false", Buffer.from("two")),
      "ALREADY_EXISTS",
      "/workspace/u.txt",
    );
    expect(
      unb64(ok(await h.rest("GET", `/v1/${sb.name}/filesystem:readFile?path=/workspace/u.txt`)).content).toString(),
    ).toBe("one");
    expect(
      ok(await upload(h.t.url, token, sb.name, "path=/workspace/u.txt&mode=0600", Buffer.from("three"), "POST"))
        .fileInfo.mode,
    ).toBe("0600");
    expect((await download(h.t.url, token, sb.name, "/workspace/u.txt")).bytes.toString()).toBe("three");
    expectError(
      await upload(h.t.url, token, sb.name, "path=/workspace/no/such/dir/f", Buffer.from("x")),
      "FAILED_PRECONDITION",
      "create_parent_directories",
    );
    const empty = await upload(h.t.url, token, sb.name, "path=/workspace/empty.bin", Buffer.alloc(0));
    expect(ok(empty).fileInfo.size).toBe("0");
    const back = await download(h.t.url, token, sb.name, "/workspace/empty.bin");
    expect([back.status, back.bytes.length, back.headers.get("content-length")]).toEqual([200, 0, "0"]);
  });

  it("leaves no file, partial or temporary, when the client goes away mid-upload", async () => {
    const token = await h.token("alice");
    const listing = async () =>
      (await h.run(sb.name, "ls", ["-A", "/workspace/cut"])).output.split("\n").filter((n) => n !== "");
    const until = async (what: string, test: (names: string[]) => boolean) => {
      for (let i = 0; i < 200; i++) {
        const names = await listing();
        if (test(names)) return names;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`the upload's directory never ${what}`);
    };
    ok(
      await upload(
        h.t.url,
        token,
        sb.name,
        "path=/workspace/cut/placeholder&createParentDirectories=true",
        Buffer.from("x"),
      ),
    );
    const url = new URL(`${h.t.url}/v1/${sb.name}/filesystem:upload?path=/workspace/cut/half.bin`);
    const req = http.request(url, {
      method: "PUT",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/octet-stream",
        "content-length": String(64 << 20),
      },
    });
    req.on("error", () => undefined);
    req.write(binary(2 << 20, 3));
    // The agent is writing its temporary file: the upload is under way, then the client vanishes.
    await until("got a temporary file", (names) => names.some((n) => n.startsWith(".aiem-tmp-")));
    req.destroy();
    const after = await until("lost its temporary file", (names) => !names.some((n) => n.startsWith(".aiem-tmp-")));
    expect(after).toEqual(["placeholder"]);
  });

  it("answers bad requests with the REST API's errors", async () => {
    const token = await h.token("alice");
    expectError(await upload(h.t.url, token, sb.name, "", Buffer.from("x")), "INVALID_ARGUMENT", "path");
    expectError(await upload(h.t.url, token, sb.name, "path=relative", Buffer.from("x")), "INVALID_ARGUMENT", "path");
    expectError(
      await upload(h.t.url, token, sb.name, "path=/workspace/x&mode=999", Buffer.from("x")),
      "INVALID_ARGUMENT",
      "mode",
    );
    expectError(
      await upload(h.t.url, token, sb.name, "path=/workspace/x&overwrite=maybe", Buffer.from("x")),
      "INVALID_ARGUMENT",
      "overwrite",
    );
    const missing = await download(h.t.url, token, sb.name, "/workspace/none");
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.bytes.toString())).toMatchObject({ code: 5 });
    const dir = await download(h.t.url, token, sb.name, "/workspace");
    expect(JSON.parse(dir.bytes.toString())).toMatchObject({ code: 9 });
    // Nobody else's sandbox (to another member it does not exist), and nobody without a token.
    expectError(
      await upload(h.t.url, await h.token("bob"), sb.name, "path=/workspace/x", Buffer.from("x")),
      "NOT_FOUND",
      sb.name,
    );
    expectError(
      await reply(await fetch(`${h.t.url}/v1/${sb.name}/filesystem:download?path=/workspace/u.txt`)),
      "UNAUTHENTICATED",
    );
    expectError(
      await upload(h.t.url, token, `workspaces/${WS}/sandboxEngines/none`, "path=/workspace/x", Buffer.from("x")),
      "NOT_FOUND",
    );
    // Wrong methods and unknown paths under the prefix.
    const wrong = await reply(
      await fetch(`${h.t.url}/v1/${sb.name}/filesystem:upload?path=/workspace/x`, {
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    expect([wrong.status, wrong.body.code]).toEqual([405, 12]);
    expectError(await h.rest("GET", `/v1/${sb.name}/filesystem:nothing`), "NOT_FOUND");
  });
});

describe("binary content through base64 JSON", () => {
  it("round-trips every byte value through WriteFile and ReadFile", async () => {
    // Within the test host's 1 MiB request limit once base64-encoded.
    const content = binary(700 << 10, 77);
    ok(
      await h.rest("POST", `/v1/${sb.name}/filesystem:writeFile`, {
        body: { path: "/workspace/b64.bin", content: b64(content) },
      }),
    );
    const read = ok(await h.rest("GET", `/v1/${sb.name}/filesystem:readFile?path=/workspace/b64.bin`));
    expect(read.content).toBe(content.toString("base64"));
    const token = await h.token("alice");
    expect(sha256((await download(h.t.url, token, sb.name, "/workspace/b64.bin")).bytes)).toBe(sha256(content));
  });

  it("reads a file of several MiB through ReadFile's JSON, written in pieces, byte for byte", async () => {
    // Over the size the edge writes as base64 piece by piece, and not a multiple of 3 bytes.
    const content = binary((5 << 20) + 1, 78);
    const token = await h.token("alice");
    ok(await upload(h.t.url, token, sb.name, "path=/workspace/pieces.bin", content));
    const res = await fetch(`${h.t.url}/v1/${sb.name}/filesystem:readFile?path=/workspace/pieces.bin`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
    const body = JSON.parse(text) as { content: string; fileInfo: { path: string; size: string } };
    expect(body.fileInfo).toMatchObject({ path: "/workspace/pieces.bin", size: String(content.length) });
    expect(body.content).toBe(content.toString("base64"));
  });

  it("streams binary process output over REST NDJSON, every byte in order", async () => {
    const token = await h.token("alice");
    const content = binary(3 << 20, 91);
    ok(await upload(h.t.url, token, sb.name, "path=/workspace/out.bin", content));
    const created = ok(
      await h.rest("POST", `/v1/${sb.name}/processes?autoRun=true`, {
        body: { command: "cat", args: ["/workspace/out.bin"] },
      }),
    ).process;
    const res = await fetch(`${h.t.url}/v1/${created.name}:streamOutput`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = await readNdjson(res);
    const parts: Buffer[] = [];
    let offset = 0;
    for (const line of lines) {
      expect(line.error).toBeUndefined();
      if (!line.result?.data) continue;
      expect(Number(line.result.offset)).toBe(offset);
      const data = unb64(line.result.data);
      parts.push(data);
      offset += data.length;
    }
    expect(sha256(Buffer.concat(parts))).toBe(sha256(content));
  });
});

describe("streaming, not buffering", () => {
  let extra: ExtraModule;
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    // A channel to the agent that carries at most 1 MiB per message and returns 256 KiB per
    // read: a file 8 times that size passes only if it never travels as one message (the raw
    // file routes carry it as a stream; an older agent's WriteFileStream in pieces).
    const runtime = createLocalSandboxRuntime({
      dataDir: path.join(h.t.dataDir, "small-channel-rt"),
      cacheDir: AGENT_CACHE,
      maxMessageBytes: 1 << 20,
      maxReadBytes: 256 << 10,
    });
    extra = await startExtraModule(h, "smallchannel", {}, { runtime });
    const routes = extra.module.httpRoutes ?? [];
    server = http.createServer((req, res) => {
      const route = routes.find((r) => (req.url ?? "").startsWith(r.prefix));
      if (route) route.handler(req, res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await extra?.stop();
  });

  it("uploads and downloads a file 8 times the agent channel's largest message", async () => {
    const c = await extra.clients("alice");
    const created = await createRunningSandbox(h, c, "small");
    const token = await h.token("alice");
    const content = binary(8 << 20, 5);
    // The same file in one WriteFile message is over the channel's limit.
    await expect(
      c.filesystem.writeFile({ name: created.name, path: "/workspace/whole.bin", content }),
    ).rejects.toThrow();
    ok(await upload(base, token, created.name, "path=/workspace/streamed.bin", content));
    const got = await download(base, token, created.name, "/workspace/streamed.bin");
    expect(got.status).toBe(200);
    expect(sha256(got.bytes)).toBe(sha256(content));
  });
});
