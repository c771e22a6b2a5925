// The edge passing calls on to a service it reaches through a transport: a response led by a
// bytes field goes out with that field detached (kit/server/detached-bytes.ts), and every
// client still reads the same messages.
import { create, toBinary } from "@bufbuild/protobuf";
import { createClient, createRouterTransport, type ConnectRouter } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binaryContent as binary } from "@aiem/kit/testing";
import { FileInfoSchema } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import {
  FilesystemService,
  ReadFileResponseSchema,
} from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import { loadImageRegistry } from "../registry.js";
import { createEdgeHandler } from "./edge-handler.js";
import { createEdgeServer, type EdgeServer } from "./front-door.js";

const info = create(FileInfoSchema, { path: "/workspace/f", size: 3_000_000n });
// One answer the service keeps and hands out again: the edge must not change it on the way.
const kept = create(ReadFileResponseSchema, { content: binary(3_000_000, 1), fileInfo: info });
const pieces = [binary(1 << 20, 2), binary(5, 3), new Uint8Array(0), binary(700_000, 4)];

function routes(router: ConnectRouter): void {
  router.service(FilesystemService, {
    readFile: () => kept,
    async *readFileStream() {
      for (const [i, data] of pieces.entries()) yield { data, fileInfo: i === 0 ? info : undefined };
    },
  });
}

let server: EdgeServer;
let url: string;

beforeAll(async () => {
  const handler = createEdgeHandler({
    registry: loadImageRegistry(),
    services: [{ service: FilesystemService, transport: createRouterTransport(routes) }],
    reflection: false,
    bodyLimitBytes: 8 << 20,
  });
  server = createEdgeServer(handler);
  const { port } = await server.listen(0, "127.0.0.1");
  url = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await server.close();
});

describe("the edge's forwarded calls", () => {
  it("answer a leading bytes field byte for byte in every protocol, unary and streamed, and leave the service's message as it was", async () => {
    const before = Buffer.from(toBinary(ReadFileResponseSchema, kept));
    for (const transport of [
      createConnectTransport({ baseUrl: url, httpVersion: "2" }),
      createConnectTransport({ baseUrl: url, httpVersion: "1.1", useBinaryFormat: false }),
      createGrpcTransport({ baseUrl: url }),
      createGrpcWebTransport({ baseUrl: url, httpVersion: "1.1" }),
    ]) {
      const client = createClient(FilesystemService, transport);
      const res = await client.readFile({ name: "workspaces/w/sandboxEngines/s", path: "/f" });
      expect(Buffer.from(res.content).equals(Buffer.from(kept.content))).toBe(true);
      expect(res.fileInfo?.size).toBe(3_000_000n);
      const got = [];
      for await (const m of client.readFileStream({ name: "workspaces/w/sandboxEngines/s", path: "/f" })) got.push(m);
      expect(got.map((m) => Buffer.from(m.data).toString("base64"))).toEqual(
        pieces.map((p) => Buffer.from(p).toString("base64")),
      );
      expect(got.map((m) => m.fileInfo?.size)).toEqual([3_000_000n, undefined, undefined, undefined]);
    }
    expect(Buffer.from(toBinary(ReadFileResponseSchema, kept)).equals(before)).toBe(true);
  });
});
