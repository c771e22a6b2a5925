// One interceptor, outermost on every host, gives each RPC its span and its metrics: a server
// span continuing the caller's `traceparent` (so a part behind the edge continues the edge's
// span), and the request, error and latency series. REST calls reach it too, as the transcoder
// runs the host's interceptors around each call.
import { context, trace, type Context } from "@opentelemetry/api";
import { Code, ConnectError, type Interceptor, type StreamResponse, type UnaryResponse } from "@connectrpc/connect";
import type { Metrics } from "./metrics.js";
import { contextFromHeaders, recordError, SpanKind, tracer } from "./trace-context.js";

/** `not_found`, `ok`: the status names of the gRPC spec, as Prometheus labels take them. */
export function codeLabel(code: Code | undefined): string {
  if (code === undefined) return "ok";
  return (Code[code] ?? String(code)).replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

/** Holds the trace ids of the RPC a request became, for the access-log line written after it. */
export interface RequestTraceHolder {
  traceId?: string;
  spanId?: string;
}

export function createObservabilityInterceptor(options: {
  metrics?: Metrics;
  /** Where the request's access-log line finds the span's ids (see withRequestLog). */
  holder?: () => RequestTraceHolder | undefined;
}): Interceptor {
  const { metrics } = options;
  return (next) => async (req) => {
    const service = req.service.typeName;
    const method = req.method.name;
    const parent: Context = contextFromHeaders(req.header);
    const span = tracer().startSpan(
      `${service}/${method}`,
      {
        kind: SpanKind.SERVER,
        attributes: { "rpc.system": "connect_rpc", "rpc.service": service, "rpc.method": method },
      },
      parent,
    );
    const holder = options.holder?.();
    if (holder && span.isRecording()) {
      const ids = span.spanContext();
      holder.traceId = ids.traceId;
      holder.spanId = ids.spanId;
    }
    const started = performance.now();
    const finish = (err: unknown) => {
      const code = err === undefined ? undefined : ConnectError.from(err).code;
      const label = codeLabel(code);
      span.setAttribute("rpc.grpc.status_code", code ?? 0);
      if (err !== undefined && isServerFault(code)) recordError(span, err);
      span.end();
      if (!metrics) return;
      metrics.rpcRequests.inc({ service, method, code: label });
      if (code !== undefined) metrics.rpcErrors.inc({ service, method, code: label });
      metrics.rpcDuration.observe({ service, method }, (performance.now() - started) / 1000);
    };
    const spanContext = trace.setSpan(parent, span);
    let res: UnaryResponse | StreamResponse;
    try {
      res = await context.with(spanContext, () => next(req));
    } catch (err) {
      finish(err);
      throw err;
    }
    if (!res.stream) {
      finish(undefined);
      return res;
    }
    return { ...res, message: endsWith(res.message, spanContext, finish) };
  };
}

// Client mistakes (not found, invalid argument) are the call working as meant; only what the
// server failed at marks the span as an error.
function isServerFault(code: Code | undefined): boolean {
  return (
    code === Code.Internal ||
    code === Code.Unknown ||
    code === Code.Unavailable ||
    code === Code.DataLoss ||
    code === Code.DeadlineExceeded
  );
}

// Each step of the stream runs in the call's span: a streaming handler's body runs as the
// framework pulls its messages, after the interceptor has returned.
async function* endsWith<T>(
  messages: AsyncIterable<T>,
  ctx: Context,
  finish: (err: unknown) => void,
): AsyncGenerator<T> {
  let outcome: unknown = new ConnectError("the client went away", Code.Canceled);
  let early = true;
  const iterator = messages[Symbol.asyncIterator]();
  try {
    for (;;) {
      const step = await context.with(ctx, () => iterator.next());
      if (step.done) break;
      yield step.value;
    }
    outcome = undefined;
    early = false;
  } catch (err) {
    outcome = err;
    early = false;
    throw err;
  } finally {
    // Ended early (the client went away): counted as cancelled, and the source closed.
    if (early) await context.with(ctx, async () => iterator.return?.()).catch(() => undefined);
    finish(outcome);
  }
}
