// Trace context as the product's code uses it: through the OpenTelemetry API only, so that
// this costs nothing where no tracer provider was registered (setUpTracing in tracing.ts).
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from "@opentelemetry/api";
import type { Interceptor } from "@connectrpc/connect";

/** The instrumentation scope of every span the product makes. */
export const TRACER_NAME = "ai-engine-manager";

export const tracer = () => trace.getTracer(TRACER_NAME);

const headersGetter: TextMapGetter<Headers> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key) ?? undefined,
};
const headersSetter: TextMapSetter<Headers> = { set: (carrier, key, value) => carrier.set(key, value) };

/** The context a request's `traceparent` names, under the active one. */
export function contextFromHeaders(headers: Headers, parent: Context = context.active()): Context {
  return propagation.extract(parent, headers, headersGetter);
}

/** Writes the active trace context into `headers` (replacing any the caller sent). */
export function injectTraceHeaders(headers: Headers, ctx: Context = context.active()): void {
  propagation.inject(ctx, headers, headersSetter);
}

/**
 * For the clients of calls between processes (the edge to a part, a part to another replica):
 * the call carries the active span as its `traceparent`, so the other side continues it.
 */
export const traceContextInterceptor: Interceptor = (next) => (req) => {
  injectTraceHeaders(req.header);
  return next(req);
};

/** The active trace context as plain headers, for an outbox row or a NATS message. */
export function traceContextRecord(ctx: Context = context.active()): Record<string, string> {
  const out: Record<string, string> = {};
  propagation.inject(ctx, out);
  return out;
}

/** The context carried in plain headers (a NATS message's, an outbox row's). */
export function contextFromRecord(headers: Readonly<Record<string, string>>, parent: Context = ROOT_CONTEXT): Context {
  return propagation.extract(parent, headers);
}

/** The names of the headers that carry trace context, so copies of a message can drop stale ones. */
export const TRACE_HEADERS = ["traceparent", "tracestate"] as const;

/** `{ traceId, spanId }` of the active span, when it is a real one: for log lines. */
export function activeTraceIds(): { traceId: string; spanId: string } | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!trace.isSpanContextValid({ traceId, spanId, traceFlags })) return undefined;
  return { traceId, spanId };
}

/** Runs `fn` in a new span that ends when `fn` settles, recording a thrown error. */
export async function inSpan<T>(
  name: string,
  options: { kind: SpanKind; parent?: Context; attributes?: Record<string, string | number | boolean> },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind, attributes: options.attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    recordError(span, err);
    throw err;
  } finally {
    span.end();
  }
}

export function recordError(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

export { SpanKind };
