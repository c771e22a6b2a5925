import { randomUUID } from "node:crypto";
import type { Logger } from "@aiem/kit/logger";
import type { NodeHandler } from "../transcoder/transcoder.js";

export const REQUEST_ID_HEADER = "x-request-id";

// A caller's id is kept when it is short and plain, so it can be traced across systems.
const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id (the caller's `x-request-id`, or a new one), returns it in the
 * response header, and writes one structured access-log line when the response ends.
 */
export function withRequestLog(handler: NodeHandler, logger: Logger): NodeHandler {
  return (req, res) => {
    const given = req.headers[REQUEST_ID_HEADER];
    const id = typeof given === "string" && acceptable.test(given) ? given : randomUUID();
    req.headers[REQUEST_ID_HEADER] = id;
    res.setHeader(REQUEST_ID_HEADER, id);
    const start = performance.now();
    res.once("close", () => {
      const fields = {
        requestId: id,
        method: req.method,
        path: (req.url ?? "").split("?")[0],
        status: res.statusCode,
        durationMs: Math.round((performance.now() - start) * 10) / 10,
        grpcStatus: res.getHeader("grpc-status"),
      };
      if (res.statusCode >= 500) logger.warn("request", fields);
      else logger.info("request", fields);
    });
    handler(req, res);
  };
}
