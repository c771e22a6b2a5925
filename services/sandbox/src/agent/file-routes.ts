// Files as plain HTTP/2 bodies on the agent's socket, beside the Connect service. A file through
// ReadFile/WriteFileStream is cut into protobuf messages, each encoded, framed, decoded and copied
// on both sides; here the bytes go from the file descriptor to the stream and back as they are,
// which is what makes large transfers run at the speed of the disk (issue 15). Paths are resolved
// and checked by the same filesystem calls as ReadFile and WriteFile, so the rules (symbolic links
// stay inside the sandbox, the agent's directory and the system directories are out of reach,
// writes go to a temporary file renamed at the end) are those of the Connect calls.
//
//   GET /aiem.agent.files/probe                      204: this agent has these routes
//   GET /aiem.agent.files/read?path=P                200, the bytes; header aiem-file-info
//   PUT /aiem.agent.files/write?path=P&create_parents=0|1&overwrite=0|1[&mode=N]
//                                                    body: the bytes, then the trailer
//                                                    aiem-complete: 1; 200, header aiem-file-info
// aiem-file-info is the FileInfo message, binary, in base64. A read of a file with a size sends
// that many bytes with a Content-Length, and resets the stream should the file shrink meanwhile
// (a short body is never passed off as the file); a file of size 0 (as /proc's are) is read to
// its end. A failure answers status 400 with headers aiem-error-code (the Connect code, a
// number) and aiem-error-message (URI-encoded), and no body.
import * as fs from "node:fs";
import * as http2 from "node:http2";
import { pipeline } from "node:stream/promises";
import { toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { FileInfoSchema } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import { invalidArgument } from "./errors.js";
import { toFileInfo } from "./file-info.js";
import type { Filesystem } from "./filesystem.js";

export const FILE_ROUTES_PREFIX = "/aiem.agent.files/";
export const FILE_INFO_HEADER = "aiem-file-info";
export const ERROR_CODE_HEADER = "aiem-error-code";
export const ERROR_MESSAGE_HEADER = "aiem-error-message";
/** The trailer with which a client says a write's body is whole. */
export const COMPLETE_TRAILER = "aiem-complete";

/** Bytes read from the file per chunk: large, so a transfer is few system calls and frames. */
const READ_CHUNK_BYTES = 1 << 20;

/** Bytes gathered from the request before they are written: DATA frames are often 16-64 KiB. */
const WRITE_BATCH_BYTES = 1 << 20;

type Request = http2.Http2ServerRequest;

/**
 * The request's chunks in batches of about WRITE_BATCH_BYTES, each written with one writev:
 * far fewer system calls (and waits on the disk's writeback) than one write per frame,
 * without copying. The HTTP/2 window keeps the transfer going while a batch is written.
 */
async function* batches(req: Request): AsyncGenerator<Uint8Array[]> {
  let batch: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Uint8Array>) {
    batch.push(chunk);
    size += chunk.length;
    if (size >= WRITE_BATCH_BYTES) {
      yield batch;
      batch = [];
      size = 0;
    }
  }
  // A body cut short must not be renamed into place as the file, and the end of the body does
  // not tell: a client's stream.close() ends its side before it resets the stream, so a cancelled
  // upload can arrive as a body that ended. The client marks a body it sent whole with a trailer.
  if (req.trailers[COMPLETE_TRAILER] !== "1") throw new ConnectError("the upload was cancelled before its end", Code.Canceled);
  if (batch.length > 0) yield batch;
}
type Response = http2.Http2ServerResponse;

function flag(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  if (value === null || value === "0" || value === "false") return false;
  if (value === "1" || value === "true") return true;
  throw invalidArgument(`${name}: must be 0 or 1`);
}

function fileInfoHeader(info: Parameters<typeof toBinary<typeof FileInfoSchema>>[1]): string {
  return Buffer.from(toBinary(FileInfoSchema, info)).toString("base64");
}

/** Ends the exchange early: the client is told to stop sending what is left of its body. */
function stopReading(req: Request): void {
  if (!req.readableEnded && !req.stream.destroyed) req.stream.close(http2.constants.NGHTTP2_NO_ERROR);
}

function sendError(req: Request, res: Response, error: unknown): void {
  const err = ConnectError.from(error);
  if (res.headersSent) {
    // The status line is gone: a reset is how the client learns the body is not whole.
    req.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    return;
  }
  res.writeHead(400, {
    [ERROR_CODE_HEADER]: String(err.code),
    [ERROR_MESSAGE_HEADER]: encodeURIComponent(err.rawMessage),
  });
  res.end(() => stopReading(req));
}

export function createFileRoutes(filesystem: Filesystem) {
  async function read(query: URLSearchParams, res: Response): Promise<void> {
    const opened = await filesystem.openForRead(query.get("path") ?? "");
    const size = Number(opened.stats.size);
    // The stream owns the descriptor from here on and closes it however it ends.
    const source = fs.createReadStream("", {
      fd: opened.fd,
      start: 0,
      ...(size > 0 ? { end: size - 1 } : {}),
      highWaterMark: READ_CHUNK_BYTES,
    });
    res.writeHead(200, {
      "content-type": "application/octet-stream",
      [FILE_INFO_HEADER]: fileInfoHeader(toFileInfo(opened.display, opened.stats)),
      ...(size > 0 ? { "content-length": String(size) } : {}),
    });
    await pipeline(source, res, { end: false });
    if (size > 0 && source.bytesRead < size) {
      throw new ConnectError(`${opened.display}: shrank while it was being read`, Code.Aborted);
    }
    res.end();
  }

  async function write(query: URLSearchParams, req: Request, res: Response): Promise<void> {
    const modeText = query.get("mode");
    const mode = modeText === null ? undefined : Number(modeText);
    if (mode !== undefined && !Number.isInteger(mode)) throw invalidArgument("mode: must be a number");
    const info = await filesystem.writeFile(
      query.get("path") ?? "",
      batches(req),
      flag(query, "create_parents"),
      flag(query, "overwrite"),
      mode,
    );
    res.writeHead(200, { [FILE_INFO_HEADER]: fileInfoHeader(info) });
    res.end();
  }

  /** Serves the request when its path is one of these routes; false for any other path. */
  return function handle(req: Request, res: Response): boolean {
    const url = req.url ?? "";
    if (!url.startsWith(FILE_ROUTES_PREFIX)) return false;
    const q = url.indexOf("?");
    const name = url.slice(FILE_ROUTES_PREFIX.length, q < 0 ? undefined : q);
    const query = new URLSearchParams(q < 0 ? "" : url.slice(q + 1));
    let work: Promise<void>;
    if (name === "probe" && req.method === "GET") {
      res.writeHead(204);
      res.end();
      return true;
    } else if (name === "read" && req.method === "GET") {
      work = read(query, res);
    } else if (name === "write" && req.method === "PUT") {
      work = write(query, req, res);
    } else {
      work = Promise.reject(new ConnectError(`no route for ${req.method} ${url.slice(0, q < 0 ? undefined : q)}`, Code.Unimplemented));
    }
    work.catch((error: unknown) => {
      if (res.stream.destroyed) return;
      sendError(req, res, error);
    });
    return true;
  };
}
