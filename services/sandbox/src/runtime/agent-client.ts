// A typed client for one sandbox's agent: gRPC over HTTP/2 on the agent's unix socket, plus a
// helper that turns the Tunnel call into an ordinary Node duplex stream for port forwarding.
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { Duplex } from "node:stream";
import type { MessageInitShape } from "@bufbuild/protobuf";
import * as http2 from "node:http2";
import { type CallOptions, type Client, Code, ConnectError, createClient } from "@connectrpc/connect";
import { type GrpcTransportOptions, createGrpcTransport } from "@connectrpc/connect-node";
import { AgentService, type TunnelRequestSchema } from "@aiem/proto/enginemanager/agent/v1/agent_service_pb.js";
import { type AgentFiles, createAgentFiles } from "./agent-files.js";
import { type AgentIdentity, type ReadPeerCredentials, peerMismatch } from "./agent-peer.js";

export type AgentClient = Client<typeof AgentService>;

export interface AgentConnection {
  readonly client: AgentClient;
  /** Files as raw HTTP/2 bodies on the same connection (agent-files.ts). */
  readonly files: AgentFiles;
  /** Closes the HTTP/2 connection; calls in flight fail. */
  close(): void;
}

export interface AgentConnectionOptions {
  /** Largest message either side may send; bounds WriteFile content. Default 256 MiB. */
  readonly maxMessageBytes?: number;
  /** The host pid of the sandbox's outermost process, when the agent runs on this host (agent-files.ts). */
  readonly sandboxPid?: number | undefined;
  /**
   * The agent, as checked on every connection before anything is sent on it (agent-peer.ts):
   * a connection served by anyone else is closed and the call fails UNAVAILABLE. Its pid is also
   * the process whose descriptors agent-files.ts opens. Unset only for an agent started by hand
   * (tests of the agent alone).
   */
  readonly agent?: { readonly identity: AgentIdentity; readonly read: ReadPeerCredentials } | undefined;
  /** Sent with every request (`aiem-agent-token`): an agent reached over TCP answers nothing else. */
  readonly token?: string | undefined;
}

// sun_path holds 108 bytes. A longer socket path is reached through an open descriptor of its
// directory instead, which the kernel resolves like a short path.
const MAX_SOCKET_PATH = 100;

type NodeHttp2ClientSessionManager = NonNullable<GrpcTransportOptions["sessionManager"]>;

/** HTTP/2 flow-control windows: large, so bulk transfers are not paced by window updates. */
export const AGENT_WINDOW_BYTES = 32 << 20;
export const AGENT_FRAME_BYTES = 1 << 20;

/**
 * One HTTP/2 connection to the agent's socket, made on first use and again after it broke. Its
 * own instead of Connect's session manager because the connection-level flow-control window can
 * only be raised on the session object, which Connect's manager keeps to itself.
 */
class AgentSessionManager implements NodeHttp2ClientSessionManager {
  readonly authority: string;
  #session: http2.ClientHttp2Session | undefined;
  #connecting: Promise<http2.ClientHttp2Session> | undefined;
  #closed = false;

  constructor(
    authority: string,
    private readonly target: string | AgentAddress,
    private readonly agent: AgentConnectionOptions["agent"],
    private readonly token?: string,
  ) {
    this.authority = authority;
  }

  /** A connection to the socket, checked to be the agent's before it is used. */
  #open(): Promise<net.Socket> {
    return new Promise<net.Socket>((resolve, reject) => {
      const target = this.target;
      const socket = typeof target === "string" ? net.createConnection(target) : net.createConnection(target);
      if (typeof target !== "string") socket.setNoDelay(true);
      socket.once("error", (error) => {
        reject(new ConnectError(`cannot reach the sandbox agent: ${error.message}`, Code.Unavailable));
      });
      socket.once("connect", () => {
        const mismatch = this.agent ? peerMismatch(socket, this.agent.identity, this.agent.read) : undefined;
        if (mismatch !== undefined) {
          socket.destroy();
          reject(new ConnectError(`the sandbox agent's socket is not the agent's: ${mismatch}`, Code.Unavailable));
          return;
        }
        resolve(socket);
      });
    });
  }

  #connect(): Promise<http2.ClientHttp2Session> {
    if (this.#closed) {
      return Promise.reject(new ConnectError("the connection to the sandbox agent was closed", Code.Unavailable));
    }
    const current = this.#session;
    if (current && !current.closed && !current.destroyed) return Promise.resolve(current);
    this.#connecting ??= this.#open().then(
      (socket) => this.#startSession(socket),
      (error: unknown) => {
        this.#connecting = undefined;
        throw error;
      },
    );
    return this.#connecting;
  }

  #startSession(socket: net.Socket): Promise<http2.ClientHttp2Session> {
    return new Promise<http2.ClientHttp2Session>((resolve, reject) => {
      const session = http2.connect(this.authority, {
        createConnection: () => socket,
        settings: { initialWindowSize: AGENT_WINDOW_BYTES, maxFrameSize: AGENT_FRAME_BYTES },
      });
      session.once("connect", () => {
        session.setLocalWindowSize(AGENT_WINDOW_BYTES);
        this.#connecting = undefined;
        if (this.#closed) {
          session.destroy();
          reject(new ConnectError("the connection to the sandbox agent was closed", Code.Unavailable));
          return;
        }
        this.#session = session;
        resolve(session);
      });
      session.on("error", (error) => {
        if (this.#connecting !== undefined && this.#session !== session) {
          this.#connecting = undefined;
          reject(new ConnectError(`cannot reach the sandbox agent: ${error.message}`, Code.Unavailable));
        }
      });
      session.once("close", () => {
        if (this.#session === session) this.#session = undefined;
      });
    });
  }

  async request(
    method: string,
    path: string,
    headers: http2.OutgoingHttpHeaders,
    options: Omit<http2.ClientSessionRequestOptions, "signal">,
  ): Promise<http2.ClientHttp2Stream> {
    for (;;) {
      const session = await this.#connect();
      try {
        const token = this.token === undefined ? {} : { "aiem-agent-token": this.token };
        return session.request({ ...headers, ...token, ":method": method, ":path": path }, options);
      } catch (error) {
        // A connection that went away between connect and request: make a new one.
        if (session.closed || session.destroyed) {
          if (this.#session === session) this.#session = undefined;
          continue;
        }
        throw error;
      }
    }
  }

  notifyResponseByteRead(): void {
    // No keep-alive pings on a local socket: nothing to note.
  }

  close(): void {
    this.#closed = true;
    // With an error, so that streams in flight fail instead of waiting for an end that never comes.
    this.#session?.destroy(new ConnectError("the connection to the sandbox agent was closed", Code.Unavailable));
    this.#session = undefined;
  }
}

/** An agent reached over TCP (a sandbox's pod in a cluster) rather than its unix socket. */
export interface AgentAddress {
  readonly host: string;
  readonly port: number;
}

export function connectAgent(socketPath: string | AgentAddress, options: AgentConnectionOptions = {}): AgentConnection {
  let dirFd: number | undefined;
  let target = socketPath;
  if (typeof socketPath === "string" && Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    dirFd = fs.openSync(path.dirname(socketPath), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    target = `/proc/self/fd/${dirFd}/${path.basename(socketPath)}`;
  }
  const maxMessageBytes = options.maxMessageBytes ?? 256 << 20;
  const baseUrl = "http://agent.sandbox.invalid";
  const sessionManager = new AgentSessionManager(baseUrl, target, options.agent, options.token);
  const transport = createGrpcTransport({
    baseUrl,
    sessionManager,
    readMaxBytes: maxMessageBytes,
    writeMaxBytes: maxMessageBytes,
    // A local socket: compressing would only burn CPU on both ends.
    acceptCompression: [],
  });
  return {
    client: createClient(AgentService, transport),
    files: createAgentFiles(
      (method, path, headers, options) => sessionManager.request(method, path, headers, options),
      options.sandboxPid,
      options.agent?.identity,
    ),
    close() {
      sessionManager.close();
      if (dirFd !== undefined) {
        fs.closeSync(dirFd);
        dirFd = undefined;
      }
    },
  };
}

type TunnelRequestInit = MessageInitShape<typeof TunnelRequestSchema>;

/** The request side of a Tunnel call: written to by the duplex, read by the transport. */
function createRequestQueue() {
  const items: { message: TunnelRequestInit; taken: () => void }[] = [];
  let ended = false;
  let closed = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  async function* iterate(): AsyncGenerator<TunnelRequestInit> {
    for (;;) {
      const item = items.shift();
      if (item) {
        item.taken();
        yield item.message;
        continue;
      }
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  }
  return {
    iterable: iterate(),
    /** Queues a message; resolves when the transport took it, which paces the writer. */
    push(message: TunnelRequestInit): Promise<void> {
      if (closed || ended) return Promise.resolve();
      return new Promise<void>((taken) => {
        items.push({ message, taken });
        notify();
      });
    },
    /** No more messages: the transport half-closes after sending what is queued. */
    end() {
      ended = true;
      notify();
    },
    /** The call is over: drop what is queued and release its writers. */
    close() {
      closed = true;
      ended = true;
      for (const item of items.splice(0)) item.taken();
      notify();
    },
  };
}

/**
 * Opens a forwarded TCP connection to `port` on the sandbox's loopback and returns it as a duplex
 * stream. Ending the writable side half-closes the connection; destroying the stream cancels the
 * call, which resets the connection in the sandbox. Fails (with the call's ConnectError) when
 * nothing listens on the port.
 */
export async function openTunnel(client: AgentClient, port: number, options: CallOptions = {}): Promise<Duplex> {
  const requests = createRequestQueue();
  const abort = new AbortController();
  const outer = options.signal;
  const onOuterAbort = () => abort.abort(outer?.reason);
  outer?.addEventListener("abort", onOuterAbort, { once: true });
  void requests.push({ frame: { case: "open", value: { port } } });
  const responses = client.tunnel(requests.iterable, { ...options, signal: abort.signal })[Symbol.asyncIterator]();
  let first: IteratorResult<unknown>;
  try {
    first = await responses.next();
  } catch (error) {
    outer?.removeEventListener("abort", onOuterAbort);
    abort.abort();
    throw error;
  }
  if (first.done) {
    outer?.removeEventListener("abort", onOuterAbort);
    throw new Error(`tunnel to port ${port} closed before it opened`);
  }

  let resumeReading: (() => void) | undefined;
  let pumping = false;
  let finished = false;
  const duplex = new Duplex({
    allowHalfOpen: true,
    write(chunk: Buffer, _encoding, callback) {
      requests.push({ frame: { case: "data", value: chunk } }).then(() => callback(), callback);
    },
    final(callback) {
      requests.end();
      callback();
    },
    read() {
      const r = resumeReading;
      resumeReading = undefined;
      r?.();
      if (!pumping) {
        pumping = true;
        void pump();
      }
    },
    destroy(error, callback) {
      if (!finished) abort.abort();
      requests.close();
      outer?.removeEventListener("abort", onOuterAbort);
      callback(error);
    },
  });

  async function pump(): Promise<void> {
    try {
      for (;;) {
        const next = await responses.next();
        if (next.done) break;
        const frame = next.value.frame;
        if (frame.case !== "data") continue;
        if (!duplex.push(frame.value)) {
          await new Promise<void>((resolve) => (resumeReading = resolve));
        }
      }
      finished = true;
      requests.close();
      duplex.push(null);
    } catch (error) {
      finished = true;
      requests.close();
      if (!duplex.destroyed) duplex.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  }
  return duplex;
}
