// One TCP port for every protocol: each connection's first bytes decide whether it is HTTP/2
// with prior knowledge (gRPC, Connect over h2c) or HTTP/1.1 (REST, Connect, gRPC-Web), and the
// socket is handed to the matching Node server; both run the same handler.
import {
  createServer as createHttp1Server,
  type IncomingMessage,
  type Server as Http1Server,
  type ServerOptions,
  type ServerResponse,
} from "node:http";
import {
  constants as http2Constants,
  createServer as createHttp2Server,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
  type ServerOptions as Http2ServerOptions,
} from "node:http2";
import { Readable } from "node:stream";
import { createServer as createNetServer, type AddressInfo, type Server, type Socket } from "node:net";
import type { NodeHandler } from "../transcoder/transcoder.js";

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "latin1");

// What an HTTP/2 client may send before the edge acknowledges it, and in how large frames. With
// HTTP/2's defaults (64 KiB windows, 16 KiB frames) a 64 MiB upload is 4096 frames and as many
// window updates through the event loop. A stream may have one request-body limit's worth in
// flight, a connection four; what is not yet read is held only until the handler reads it.
const RECEIVE_SETTINGS = { initialWindowSize: 4 << 20, maxFrameSize: 1 << 20 };
const CONNECTION_WINDOW_BYTES = 16 << 20;

export interface EdgeServerOptions {
  readonly http1?: ServerOptions;
  readonly http2?: Http2ServerOptions;
  /** Idle keep-alive of HTTP/1.1 connections. Default 65 s, longer than common load balancers'. */
  readonly keepAliveTimeoutMs?: number;
  /** A connection that sends nothing for this long before its first request is dropped. Default 30 s. */
  readonly firstBytesTimeoutMs?: number;
}

export interface EdgeServer {
  /** The listening TCP server. */
  readonly server: Server;
  readonly http1: Http1Server;
  readonly http2: Http2Server;
  /** Resolves with the bound address; port 0 picks a free port. */
  listen(port: number, host?: string): Promise<AddressInfo>;
  /** Stops accepting, ends idle connections, and resolves when all are closed. */
  close(): Promise<void>;
}

/** The most of an unread request body the edge reads and drops to give an early error answer whole. */
const HOLD_DRAIN_BYTES = 64 << 20;

/** An HTTP error status, or gRPC's status in the head (a trailers-only answer) other than OK. */
function isErrorHead(status: number, grpcStatus: unknown): boolean {
  return status >= 400 || (grpcStatus !== undefined && String(grpcStatus) !== "0");
}

/** A request body that stays silent this long is not being sent on: its call is answered. */
const HOLD_SILENCE_MS = 100;

/**
 * Reads and drops what is left of `req`'s body; calls `done(true)` at its end, or `done(false)`
 * as soon as more than HOLD_DRAIN_BYTES came, the request broke off, or (with `silenceMs`) no
 * bytes came for that long.
 */
function drainRequest(
  req: IncomingMessage | Http2ServerRequest,
  done: (whole: boolean) => void,
  silenceMs?: number,
): void {
  let dropped = 0;
  let called = false;
  let timer: NodeJS.Timeout | undefined;
  const finish = (whole: boolean) => {
    if (called) return;
    called = true;
    clearTimeout(timer);
    req.off("data", onData);
    done(whole);
  };
  const quiet = () => {
    if (silenceMs === undefined) return;
    clearTimeout(timer);
    timer = setTimeout(() => finish(false), silenceMs);
  };
  const onData = (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > HOLD_DRAIN_BYTES) finish(false);
    else quiet();
  };
  req.on("data", onData);
  req.once("end", () => finish(true));
  req.once("close", () => finish(req.complete));
  req.resume();
  quiet();
}

/** A handler that stops reading early must not destroy the request: its rest is still to be read and dropped. */
function keepRequestOnReturn(req: IncomingMessage | Http2ServerRequest): void {
  req[Symbol.asyncIterator] = function (this: Readable) {
    return Readable.prototype.iterator.call(this, { destroyOnReturn: false });
  };
}

/**
 * Over HTTP/1.1, an error answered before the request's body was read to its end (a body over
 * the limit, refused after its first MiBs) is held back while the rest is read and dropped, up to
 * HOLD_DRAIN_BYTES, and goes out once the client has sent it all; past that bound it goes out and
 * the connection is closed behind it. Before, Connect's reader destroyed the request when it
 * stopped, which left the connection's parser stalled on the unread body: the next call on that
 * keep-alive connection got no answer until the keep-alive timeout reset it (66 s), and
 * connect-node's client did not cope with an answer that came while it was still sending.
 */
function holdEarlyErrors(req: IncomingMessage, res: ServerResponse): void {
  keepRequestOnReturn(req);
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    res.writeHead = writeHead;
    const result = (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    const socket = res.socket;
    // The head is sent with the first write; corked, nothing of the answer leaves before uncork.
    if (req.complete || !socket || !isErrorHead(res.statusCode, res.getHeader("grpc-status"))) return result;
    socket.cork();
    drainRequest(req, (whole) => {
      if (!whole) res.once("finish", () => socket.destroySoon());
      socket.uncork();
    });
    return result;
  } as ServerResponse["writeHead"];
}

/**
 * Over HTTP/2 the same, for the same reason: Node's HTTP/2 client, still holding more than its
 * session memory (10 MB) of an unsent body when an answer's head arrives, resets its own stream
 * (ENHANCE_YOUR_CALM) and reports an internal error instead of the answer. A stream has no cork,
 * so the head, the body, the trailers and the end are kept as calls and made once the body is
 * read. A head that comes before the body's end is kept until it is known what follows it: a
 * message goes out at once with it (a streaming answer), while trailers or the end (gRPC's
 * errors come as a head of 200 and trailers) wait for the body. Only while the client keeps
 * sending: a stream silent for HOLD_SILENCE_MS is answered, so that a client waiting for the
 * answer is not kept waiting on it. Past the bounds the stream is closed behind the answer
 * (RST_STREAM NO_ERROR, RFC 9113 8.1).
 */
function holdEarlyErrorsHttp2(req: Http2ServerRequest, res: Http2ServerResponse): void {
  keepRequestOnReturn(req);
  let draining = false;
  // An answer that ended with the body not read to its end, and not being read: the client is
  // told it may stop sending, as the request's destruction used to (but as no error).
  res.stream.once("finish", () => {
    if (!req.complete && !draining && !req.stream.closed) req.stream.close(http2Constants.NGHTTP2_NO_ERROR);
  });
  type Call = (...a: unknown[]) => unknown;
  const { writeHead, write, addTrailers, end } = res as unknown as Record<
    "writeHead" | "write" | "addTrailers" | "end",
    Call
  >;
  const held: [Call, unknown[]][] = [];
  const release = () => {
    Object.assign(res, { writeHead, write, addTrailers, end });
    delete (res as { headersSent?: boolean }).headersSent;
    // A stream reset meanwhile takes only the end, which lets its writer finish.
    const calls = held.splice(0).filter(([method]) => !res.stream.destroyed || method === end);
    for (const [method, a] of calls) method.apply(res, a);
  };
  const drain = () => {
    if (draining) return;
    draining = true;
    drainRequest(
      req,
      (whole) => {
        release();
        if (!whole && !req.stream.closed)
          res.stream.once("finish", () => req.stream.close(http2Constants.NGHTTP2_NO_ERROR));
      },
      HOLD_SILENCE_MS,
    );
  };
  res.writeHead = function (this: Http2ServerResponse, ...args: unknown[]) {
    if (req.complete || req.stream.closed) {
      res.writeHead = writeHead as Http2ServerResponse["writeHead"];
      return writeHead.apply(this, args);
    }
    held.push([writeHead, args]);
    // Connect writes the head again unless it reads it as sent.
    Object.defineProperty(res, "headersSent", { configurable: true, get: () => true });
    res.write = ((...a: unknown[]) => {
      if (!draining) {
        release();
        return write.apply(res, a);
      }
      held.push([write, a]);
      return true;
    }) as Http2ServerResponse["write"];
    res.addTrailers = ((...a: unknown[]) => {
      held.push([addTrailers, a]);
      drain();
    }) as Http2ServerResponse["addTrailers"];
    res.end = ((...a: unknown[]) => {
      held.push([end, a]);
      drain();
      return res;
    }) as Http2ServerResponse["end"];
    const [status, headers] = args as [number, Record<string, unknown> | undefined];
    if (isErrorHead(status, headers?.["grpc-status"] ?? res.getHeader("grpc-status"))) drain();
    return this;
  } as Http2ServerResponse["writeHead"];
}

export function createEdgeServer(handler: NodeHandler, options: EdgeServerOptions = {}): EdgeServer {
  const http1 = createHttp1Server(options.http1 ?? {}, (req, res) => {
    holdEarlyErrors(req, res);
    handler(req, res);
  });
  http1.keepAliveTimeout = options.keepAliveTimeoutMs ?? 65_000;
  const http2 = createHttp2Server(
    { ...options.http2, settings: { ...RECEIVE_SETTINGS, ...options.http2?.settings } },
    (req: Http2ServerRequest, res: Http2ServerResponse) => {
      holdEarlyErrorsHttp2(req, res);
      handler(req, res);
    },
  );
  const sessions = new Set<Http2Session>();
  http2.on("session", (session) => {
    // The connection's window is no setting: it is raised on each session.
    session.setLocalWindowSize(CONNECTION_WINDOW_BYTES);
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  const sockets = new Set<Socket>();
  const firstBytesTimeout = options.firstBytesTimeoutMs ?? 30_000;

  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    let seen: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const n = Math.min(seen.length, PREFACE.length);
      const h2 = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      // Wait for more only while the bytes so far could still be the start of the preface.
      if (h2 && n < PREFACE.length) return;
      socket.off("data", onData);
      socket.off("error", onEarlyError);
      socket.setTimeout(0);
      socket.off("timeout", onEarlyError);
      socket.pause();
      socket.unshift(seen);
      (h2 ? http2 : http1).emit("connection", socket);
      process.nextTick(() => socket.resume());
    };
    const onEarlyError = () => socket.destroy();
    socket.on("data", onData);
    socket.on("error", onEarlyError);
    // Until it is handed over, nobody else would ever time out a silent connection.
    socket.setTimeout(firstBytesTimeout);
    socket.on("timeout", onEarlyError);
  });

  return {
    server,
    http1,
    http2,
    listen(port, host) {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        http1.closeIdleConnections();
        for (const session of sessions) session.close();
        // Whatever is still busy after a grace period is cut off.
        const timer = setTimeout(() => {
          http1.closeAllConnections();
          for (const session of sessions) session.destroy();
          for (const socket of sockets) socket.destroy();
        }, 2_000);
        timer.unref();
        server.once("close", () => clearTimeout(timer));
      });
    },
  };
}
