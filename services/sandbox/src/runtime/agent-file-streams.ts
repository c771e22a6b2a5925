// The HTTP/2 side of the agent's raw file routes: a stream's answer, its trailers, its cancelling,
// and the file information and errors the agent sends in headers.
import type * as http2 from "node:http2";
import { constants as h2 } from "node:http2";
import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type FileInfo, FileInfoSchema } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import { DescriptorUnusable } from "./agent-descriptors.js";
import { COMPLETE_TRAILER, ERROR_CODE_HEADER, ERROR_MESSAGE_HEADER, FILE_INFO_HEADER } from "./file-routes.js";

/** A write names its completion trailer up front: the native agent's HTTP/2 server reads only declared trailers. */
export const DECLARED_TRAILER = { trailer: COMPLETE_TRAILER } as const;

export function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function fileInfoOf(headers: http2.IncomingHttpHeaders): FileInfo | undefined {
  const text = one(headers[FILE_INFO_HEADER]);
  return text === undefined ? undefined : fromBinary(FileInfoSchema, Buffer.from(text, "base64"));
}

export function errorOf(headers: http2.IncomingHttpHeaders): ConnectError {
  const code = Number(one(headers[ERROR_CODE_HEADER]));
  const message = one(headers[ERROR_MESSAGE_HEADER]);
  if (!Number.isInteger(code) || message === undefined) {
    return new ConnectError(`the sandbox agent answered ${String(headers[":status"])}`, Code.Internal);
  }
  return new ConnectError(decodeURIComponent(message), code as Code);
}

/** The agent's refusal in `headers`; an agent without the route is told apart, to fall back. */
export function refusalOf(headers: http2.IncomingHttpHeaders): Error {
  const error = errorOf(headers);
  return error.code === Code.Unimplemented ? new DescriptorUnusable(error.rawMessage) : error;
}

/** The response headers of `stream`; cancels the stream when `signal` aborts first. */
export function response(
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
export function cancelOnAbort(stream: http2.ClientHttp2Stream, signal: AbortSignal | undefined): void {
  if (!signal) return;
  const onAbort = () => stream.close(h2.NGHTTP2_CANCEL);
  signal.addEventListener("abort", onAbort, { once: true });
  stream.once("close", () => signal.removeEventListener("abort", onAbort));
}

/** The response's trailers; fails should the stream close without any. */
export function trailersOf(stream: http2.ClientHttp2Stream): Promise<http2.IncomingHttpHeaders> {
  const trailers = new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
    stream.once("trailers", resolve);
    stream.once("close", () =>
      reject(new ConnectError("the sandbox agent closed the stream before its end", Code.Unavailable)),
    );
  });
  trailers.catch(() => undefined);
  return trailers;
}
