// File transfers as the body of one HTTP/2 stream on the agent's connection: where the agent's
// descriptors cannot be opened from this host (descriptor-transfers.ts).
import type * as http2 from "node:http2";
import { constants as h2 } from "node:http2";
import { Readable } from "node:stream";
import type { FileInfo } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import { DECLARED_TRAILER, cancelOnAbort, errorOf, fileInfoOf, one, response } from "./agent-file-streams.js";
import type { AgentRequest, RawRead, RawWriteOptions } from "./agent-files.js";
import { COMPLETE_TRAILER, FILE_ROUTES_PREFIX } from "./file-routes.js";

export async function readByBody(
  request: AgentRequest,
  path: string,
  signal: AbortSignal | undefined,
): Promise<RawRead> {
  const query = new URLSearchParams({ path });
  const stream = await request("GET", `${FILE_ROUTES_PREFIX}read?${query}`, {}, { endStream: true });
  const headers = await response(stream, signal);
  if (Number(headers[":status"]) !== 200) {
    stream.resume();
    throw errorOf(headers);
  }
  cancelOnAbort(stream, signal);
  const length = one(headers["content-length"]);
  return { fileInfo: fileInfoOf(headers), size: length === undefined ? 0 : Number(length), body: stream };
}

export async function writeByBody(
  request: AgentRequest,
  query: URLSearchParams,
  body: Readable | AsyncIterable<Uint8Array>,
  options: RawWriteOptions,
): Promise<FileInfo | undefined> {
  const stream: http2.ClientHttp2Stream = await request(
    "PUT",
    `${FILE_ROUTES_PREFIX}write?${query}`,
    DECLARED_TRAILER,
    { endStream: false, waitForTrailers: true },
  );
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
}
