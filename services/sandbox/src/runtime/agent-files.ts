// The client of the agent's raw file routes (file-routes.ts): a file's bytes as one HTTP/2
// stream on the agent's connection, without protobuf messages. An agent started before these
// routes existed (a sandbox adopted across an upgrade) answers the probe with 404; the callers
// then use ReadFile and WriteFileStream as before. Where the agent runs on this host (its
// sandbox's outermost pid is known), reads and writes go through the agent's descriptors
// (agent-descriptors.ts) and the bytes never cross the agent's connection; an agent without the
// descriptor routes, or a descriptor that cannot be opened from here, falls back to the bodies.
import * as fs from "node:fs";
import type * as http2 from "node:http2";
import { constants as h2 } from "node:http2";
import { Readable } from "node:stream";
import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type FileInfo, FileInfoSchema } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import {
  AGENT_PID_HEADER,
  COMPLETE_TRAILER,
  DESCRIPTOR_HEADER,
  ERROR_CODE_HEADER,
  ERROR_MESSAGE_HEADER,
  FILE_ID_HEADER,
  FILE_INFO_HEADER,
  FILE_ROUTES_PREFIX,
  MAX_BYTES_HEADER,
} from "./file-routes.js";
import {
  type AgentProcess,
  DescriptorUnusable,
  descriptorBody,
  fillDescriptor,
  findAgentProcess,
  openAgentDescriptor,
  readDescriptorInto,
} from "./agent-descriptors.js";

/** Opens a stream on the agent's connection (the session manager's `request`). */
export type AgentRequest = (
  method: string,
  path: string,
  headers: http2.OutgoingHttpHeaders,
  options: { endStream: boolean; waitForTrailers?: boolean },
) => Promise<http2.ClientHttp2Stream>;

export interface RawRead {
  readonly fileInfo: FileInfo | undefined;
  /** The file's size when it was opened; the body has exactly these bytes, unless it is 0 (a file like /proc's), when it runs to the file's end. */
  readonly size: number;
  /** The bytes; fails should the file shrink meanwhile. Destroy it to stop early. */
  readonly body: Readable;
  /**
   * Where the file is open here: reads it from its start into `target` instead of through
   * `body` (which is then closed), and resolves with how many bytes there were.
   */
  readonly readAll?: ((target: Uint8Array) => Promise<number>) | undefined;
}

export interface RawWriteOptions {
  readonly createParents: boolean;
  readonly overwrite: boolean;
  readonly mode?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

export interface AgentFiles {
  /** Whether the agent serves the raw routes; asked once per connection. */
  supported(): Promise<boolean>;
  read(path: string, options?: { signal?: AbortSignal | undefined }): Promise<RawRead>;
  /** Writes `body` as the whole file. `body` is never destroyed here: after a refusal its owner decides. */
  write(
    path: string,
    body: Readable | AsyncIterable<Uint8Array>,
    options: RawWriteOptions,
  ): Promise<FileInfo | undefined>;
}

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function fileInfoOf(headers: http2.IncomingHttpHeaders): FileInfo | undefined {
  const text = one(headers[FILE_INFO_HEADER]);
  return text === undefined ? undefined : fromBinary(FileInfoSchema, Buffer.from(text, "base64"));
}

function errorOf(headers: http2.IncomingHttpHeaders): ConnectError {
  const code = Number(one(headers[ERROR_CODE_HEADER]));
  const message = one(headers[ERROR_MESSAGE_HEADER]);
  if (!Number.isInteger(code) || message === undefined) {
    return new ConnectError(`the sandbox agent answered ${String(headers[":status"])}`, Code.Internal);
  }
  return new ConnectError(decodeURIComponent(message), code as Code);
}

/** The response headers of `stream`; cancels the stream when `signal` aborts first. */
function response(
  stream: http2.ClientHttp2Stream,
  signal: AbortSignal | undefined,
): Promise<http2.IncomingHttpHeaders> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      stream.off("response", onResponse);
      stream.off("error", onError);
      stream.off("close", onClose);
      signal?.removeEventListener("abort", onAbort);
    };
    const onResponse = (headers: http2.IncomingHttpHeaders) => {
      cleanup();
      resolve(headers);
    };
    const onError = (error: Error) => {
      cleanup();
      reject(new ConnectError(`the sandbox agent's stream failed: ${error.message}`, Code.Unavailable));
    };
    const onClose = () => {
      cleanup();
      reject(new ConnectError("the sandbox agent closed the stream before answering", Code.Unavailable));
    };
    const onAbort = () => {
      cleanup();
      stream.close(h2.NGHTTP2_CANCEL);
      reject(ConnectError.from(signal!.reason, Code.Canceled));
    };
    if (signal?.aborted) return onAbort();
    stream.once("response", onResponse);
    stream.once("error", onError);
    stream.once("close", onClose);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Cancels `stream` when `signal` aborts, until the stream closes. */
function cancelOnAbort(stream: http2.ClientHttp2Stream, signal: AbortSignal | undefined): void {
  if (!signal) return;
  const onAbort = () => stream.close(h2.NGHTTP2_CANCEL);
  signal.addEventListener("abort", onAbort, { once: true });
  stream.once("close", () => signal.removeEventListener("abort", onAbort));
}

/** A write names its completion trailer up front: the native agent's HTTP/2 server reads only declared trailers. */
const DECLARED_TRAILER = { trailer: COMPLETE_TRAILER } as const;

/** How long a failed write through a descriptor waits for the agent to drop its temporary file. */
const ABANDON_WAIT_MS = 5_000;

/** The response's trailers; fails should the stream close without any. */
function trailersOf(stream: http2.ClientHttp2Stream): Promise<http2.IncomingHttpHeaders> {
  const trailers = new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
    stream.once("trailers", resolve);
    stream.once("close", () =>
      reject(new ConnectError("the sandbox agent closed the stream before its end", Code.Unavailable)),
    );
  });
  trailers.catch(() => undefined);
  return trailers;
}

/** The agent's refusal in `headers`; an agent without the route is told apart, to fall back. */
function refusalOf(headers: http2.IncomingHttpHeaders): Error {
  const error = errorOf(headers);
  return error.code === Code.Unimplemented ? new DescriptorUnusable(error.rawMessage) : error;
}

/**
 * @param sandboxPid the host pid of the sandbox's outermost process, where the agent runs on
 * this host: its descriptors are then opened from here.
 * @param known the agent as the runtime checked it (agent-peer.ts): its descriptors are opened,
 * whatever pid the agent names; without it the agent is looked for under `sandboxPid`.
 */
export function createAgentFiles(agentRequest: AgentRequest, sandboxPid?: number, known?: AgentProcess): AgentFiles {
  let probe: Promise<boolean> | undefined;
  // Whether descriptors work with this agent: undefined until the first transfer tells.
  let descriptors: boolean | undefined = sandboxPid === undefined ? false : undefined;
  let agent: AgentProcess | undefined = known;

  function openDescriptor(headers: http2.IncomingHttpHeaders, flags: number): number {
    agent ??= findAgentProcess(sandboxPid!, Number(one(headers[AGENT_PID_HEADER])));
    if (agent === undefined) throw new DescriptorUnusable("the agent's process was not found");
    return openAgentDescriptor(
      agent,
      Number(one(headers[DESCRIPTOR_HEADER])),
      flags,
      one(headers[FILE_ID_HEADER]) ?? "",
    );
  }

  /** Runs `transfer` through descriptors while they work; undefined once they do not. */
  async function viaDescriptor<T>(transfer: () => Promise<T>): Promise<T | undefined> {
    if (descriptors === false) return undefined;
    try {
      const result = await transfer();
      descriptors = true;
      return result;
    } catch (error) {
      if (!(error instanceof DescriptorUnusable)) throw error;
      descriptors = false;
      return undefined;
    }
  }

  async function readByDescriptor(path: string, signal: AbortSignal | undefined): Promise<RawRead> {
    const stream = await request(
      "GET",
      `${FILE_ROUTES_PREFIX}read-descriptor?${new URLSearchParams({ path })}`,
      {},
      { endStream: true },
    );
    try {
      const headers = await response(stream, signal);
      if (Number(headers[":status"]) !== 200) throw refusalOf(headers);
      const fd = openDescriptor(headers, fs.constants.O_RDONLY);
      const fileInfo = fileInfoOf(headers);
      const size = Number(fileInfo?.size ?? 0n);
      const body = descriptorBody(fd, size, path);
      if (signal) {
        const onAbort = () => body.destroy(ConnectError.from(signal.reason, Code.Canceled));
        signal.addEventListener("abort", onAbort, { once: true });
        body.once("close", () => signal.removeEventListener("abort", onAbort));
      }
      const readAll = (target: Uint8Array) => readDescriptorInto(fd, target).finally(() => body.destroy());
      return { fileInfo, size, body, readAll };
    } finally {
      // The agent holds its descriptor until this stream is closed.
      if (!stream.closed) stream.close(h2.NGHTTP2_NO_ERROR);
    }
  }

  async function writeByDescriptor(
    path: string,
    query: URLSearchParams,
    body: Readable | AsyncIterable<Uint8Array>,
    options: RawWriteOptions,
  ): Promise<FileInfo | undefined> {
    const stream = await request("POST", `${FILE_ROUTES_PREFIX}write-descriptor?${query}`, DECLARED_TRAILER, {
      endStream: false,
      waitForTrailers: true,
    });
    let whole = false;
    stream.once("wantTrailers", () => stream.sendTrailers({ [COMPLETE_TRAILER]: whole ? "1" : "0" }));
    const trailers = trailersOf(stream);
    try {
      const headers = await response(stream, options.signal);
      if (Number(headers[":status"]) !== 200) throw refusalOf(headers);
      const fd = openDescriptor(headers, fs.constants.O_WRONLY);
      const limit = one(headers[MAX_BYTES_HEADER]);
      try {
        await fillDescriptor(fd, body, path, limit === undefined ? undefined : Number(limit), options.signal);
      } finally {
        fs.closeSync(fd);
      }
      whole = true;
      stream.end();
      const end = await trailers;
      if (one(end[ERROR_CODE_HEADER]) !== undefined) throw errorOf(end);
      return fileInfoOf(end);
    } catch (error) {
      if (!stream.closed) {
        // Ended without the completion trailer, the agent drops its temporary file and then
        // answers: waiting for that answer (a while at most) leaves no trace of the write once
        // the caller hears of its failure.
        if (!stream.writableEnded) stream.end();
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          trailers.catch(() => undefined),
          new Promise((resolve) => (timer = setTimeout(resolve, ABANDON_WAIT_MS))),
        ]);
        clearTimeout(timer);
        if (!stream.closed) stream.close(h2.NGHTTP2_CANCEL);
      }
      throw error;
    }
  }

  // A stream's failure reaches the caller through response() or through whoever reads the
  // body; this listener only keeps one nobody waits on any more (the connection closing under
  // an abandoned read) from being an uncaught error.
  const request: AgentRequest = async (...args) => {
    const stream = await agentRequest(...args);
    stream.on("error", () => undefined);
    return stream;
  };

  async function ask(): Promise<boolean> {
    const stream = await request("GET", `${FILE_ROUTES_PREFIX}probe`, {}, { endStream: true });
    const headers = await response(stream, undefined);
    stream.resume();
    return Number(headers[":status"]) === 204;
  }

  return {
    supported() {
      probe ??= ask().catch((error: unknown) => {
        // Not known yet (the agent was not reachable): ask again next time.
        probe = undefined;
        throw error;
      });
      return probe;
    },

    async read(path, options = {}) {
      const viaFd = await viaDescriptor(() => readByDescriptor(path, options.signal));
      if (viaFd !== undefined) return viaFd;
      const stream = await request(
        "GET",
        `${FILE_ROUTES_PREFIX}read?${new URLSearchParams({ path })}`,
        {},
        { endStream: true },
      );
      const headers = await response(stream, options.signal);
      if (Number(headers[":status"]) !== 200) {
        stream.resume();
        throw errorOf(headers);
      }
      cancelOnAbort(stream, options.signal);
      const length = one(headers["content-length"]);
      return { fileInfo: fileInfoOf(headers), size: length === undefined ? 0 : Number(length), body: stream };
    },

    async write(path, body, options) {
      const query = new URLSearchParams({
        path,
        create_parents: options.createParents ? "1" : "0",
        overwrite: options.overwrite ? "1" : "0",
        ...(options.mode === undefined ? {} : { mode: String(options.mode) }),
      });
      const viaFd = await viaDescriptor(async () => ({ info: await writeByDescriptor(path, query, body, options) }));
      if (viaFd !== undefined) return viaFd.info;
      const stream = await request("PUT", `${FILE_ROUTES_PREFIX}write?${query}`, DECLARED_TRAILER, {
        endStream: false,
        waitForTrailers: true,
      });
      const source = body instanceof Readable ? body : Readable.from(body, { objectMode: false });
      // The agent keeps the file only with this trailer: the stream's side also ends when it is
      // closed early, which would otherwise look like a whole body.
      let whole = false;
      source.once("end", () => (whole = true));
      stream.once("wantTrailers", () => {
        if (whole) stream.sendTrailers({ [COMPLETE_TRAILER]: "1" });
        else stream.close(h2.NGHTTP2_CANCEL);
      });
      // pipe, not pipeline: a refusal must leave the source to its owner (an HTTP request still
      // to be answered), and a source that fails cancels the write so no partial file is kept.
      const onSourceError = () => stream.close(h2.NGHTTP2_CANCEL);
      source.once("error", onSourceError);
      source.pipe(stream);
      try {
        const headers = await response(stream, options.signal);
        stream.resume();
        if (Number(headers[":status"]) !== 200) throw errorOf(headers);
        return fileInfoOf(headers);
      } catch (error) {
        // Whatever of the body is still unsent is not wanted any more.
        if (!stream.closed) stream.close(h2.NGHTTP2_CANCEL);
        throw error;
      } finally {
        source.off("error", onSourceError);
        source.unpipe(stream);
      }
    },
  };
}
