// WebSocket upgrades to a part in another process: spliced through, or answered 502 when the part
// cannot be reached.
import { createServer as createHttpServer, type Server } from "node:http";
import { connect, createServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../testing/free-port.js";
import { createHttpRoutesHandler, remoteHttpRoutes } from "./http-routes.js";

// A part that answers every upgrade with 101 and then echoes what it gets.
const part = createServer((socket) => {
  socket.once("data", () => {
    socket.write("HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\r\n");
    socket.pipe(socket);
  });
});

function edgeFor(base: string): Server {
  const route = remoteHttpRoutes({ engine: base }).find((r) => r.prefix === "/engines/")!;
  const server = createHttpServer();
  server.on("upgrade", (req, socket, head) => route.upgrade!(req, socket, head));
  return server;
}

async function listen(server: {
  listen(port: number, host: string, cb: () => void): unknown;
  address(): unknown;
}): Promise<number> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return (server.address() as AddressInfo).port;
}

// Sends an upgrade request and resolves with everything read until `done` says it is enough.
function upgrade(port: number, after: string, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(
        "GET /engines/x/ws HTTP/1.1\r\nhost: localhost\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\r\n",
      );
    });
    let text = "";
    let sent = false;
    socket.on("data", (chunk) => {
      text += chunk.toString();
      if (!sent && text.includes("\r\n\r\n") && text.startsWith("HTTP/1.1 101")) {
        sent = true;
        socket.write(after);
      }
      if (done(text)) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.once("error", reject);
    socket.once("close", () => resolve(text));
  });
}

describe("upgrades to a part in another process", () => {
  const servers: Array<{ close(): unknown }> = [part];
  let partPort: number;

  beforeAll(async () => {
    partPort = await listen(part);
  });

  afterAll(() => {
    for (const s of servers) s.close();
  });

  it("splices the client to the part", async () => {
    const edge = edgeFor(`http://127.0.0.1:${partPort}`);
    servers.push(edge);
    const text = await upgrade(await listen(edge), "ping", (t) => t.endsWith("ping"));
    expect(text.startsWith("HTTP/1.1 101")).toBe(true);
    expect(text.endsWith("\r\n\r\nping")).toBe(true);
  });

  it("answers 502 naming the cause when nothing listens where the part should be", async () => {
    const edge = edgeFor(`http://127.0.0.1:${await freePort()}`);
    servers.push(edge);
    const text = await upgrade(await listen(edge), "", () => false);
    expect(text.split("\r\n")[0]).toBe("HTTP/1.1 502 Bad Gateway");
    expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4))).toEqual({
      code: 14,
      message: "the part serving this path is unavailable",
      details: [],
    });
  });
});

describe("upgrade-only prefixes", () => {
  it("send the engine part's log stream upgrades on, and plain HTTP under them to the next route", async () => {
    const routes = remoteHttpRoutes({ engine: "http://127.0.0.1:1", sandbox: "http://127.0.0.1:2" });
    const stream = routes.find((r) => r.prefix === "/v1/workspaces/" && r.upgrade);
    expect(stream?.upgradeOnly).toBe(true);
    const answered: string[] = [];
    const handler = createHttpRoutesHandler(
      [
        ...routes.filter((r) => r.upgradeOnly),
        { prefix: "/v1/workspaces/", handler: () => answered.push("file transfer") },
      ],
      () => answered.push("api"),
    );
    handler({ url: "/v1/workspaces/w/sandboxEngines/s/filesystem:upload" } as never, {} as never);
    handler({ url: "/v1/other" } as never, {} as never);
    expect(answered).toEqual(["file transfer", "api"]);
  });
});
