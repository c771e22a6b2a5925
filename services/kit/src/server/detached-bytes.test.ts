// Detached bytes fields on a real HTTP/2 server (port 0) through every binary framing, checked
// against protobuf-es's own encoding and decoding; JSON and in-process calls keep the usual path.
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  createClient,
  createRouterTransport,
  type ConnectRouter,
  type HandlerContext,
  type Transport,
} from "@connectrpc/connect";
import {
  createAsyncIterable,
  type UniversalHandler,
  type UniversalServerRequest,
  type UniversalServerResponse,
} from "@connectrpc/connect/protocol";
import {
  connectNodeAdapter,
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FileInfoSchema } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import {
  FilesystemService,
  type ReadFileRequest,
  ReadFileResponseSchema,
  type ReadFileStreamRequest,
  ReadFileStreamResponseSchema,
} from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import { detachBytesField, detachedBytes } from "./detached-bytes.js";
import { binaryContent as binary } from "../testing/binary-content.js";

const info = create(FileInfoSchema, { path: "/workspace/f", size: 300_000n, mode: "0644" });
// A field length of 2 varint bytes, of 3, an empty field, a large one: the streamed messages.
const pieces = [binary(200, 1), binary(20_000, 2), new Uint8Array(0), binary(300_000, 3)];
const calls: { held: boolean }[] = [];

function routes(router: ConnectRouter): void {
  router.service(FilesystemService, {
    readFile(req: ReadFileRequest, ctx: HandlerContext) {
      const content = binary(Number(req.path.slice(1)), 9);
      const detached = detachedBytes(ctx);
      calls.push({ held: detached !== undefined });
      // "/full" answers the whole message even when it could detach (as a forwarded call does).
      if (!detached || req.name === "full") return { content, fileInfo: info };
      detached.hold(content);
      return { fileInfo: info };
    },
    async *readFileStream(_req: ReadFileStreamRequest, ctx: HandlerContext) {
      const detached = detachedBytes(ctx);
      calls.push({ held: detached !== undefined });
      for (const [i, data] of pieces.entries()) {
        const fileInfo = i === 0 ? info : undefined;
        if (!detached) {
          yield { data, fileInfo };
          continue;
        }
        // The large one as pieces, as a file read from a stream holds them.
        detached.hold(
          data.length > 100_000
            ? [data.subarray(0, 1), data.subarray(1, 70_000), new Uint8Array(0), data.subarray(70_000)]
            : data,
        );
        yield { fileInfo };
      }
    },
  });
  detachBytesField(router, FilesystemService.method.readFile, ReadFileResponseSchema.field.content);
  detachBytesField(router, FilesystemService.method.readFileStream, ReadFileStreamResponseSchema.field.data);
}

let server: http2.Http2Server;
const sessions = new Set<http2.ServerHttp2Session>();
let base: string;

beforeAll(async () => {
  const handler = connectNodeAdapter({ routes });
  server = http2.createServer(handler);
  server.on("session", (session) => sessions.add(session));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const session of sessions) session.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function check(transport: Transport, detached: boolean): Promise<void> {
  const client = createClient(FilesystemService, transport);
  calls.length = 0;
  for (const size of [0, 1, 127, 128, 16_383, 16_384, 1 << 20]) {
    const res = await client.readFile({ name: "sb", path: `/${size}` });
    expect(Buffer.from(res.content).equals(Buffer.from(binary(size, 9)))).toBe(true);
    expect(res.fileInfo?.path).toBe("/workspace/f");
  }
  const full = await client.readFile({ name: "full", path: "/5000" });
  expect(Buffer.from(full.content).equals(Buffer.from(binary(5000, 9)))).toBe(true);
  const got = [];
  for await (const m of client.readFileStream({ name: "sb", path: "/f" })) got.push(m);
  expect(got.map((m) => Buffer.from(m.data).toString("hex"))).toEqual(
    pieces.map((p) => Buffer.from(p).toString("hex")),
  );
  expect(got.map((m) => m.fileInfo?.size)).toEqual([300_000n, undefined, undefined, undefined]);
  expect(new Set(calls.map((c) => c.held))).toEqual(new Set([detached]));
}

describe("detachBytesField", () => {
  it("answers the same messages over Connect (binary, HTTP/2), gRPC and gRPC-Web, with the bytes detached", async () => {
    // Clients that offer no compression, as every call through the edge is (it drops the offer).
    await check(createConnectTransport({ baseUrl: base, httpVersion: "2", acceptCompression: [] }), true);
    await check(createGrpcTransport({ baseUrl: base, acceptCompression: [] }), true);
    await check(createGrpcWebTransport({ baseUrl: base, httpVersion: "2", acceptCompression: [] }), true);
  });

  it("keeps the whole message where the answer might be compressed", async () => {
    await check(createConnectTransport({ baseUrl: base, httpVersion: "2" }), false);
    await check(createGrpcTransport({ baseUrl: base }), false);
  });

  it("keeps the whole message where it cannot detach (JSON); a router transport's binary calls detach", async () => {
    await check(
      createConnectTransport({ baseUrl: base, httpVersion: "2", useBinaryFormat: false, acceptCompression: [] }),
      false,
    );
    await check(createRouterTransport(routes, { transport: { acceptCompression: [] } }), true);
  });

  it("puts on the wire exactly the bytes protobuf-es encodes for the whole message", async () => {
    const session = http2.connect(base);
    const post = (path: string, type: string, body: Uint8Array) =>
      new Promise<{ headers: http2.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        const stream = session.request({
          ":method": "POST",
          ":path": path,
          "content-type": type,
          "connect-protocol-version": "1",
        });
        const parts: Buffer[] = [];
        let headers: http2.IncomingHttpHeaders = {};
        stream.on("response", (h) => (headers = h));
        stream.on("data", (chunk: Buffer) => parts.push(chunk));
        stream.on("end", () => resolve({ headers, body: Buffer.concat(parts) }));
        stream.on("error", reject);
        stream.end(body);
      });
    try {
      const unary = await post(
        "/enginemanager.sandbox.v1.FilesystemService/ReadFile",
        "application/proto",
        toBinaryRequest("/70000"),
      );
      const expected = Buffer.from(
        toBinary(
          ReadFileResponseSchema,
          create(ReadFileResponseSchema, { content: binary(70_000, 9), fileInfo: info }),
        ),
      );
      expect(unary.headers["content-length"]).toBe(String(expected.length));
      expect(unary.body.equals(expected)).toBe(true);

      const envelope = (flags: number, data: Uint8Array) => {
        const head = Buffer.alloc(5);
        head[0] = flags;
        head.writeUInt32BE(data.length, 1);
        return Buffer.concat([head, data]);
      };
      const streamed = await post(
        "/enginemanager.sandbox.v1.FilesystemService/ReadFileStream",
        "application/connect+proto",
        envelope(0, toBinaryStreamRequest()),
      );
      const messages = pieces.map((data, i) =>
        envelope(
          0,
          toBinary(
            ReadFileStreamResponseSchema,
            create(ReadFileStreamResponseSchema, { data, fileInfo: i === 0 ? info : undefined }),
          ),
        ),
      );
      const end = envelope(2, Buffer.from("{}"));
      expect(streamed.body.equals(Buffer.concat([...messages, end]))).toBe(true);
    } finally {
      session.close();
    }
  });
});

function toBinaryRequest(path: string): Uint8Array {
  return toBinary(
    FilesystemService.method.readFile.input,
    create(FilesystemService.method.readFile.input, { name: "sb", path }),
  );
}
function toBinaryStreamRequest(): Uint8Array {
  return toBinary(
    FilesystemService.method.readFileStream.input,
    create(FilesystemService.method.readFileStream.input, { name: "sb", path: "/f" }),
  );
}

describe("detachBytesField's envelopes", () => {
  it("finds envelopes that span chunks of any size, and leaves the end of the stream as it is", async () => {
    const envelope = (flags: number, data: Uint8Array) => {
      const head = Buffer.alloc(5);
      head[0] = flags;
      head.writeUInt32BE(data.length, 1);
      return Buffer.concat([head, data]);
    };
    const message = (data: Uint8Array, i: number) =>
      toBinary(
        ReadFileStreamResponseSchema,
        create(ReadFileStreamResponseSchema, { data, fileInfo: i === 0 ? info : undefined }),
      );
    const end = envelope(2, Buffer.from("{}"));
    // What Connect would answer for messages without their data, cut into chunks of 1 to 7 bytes.
    const answered = Buffer.concat([...pieces.map((_, i) => envelope(0, message(new Uint8Array(0), i))), end]);
    const chunks: Uint8Array[] = [];
    for (let at = 0, n = 1; at < answered.length; at += n, n = (n % 7) + 1) chunks.push(answered.subarray(at, at + n));
    const handler = Object.assign(
      async (req: UniversalServerRequest): Promise<UniversalServerResponse> => {
        const slot = detachedBytes({ values: req.contextValues } as HandlerContext)!;
        for (const data of pieces) slot.hold(data);
        return {
          status: 200,
          header: new Headers({ "content-type": "application/connect+proto" }),
          body: createAsyncIterable(chunks),
        };
      },
      { method: FilesystemService.method.readFileStream },
    ) as unknown as UniversalHandler;
    const router = { handlers: [handler] } as unknown as ConnectRouter;
    detachBytesField(router, FilesystemService.method.readFileStream, ReadFileStreamResponseSchema.field.data);
    const res = await router.handlers[0]!({
      httpVersion: "2",
      method: "POST",
      url: "/enginemanager.sandbox.v1.FilesystemService/ReadFileStream",
      header: new Headers({ "content-type": "application/connect+proto" }),
      body: createAsyncIterable([]),
      signal: new AbortController().signal,
    });
    const out: Uint8Array[] = [];
    for await (const chunk of res.body!) out.push(chunk);
    expect(
      Buffer.concat(out).equals(Buffer.concat([...pieces.map((data, i) => envelope(0, message(data, i))), end])),
    ).toBe(true);
  });
});
