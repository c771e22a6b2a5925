import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { RequestTraceHolder } from "@aiem/kit/observability";
import type { Logger } from "@aiem/kit/logger";
import type { NodeHandler } from "../transcoder/transcoder.js";

export const REQUEST_ID_HEADER = "x-request-id";

// A caller's id is kept when it is short and plain, so it can be traced across systems.
const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

const requestScope = new AsyncLocalStorage<RequestTraceHolder>();

/** The trace ids the request being served took on, for its access-log line (see the RPC interceptor). */
export const currentRequestTrace = (): RequestTraceHolder | undefined => requestScope.getStore();

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
    const trace: RequestTraceHolder = {};
    res.once("close", () => {
      const fields = {
        ...(trace.traceId ? { traceId: trace.traceId, spanId: trace.spanId } : {}),
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
    requestScope.run(trace, () => handler(req, res));
  };
}
