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
//   GET /aiem.agent.files/read-descriptor?path=P    200 with headers only: aiem-descriptor (the
//                                                    agent's descriptor of the opened file, held
//                                                    until the client closes the stream),
//                                                    aiem-file-id, aiem-agent-pid, aiem-file-info
//   POST /aiem.agent.files/write-descriptor?path=P&create_parents=..&overwrite=..[&mode=N]
//                                                    200 with aiem-descriptor (the temporary file),
//                                                    aiem-file-id, aiem-agent-pid and, where files
//                                                    are limited, aiem-max-bytes; the client writes
//                                                    the file through the descriptor, then ends its
//                                                    side with the trailer aiem-complete: 1; the
//                                                    answer's trailers carry aiem-file-info, or
//                                                    the error headers
// The descriptor routes let the sandbox service, on the same host, open the file as
// /proc/<agent>/fd/<n> and move the bytes itself, with no copy through this process or HTTP/2:
// the agent still resolves and checks the path, creates the temporary file and renames it.
// aiem-file-id is `<st_dev>:<st_ino>`, so the opener can tell that it holds that very file.
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
import { type FileInfo, FileInfoSchema } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import { invalidArgument } from "./errors.js";
import { toFileInfo } from "./file-info.js";
import type { Filesystem } from "./filesystem.js";

export const FILE_ROUTES_PREFIX = "/aiem.agent.files/";
export const FILE_INFO_HEADER = "aiem-file-info";
export const ERROR_CODE_HEADER = "aiem-error-code";
export const ERROR_MESSAGE_HEADER = "aiem-error-message";
/** The trailer with which a client says a write's body is whole. */
export const COMPLETE_TRAILER = "aiem-complete";
export const DESCRIPTOR_HEADER = "aiem-descriptor";
export const FILE_ID_HEADER = "aiem-file-id";
export const AGENT_PID_HEADER = "aiem-agent-pid";
export const MAX_BYTES_HEADER = "aiem-max-bytes";

/** How long a descriptor waits for its client to open it: a client that never closes the stream. */
const DESCRIPTOR_HOLD_MS = 30_000;

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
  if (req.trailers[COMPLETE_TRAILER] !== "1")
    throw new ConnectError("the upload was cancelled before its end", Code.Canceled);
  if (batch.length > 0) yield batch;
}
type Response = http2.Http2ServerResponse;

function flag(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  if (value === null || value === "0" || value === "false") return false;
  if (value === "1" || value === "true") return true;
  throw invalidArgument(`${name}: must be 0 or 1`);
}

function modeOf(query: URLSearchParams): number | undefined {
  const text = query.get("mode");
  const mode = text === null ? undefined : Number(text);
  if (mode !== undefined && !Number.isInteger(mode)) throw invalidArgument("mode: must be a number");
  return mode;
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

function fileId(st: { dev: number | bigint; ino: number | bigint }): string {
  return `${st.dev}:${st.ino}`;
}

/** Resolves when the client has closed the stream (or after the longest hold). */
function closedByClient(req: Request): Promise<void> {
  return new Promise((resolve) => {
    if (req.stream.closed || req.stream.destroyed) return resolve();
    const timer = setTimeout(() => {
      req.stream.close(http2.constants.NGHTTP2_CANCEL);
      resolve();
    }, DESCRIPTOR_HOLD_MS);
    req.stream.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Resolves when the client ended its side with the completion trailer; fails when it ended it
 * without one or reset the stream (a writer that gave up: the file is not kept).
 */
function completedByClient(req: Request): Promise<void> {
  return new Promise((resolve, reject) => {
    const cancelled = () => reject(new ConnectError("the write was cancelled before its end", Code.Canceled));
    req.once("end", () => (req.trailers[COMPLETE_TRAILER] === "1" ? resolve() : cancelled()));
    req.stream.once("close", cancelled);
    // No body is expected; anything sent is read and dropped so that "end" comes.
    req.resume();
  });
}

export function createFileRoutes(filesystem: Filesystem, options: { readonly maxFileBytes?: number | undefined } = {}) {
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
    const info = await filesystem.writeFile(
      query.get("path") ?? "",
      batches(req),
      flag(query, "create_parents"),
      flag(query, "overwrite"),
      modeOf(query),
    );
    res.writeHead(200, { [FILE_INFO_HEADER]: fileInfoHeader(info) });
    res.end();
  }

  async function readDescriptor(query: URLSearchParams, req: Request, res: Response): Promise<void> {
    const opened = await filesystem.openForRead(query.get("path") ?? "");
    try {
      res.writeHead(200, {
        [DESCRIPTOR_HEADER]: String(opened.fd),
        [FILE_ID_HEADER]: fileId(opened.stats),
        [AGENT_PID_HEADER]: String(process.pid),
        [FILE_INFO_HEADER]: fileInfoHeader(toFileInfo(opened.display, opened.stats)),
      });
      await closedByClient(req);
    } finally {
      fs.close(opened.fd, () => undefined);
    }
  }

  async function writeDescriptor(query: URLSearchParams, req: Request, res: Response): Promise<void> {
    const fill = async (fd: number) => {
      res.writeHead(200, {
        [DESCRIPTOR_HEADER]: String(fd),
        [FILE_ID_HEADER]: fileId(fs.fstatSync(fd)),
        [AGENT_PID_HEADER]: String(process.pid),
        ...(options.maxFileBytes === undefined ? {} : { [MAX_BYTES_HEADER]: String(options.maxFileBytes) }),
      });
      await completedByClient(req);
    };
    let info: FileInfo;
    try {
      info = await filesystem.writeFile(
        query.get("path") ?? "",
        fill,
        flag(query, "create_parents"),
        flag(query, "overwrite"),
        modeOf(query),
      );
    } catch (error) {
      if (!res.headersSent || res.stream.destroyed) throw error;
      // The client holds the answer's head already: the refusal (a file over the limit, a
      // rename that failed) comes as trailers, with the code a head would have had.
      const err = ConnectError.from(error);
      res.addTrailers({
        [ERROR_CODE_HEADER]: String(err.code),
        [ERROR_MESSAGE_HEADER]: encodeURIComponent(err.rawMessage),
      });
      res.end();
      return;
    }
    res.addTrailers({ [FILE_INFO_HEADER]: fileInfoHeader(info) });
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
    } else if (name === "read-descriptor" && req.method === "GET") {
      work = readDescriptor(query, req, res);
    } else if (name === "write-descriptor" && req.method === "POST") {
      work = writeDescriptor(query, req, res);
    } else {
      work = Promise.reject(
        new ConnectError(`no route for ${req.method} ${url.slice(0, q < 0 ? undefined : q)}`, Code.Unimplemented),
      );
    }
    work.catch((error: unknown) => {
      if (res.stream.destroyed) return;
      sendError(req, res, error);
    });
    return true;
  };
}
