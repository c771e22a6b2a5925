// Requests to a content origin without a resolver for `*.localhost`: the connection goes to the
// edge's address and the Host header names the origin, as a browser's would.
import { request } from "node:http";
import { connect, type Socket } from "node:net";

export interface HostReply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** One HTTP/1.1 request to `edgeUrl`'s address with `host` as its Host header. */
export function hostRequest(
  edgeUrl: string,
  host: string,
  path: string,
  headers: Record<string, string> = {},
  method = "GET",
): Promise<HostReply> {
  const target = new URL(edgeUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: target.hostname, port: target.port, method, path, headers: { ...headers, host } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString() }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** The host part (`name:port`) of a URL, for the Host header. */
export function hostOf(url: string): string {
  return new URL(url).host;
}

/**
 * A WebSocket handshake (enough of one for an echo server that answers 101 and sends back what
 * it gets): resolves with the answer's head and the socket, still open.
 */
export function upgradeRequest(
  edgeUrl: string,
  host: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; head: string; socket: Socket }> {
  const target = new URL(edgeUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname, () => {
      const lines = [
        `GET ${path} HTTP/1.1`,
        `host: ${host}`,
        "connection: Upgrade",
        "upgrade: websocket",
        "sec-websocket-version: 13",
        "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==",
      ];
      for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    });
    let seen = "";
    const onData = (d: Buffer) => {
      seen += d.toString("latin1");
      const end = seen.indexOf("\r\n\r\n");
      if (end < 0) return;
      socket.off("data", onData);
      const head = seen.slice(0, end);
      resolve({ status: Number(head.split(" ")[1]), head, socket });
    };
    socket.on("data", onData);
    socket.on("error", reject);
  });
}

/** Writes `text` on an upgraded socket and resolves with the first bytes that come back. */
export function echo(socket: Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    socket.once("data", (d: Buffer) => resolve(d.toString()));
    socket.once("error", reject);
    socket.write(text);
  });
}
