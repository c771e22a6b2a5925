// Server-streaming calls over REST: newline-delimited JSON, the status line held back briefly so
// that a call failing at once still gets its HTTP status.
import type { DescMethodStreaming, Registry } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import type { EdgeLogger } from "../logger.js";
import { drained } from "@aiem/kit/server";
import { type LargeBytes, base64Texts, jsonPieces, largeBytes } from "./bytes-json.js";
import { responseHeaders } from "./http-io.js";
import type { RouteEntry } from "./route-table.js";
import { statusJson } from "./status.js";
import type { NodeResponse } from "./transcoder.js";

const STREAM_HEADER_DELAY_MS = 1_000;

/**
 * Writes one message as a `{"result": ...}` line. Large bytes values (process output, file data)
 * go out as base64 written from the bytes, not inside the JSON text: JSON.stringify would scan
 * each such string once more and the line would be one more copy of it (a third of the server's
 * CPU for 100 MB of output). Returns what the last write returned.
 */
function writeLine(
  res: NodeResponse,
  route: RouteEntry,
  message: unknown,
  encode: (route: RouteEntry, message: unknown, large?: LargeBytes) => string,
): boolean {
  const large = largeBytes();
  const pieces = jsonPieces(encode(route, message, large), large);
  if (pieces.length === 1) return res.write(`{"result":${pieces[0] as string}}\n`);
  // One chunk on the wire for the line's pieces.
  res.cork();
  res.write('{"result":');
  for (const piece of pieces) {
    if (typeof piece === "string") res.write(piece);
    else for (const text of base64Texts(piece)) res.write(text, "latin1");
  }
  const ok = res.write("}\n");
  res.uncork();
  return ok;
}

/**
 * Sends a server-streaming call's messages as NDJSON lines (`{"result": ...}`), ending with an
 * `{"error": ...}` line when the stream fails after it began.
 */
export async function streamNdjson(
  route: RouteEntry,
  res: NodeResponse,
  abort: AbortController,
  header: Headers,
  message: Record<string, unknown>,
  context: {
    encode: (route: RouteEntry, message: unknown, large?: LargeBytes) => string;
    logger: EdgeLogger;
    registry: Registry | undefined;
  },
): Promise<void> {
  const { encode, logger, registry } = context;
  // Hold the status line until the first message (or a short while), so a call that fails
  // straight away (not found, permission denied) still gets its proper HTTP status instead of
  // 200 and an error line, while a quiet stream still shows its headers to the client soon.
  const started = (async () => {
    const response = await route.call.transport.stream(
      route.method as DescMethodStreaming,
      abort.signal,
      undefined,
      header,
      createAsyncIterable([message]),
    );
    const messages = response.message[Symbol.asyncIterator]();
    return { header: response.header, messages, first: await messages.next() };
  })();
  let timer: NodeJS.Timeout | undefined;
  let early: Awaited<typeof started> | undefined;
  try {
    early = await Promise.race([
      started,
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), STREAM_HEADER_DELAY_MS))),
    ]);
  } finally {
    clearTimeout(timer);
  }
  const out = early ? responseHeaders(early.header) : {};
  out["content-type"] = "application/x-ndjson";
  out["cache-control"] = "no-store";
  out["x-accel-buffering"] = "no";
  res.writeHead(200, out);
  if (!early && "flushHeaders" in res) res.flushHeaders();
  try {
    const { messages, first } = early ?? (await started);
    let next = first;
    while (!next.done) {
      if (!writeLine(res, route, next.value, encode)) await drained(res);
      if (abort.signal.aborted) return;
      next = await messages.next();
    }
  } catch (reason) {
    if (abort.signal.aborted || res.destroyed) return;
    let error: ConnectError;
    if (reason instanceof ConnectError) error = reason;
    else {
      logger.error("transcoder stream failure", { error: String(reason) });
      error = new ConnectError("internal error", Code.Internal);
    }
    res.end(`{"error":${JSON.stringify(statusJson(error, registry))}}\n`);
    return;
  }
  res.end();
}
