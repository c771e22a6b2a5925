// How the transcoder answers a call that failed before its response began.
import type { Registry } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { EdgeLogger } from "../logger.js";
import { responseHeaders } from "./http-io.js";
import { HttpError, httpStatusOf, statusJson } from "./status.js";
import type { NodeRequest, NodeResponse } from "./transcoder.js";

/** Answers a failed call: its status as HTTP and a `google.rpc.Status` body; anything else is a 500 without details. */
export function replyError(
  req: NodeRequest,
  res: NodeResponse,
  reason: unknown,
  context: { logger: EdgeLogger; registry: Registry | undefined },
): void {
  const { logger, registry } = context;
  let error: ConnectError;
  let status: number;
  let extra: Readonly<Record<string, string>> = {};
  if (reason instanceof HttpError) {
    error = reason.error;
    status = reason.httpStatus;
    extra = reason.headers;
  } else if (reason instanceof ConnectError) {
    error = reason;
    status = httpStatusOf(error.code);
  } else {
    logger.error("transcoder failure", { error: String(reason), url: req.url });
    error = new ConnectError("internal error", Code.Internal);
    status = 500;
  }
  if (res.headersSent || res.destroyed) {
    if (!res.writableEnded) res.end();
    return;
  }
  const body = JSON.stringify(statusJson(error, registry));
  res.writeHead(status, {
    ...extra,
    ...responseHeaders(error.metadata),
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}
