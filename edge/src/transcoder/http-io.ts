// The node:http side of the transcoder: request bodies with a size limit, and the
// application headers a Connect response hands back.
import { Code, ConnectError } from "@connectrpc/connect";
import { copyApplicationHeaders } from "../headers.js";
import { HttpError } from "./status.js";
import type { NodeRequest } from "./transcoder.js";

export function responseHeaders(from: Headers): Record<string, string> {
  const h = new Headers();
  copyApplicationHeaders(from, h);
  const out: Record<string, string> = {};
  h.forEach((v, k) => {
    out[k] = v;
  });
  return out;
}

/** Reads the body as text; rejects with 413 past `limit` bytes. */
export function readBody(req: NodeRequest, limit: number): Promise<string> {
  const tooLarge = () =>
    new HttpError(
      413,
      new ConnectError(`the request body is larger than the limit of ${limit} bytes`, Code.ResourceExhausted),
      req.httpVersionMajor === 1 ? { connection: "close" } : {},
    );
  const declared = Number(req.headers["content-length"] ?? Number.NaN);
  if (declared > limit) {
    req.resume();
    return Promise.reject(tooLarge());
  }
  if (
    declared === 0 ||
    (req.headers["content-length"] === undefined &&
      req.headers["transfer-encoding"] === undefined &&
      req.httpVersionMajor === 1)
  ) {
    return Promise.resolve("");
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"));
    };
    const onError = (e: Error) => {
      cleanup();
      reject(e);
    };
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}
