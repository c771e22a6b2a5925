// File transfers through the agent's descriptors (agent-descriptors.ts): the agent opens the file
// and this host reads or writes it directly, so the bytes never cross the agent's connection.
import * as fs from "node:fs";
import type * as http2 from "node:http2";
import { constants as h2 } from "node:http2";
import type { Readable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import type { FileInfo } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import { descriptorBody, fillDescriptor, readDescriptorInto } from "./agent-descriptors.js";
import { DECLARED_TRAILER, errorOf, fileInfoOf, one, refusalOf, response, trailersOf } from "./agent-file-streams.js";
import type { AgentRequest, RawRead, RawWriteOptions } from "./agent-files.js";
import { COMPLETE_TRAILER, ERROR_CODE_HEADER, FILE_ROUTES_PREFIX, MAX_BYTES_HEADER } from "./file-routes.js";

/** Opens, here, the descriptor the agent's answer names, with `flags`. */
export type OpenDescriptor = (headers: http2.IncomingHttpHeaders, flags: number) => number;

/** How long a failed write through a descriptor waits for the agent to drop its temporary file. */
const ABANDON_WAIT_MS = 5_000;

export async function readByDescriptor(
  request: AgentRequest,
  openDescriptor: OpenDescriptor,
  path: string,
  signal: AbortSignal | undefined,
): Promise<RawRead> {
  const query = new URLSearchParams({ path });
  const stream = await request("GET", `${FILE_ROUTES_PREFIX}read-descriptor?${query}`, {}, { endStream: true });
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

/**
 * Ended without the completion trailer, the agent drops its temporary file and then answers:
 * waiting for that answer (a while at most) leaves no trace of the write once the caller hears
 * of its failure.
 */
async function abandonWrite(stream: http2.ClientHttp2Stream, trailers: Promise<unknown>): Promise<void> {
  if (stream.closed) return;
  if (!stream.writableEnded) stream.end();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    trailers.catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, ABANDON_WAIT_MS))),
  ]);
  clearTimeout(timer);
  if (!stream.closed) stream.close(h2.NGHTTP2_CANCEL);
}

export async function writeByDescriptor(
  request: AgentRequest,
  openDescriptor: OpenDescriptor,
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
    await abandonWrite(stream, trailers);
    throw error;
  }
}
