import { execFile } from "node:child_process";
import type { RestJson } from "@aiem/kit/testing";
import { connect as http2Connect } from "node:http2";
import { connect as netConnect } from "node:net";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { create, fromBinary, toBinary, type DescMessage } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";
import {
  compressionGzip,
  createConnectTransport,
  createGrpcTransport,
  createGrpcWebTransport,
} from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLibraryFixture, type LibraryFixture } from "../testing/library-fixture.js";
import { createEdgeHandler } from "./edge-handler.js";
import { createEdgeServer, type EdgeServer } from "./front-door.js";
import { createInProcessServices } from "./in-process.js";

const require = createRequire(import.meta.url);
const buf = join(dirname(require.resolve("@bufbuild/buf/package.json")), "bin", "buf");
const run = promisify(execFile);

let fixture: LibraryFixture;
const servers: EdgeServer[] = [];
let inProcessUrl: string;
let forwardingUrl: string;

async function start(handler: Parameters<typeof createEdgeServer>[0]): Promise<string> {
  const server = createEdgeServer(handler);
  servers.push(server);
  const { port } = await server.listen(0, "127.0.0.1");
  return `http://127.0.0.1:${port}`;
}

beforeAll(async () => {
  fixture = createLibraryFixture();
  // The all-in-one shape: the service's routes are mounted on the edge as they are.
  const local = createInProcessServices(fixture.routes, fixture.registry);
  inProcessUrl = await start(createEdgeHandler({ registry: fixture.registry, ...local }));
  // A service reached only through a transport: every protocol is passed on to it.
  forwardingUrl = await start(
    createEdgeHandler({
      registry: fixture.registry,
      services: [{ service: fixture.service, transport: createRouterTransport(fixture.routes) }],
    }),
  );
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

// The fixture service is dynamic, so its client is untyped here.
type AnyClient = Record<string, (input: object, options?: object) => RestJson>;

function grpcUnary(
  url: string,
  method: string,
  input: DescMessage,
  output: DescMessage,
  message: object,
  metadata = new grpc.Metadata(),
) {
  const client = new grpc.Client(url.replace("http://", ""), grpc.credentials.createInsecure());
  return new Promise<RestJson>((resolve, reject) => {
    client.makeUnaryRequest(
      `/edgetest.v1.LibraryService/${method}`,
      (m: object) => Buffer.from(toBinary(input, create(input, m as never))),
      (b: Buffer) => fromBinary(output, b),
      message,
      metadata,
      (err, res) => {
        client.close();
        if (err) reject(err);
        else resolve(res);
      },
    );
  });
}

function grpcServerStream(url: string, message: object): Promise<RestJson[]> {
  const input = fixture.message("edgetest.v1.StreamBooksRequest");
  const output = fixture.message("edgetest.v1.Book");
  const client = new grpc.Client(url.replace("http://", ""), grpc.credentials.createInsecure());
  return new Promise((resolve, reject) => {
    const out: RestJson[] = [];
    const call = client.makeServerStreamRequest(
      "/edgetest.v1.LibraryService/StreamBooks",
      (m: object) => Buffer.from(toBinary(input, create(input, m as never))),
      (b: Buffer) => fromBinary(output, b),
      message,
    );
    call.on("data", (m) => out.push(m));
    call.on("error", (e) => {
      client.close();
      reject(e);
    });
    call.on("end", () => {
      client.close();
      resolve(out);
    });
  });
}

describe.each([
  ["in-process routes", () => inProcessUrl],
  ["forwarding through a transport", () => forwardingUrl],
])("one port, every protocol (%s)", (_label, url) => {
  it("serves gRPC over h2c to @grpc/grpc-js", async () => {
    const metadata = new grpc.Metadata();
    metadata.set("authorization", "Bearer grpc");
    const book = await grpcUnary(
      url(),
      "GetBook",
      fixture.message("edgetest.v1.GetBookRequest"),
      fixture.message("edgetest.v1.Book"),
      { name: "shelves/g/books/1" },
      metadata,
    );
    expect(book.name).toBe("shelves/g/books/1");
    expect(fixture.lastHeaders.get("GetBook")?.get("authorization")).toBe("Bearer grpc");
    const streamed = await grpcServerStream(url(), { parent: "shelves/g", count: 3 });
    expect(streamed.map((b) => b.name)).toEqual(["shelves/g/books/0", "shelves/g/books/1", "shelves/g/books/2"]);
    await expect(
      grpcUnary(url(), "GetBook", fixture.message("edgetest.v1.GetBookRequest"), fixture.message("edgetest.v1.Book"), {
        name: "shelves/g/books/missing",
      }),
    ).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });

  it("serves Connect JSON over HTTP/1.1", async () => {
    const res = await fetch(`${url()}/edgetest.v1.LibraryService/GetBook`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "shelves/c/books/1" }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name: "shelves/c/books/1", pageCount: "320" });
    const missing = await fetch(`${url()}/edgetest.v1.LibraryService/GetBook`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "shelves/c/books/missing" }),
    });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: "not_found" });
  });

  it("answers uncompressed whatever the client offers, and still takes a compressed request", async () => {
    // Large enough (> 1 KiB) that Connect would compress it, given the chance.
    const name = `shelves/z/books/${"b".repeat(4000)}`;
    const offered = await fetch(`${url()}/edgetest.v1.LibraryService/GetBook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "accept-encoding": "gzip, br",
        "connect-accept-encoding": "gzip, br",
      },
      body: JSON.stringify({ name }),
    });
    expect(offered.status).toBe(200);
    expect(offered.headers.get("content-encoding")).toBeNull();
    expect(((await offered.json()) as { name: string }).name).toBe(name);
    const compressed = await fetch(`${url()}/edgetest.v1.LibraryService/GetBook`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: gzipSync(JSON.stringify({ name: "shelves/z/books/2" })),
    });
    expect(compressed.status).toBe(200);
    expect(((await compressed.json()) as { name: string }).name).toBe("shelves/z/books/2");
    // gRPC offers its own way; the answer is identity there too.
    const client = createClient(
      fixture.service,
      createGrpcWebTransport({ baseUrl: url(), httpVersion: "1.1", acceptCompression: [compressionGzip] }),
    ) as unknown as AnyClient;
    let encoding: string | null = "unset";
    await client.getBook!({ name }, { onHeader: (h: Headers) => (encoding = h.get("grpc-encoding")) });
    expect(encoding === null || encoding === "identity").toBe(true);
  });

  it("serves Connect over h2c and gRPC-Web over HTTP/1.1", async () => {
    const connect = createClient(
      fixture.service,
      createConnectTransport({ baseUrl: url(), httpVersion: "2" }),
    ) as unknown as AnyClient;
    expect((await connect.getBook!({ name: "shelves/h2/books/1" })).name).toBe("shelves/h2/books/1");
    const names: string[] = [];
    for await (const b of connect.streamBooks!({ parent: "shelves/h2", count: 2 })) names.push(b.name);
    expect(names).toEqual(["shelves/h2/books/0", "shelves/h2/books/1"]);

    const web = createClient(
      fixture.service,
      createGrpcWebTransport({ baseUrl: url(), httpVersion: "1.1" }),
    ) as unknown as AnyClient;
    expect((await web.getBook!({ name: "shelves/web/books/1" })).name).toBe("shelves/web/books/1");
    await expect(web.getBook!({ name: "shelves/web/books/missing" })).rejects.toSatisfy(
      (e: unknown) => e instanceof ConnectError && e.code === Code.NotFound,
    );
  });

  it("refuses requests over the body limit one after another on one HTTP/1.1 connection, each at once", async () => {
    const connect = createClient(
      fixture.service,
      createConnectTransport({ baseUrl: url(), httpVersion: "1.1" }),
    ) as unknown as AnyClient;
    // Connect's reader stops at the limit with the body half sent; the next call on the same
    // keep-alive connection used to get no answer until the keep-alive timeout (65 s).
    for (const mib of [5, 16, 6]) {
      await expect(connect.getBook!({ name: "x".repeat(mib << 20) }, { timeoutMs: 10_000 })).rejects.toSatisfy(
        (e: unknown) => e instanceof ConnectError && e.code === Code.ResourceExhausted,
      );
    }
    expect((await connect.getBook!({ name: "shelves/after/books/1" }, { timeoutMs: 10_000 })).name).toBe(
      "shelves/after/books/1",
    );
  });

  it("refuses requests over the body limit over HTTP/2 with RESOURCE_EXHAUSTED, to Connect and gRPC clients, and serves the next call", async () => {
    const connect = createClient(
      fixture.service,
      createConnectTransport({ baseUrl: url(), httpVersion: "2" }),
    ) as unknown as AnyClient;
    const grpcNode = createClient(fixture.service, createGrpcTransport({ baseUrl: url() })) as unknown as AnyClient;
    const input = fixture.message("edgetest.v1.GetBookRequest");
    const output = fixture.message("edgetest.v1.Book");
    // Node's HTTP/2 client resets its own stream (ENHANCE_YOUR_CALM) when an answer's head comes
    // while more than its session memory (10 MB) of the request is still unsent.
    for (const mib of [5, 16, 30]) {
      for (const client of [connect, grpcNode]) {
        await expect(client.getBook!({ name: "x".repeat(mib << 20) }, { timeoutMs: 10_000 })).rejects.toSatisfy(
          (e: unknown) => e instanceof ConnectError && e.code === Code.ResourceExhausted,
        );
      }
      await expect(grpcUnary(url(), "GetBook", input, output, { name: "x".repeat(mib << 20) })).rejects.toSatisfy(
        (e: unknown) => (e as grpc.ServiceError).code === grpc.status.RESOURCE_EXHAUSTED,
      );
    }
    expect((await connect.getBook!({ name: "shelves/after/books/1" }, { timeoutMs: 10_000 })).name).toBe(
      "shelves/after/books/1",
    );
    expect((await grpcNode.getBook!({ name: "shelves/after/books/2" }, { timeoutMs: 10_000 })).name).toBe(
      "shelves/after/books/2",
    );
  });

  it("answers an over-limit HTTP/2 request whose client stops sending without ending it", async () => {
    // The answer waits for the rest of the body only while the client keeps sending: a stream
    // left open (a client waiting for the answer) must still hear it.
    const session = http2Connect(url());
    try {
      const stream = session.request({
        ":method": "POST",
        ":path": "/edgetest.v1.LibraryService/GetBook",
        "content-type": "application/proto",
      });
      stream.write(Buffer.alloc(5 << 20));
      const head = await new Promise<Record<string, unknown>>((resolve, reject) => {
        stream.once("response", resolve);
        stream.once("error", reject);
      });
      expect(head[":status"]).toBe(429);
      stream.close();
    } finally {
      session.close();
    }
  });

  it("serves REST over HTTP/1.1 and HTTP/2 on the same port", async () => {
    const res = await fetch(`${url()}/v1/shelves/r/books/1`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { name: string }).name).toBe("shelves/r/books/1");

    const session = http2Connect(url());
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const req = session.request({ ":method": "GET", ":path": "/v1/shelves/r2/books/1?unknown=1" });
        let text = "";
        let status = 0;
        req.on("response", (h) => (status = Number(h[":status"])));
        req.setEncoding("utf8");
        req.on("data", (d: string) => (text += d));
        req.on("end", () => resolve(`${status} ${text}`));
        req.on("error", reject);
        req.end();
      });
      expect(body).toMatch(/^400 \{"code":3,"message":"unknown: unknown query parameter"/);
    } finally {
      session.close();
    }
  });
});

describe("protocol sniffing", () => {
  let url: URL;
  beforeAll(async () => {
    const handler = createEdgeHandler({
      registry: fixture.registry,
      ...createInProcessServices(fixture.routes, fixture.registry),
    });
    const server = createEdgeServer(handler, { firstBytesTimeoutMs: 200 });
    servers.push(server);
    const { port } = await server.listen(0, "127.0.0.1");
    url = new URL(`http://127.0.0.1:${port}`);
  });

  // Sends `chunks` with pauses in between and returns everything the server answered.
  const raw = (chunks: string[]) =>
    new Promise<string>((resolve, reject) => {
      const socket = netConnect(Number(url.port), url.hostname);
      let text = "";
      socket.setEncoding("utf8");
      socket.on("data", (d: string) => (text += d));
      socket.on("end", () => resolve(text));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
      socket.on("connect", async () => {
        for (const c of chunks) {
          socket.write(c);
          await new Promise((r) => setTimeout(r, 20));
        }
      });
    });

  it("lets an HTTP/2 client send megabytes ahead, in large frames", async () => {
    const session = http2Connect(inProcessUrl);
    try {
      const settings = await new Promise<import("node:http2").Settings>((resolve) =>
        session.once("remoteSettings", resolve),
      );
      expect([settings.initialWindowSize, settings.maxFrameSize]).toEqual([4 << 20, 1 << 20]);
      // The connection's own window is raised past the 64 KiB every connection starts with; the
      // server sends that update when the session starts, so it has arrived once a ping is answered.
      await new Promise<void>((resolve, reject) => session.ping((error) => (error ? reject(error) : resolve())));
      expect(session.state.remoteWindowSize).toBe(16 << 20);
    } finally {
      session.close();
    }
  });

  it("waits for enough bytes when a request starts like the HTTP/2 preface", async () => {
    const body = JSON.stringify({ name: "shelves/p/books/1" });
    const text = await raw([
      "P",
      "O",
      `ST /edgetest.v1.LibraryService/GetBook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    ]);
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(text).toContain('"name":"shelves/p/books/1"');
  });

  it("hands a byte-by-byte HTTP/1.1 request to the HTTP/1.1 server", async () => {
    const request = "GET /v1/shelves/s/books/b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    const text = await raw([request.slice(0, 1), request.slice(1, 5), request.slice(5)]);
    expect(text).toMatch(/^HTTP\/1\.1 200/);
  });

  it("drops connections that never send anything", async () => {
    const started = Date.now();
    await expect(raw([])).resolves.toBe("");
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe("gRPC server reflection", () => {
  /** buf curl over HTTP/2 without TLS, in `protocol`. */
  const bufCurl = (protocol: "grpc" | "connect", ...args: string[]) =>
    run(buf, ["curl", "--protocol", protocol, "--http2-prior-knowledge", ...args]);

  it("lists the services for buf curl", async () => {
    const { stdout } = await bufCurl("grpc", "--list-methods", inProcessUrl);
    const methods = stdout.trim().split("\n");
    expect(methods).toContain("edgetest.v1.LibraryService/GetBook");
    expect(methods).toContain("edgetest.v1.LibraryService/StreamBooks");
    expect(methods).toContain("grpc.reflection.v1.ServerReflection/ServerReflectionInfo");
  });

  it("lets buf curl call a method it learned by reflection, v1 and v1alpha", async () => {
    for (const reflectProtocol of ["grpc-v1", "grpc-v1alpha"]) {
      const { stdout } = await bufCurl(
        "grpc",
        "--reflect-protocol",
        reflectProtocol,
        "-d",
        '{"name": "shelves/bc/books/1"}',
        `${forwardingUrl}/edgetest.v1.LibraryService/GetBook`,
      );
      expect(JSON.parse(stdout), reflectProtocol).toMatchObject({ name: "shelves/bc/books/1", pageCount: "320" });
    }
  });

  it("describes a service over Connect too (buf curl --protocol connect)", async () => {
    const { stdout } = await bufCurl("connect", "--list-methods", inProcessUrl);
    expect(stdout).toContain("edgetest.v1.LibraryService/ListBooks");
  });
});
