export { createMetrics } from "./metrics.js";
export type { Metrics } from "./metrics.js";
export { MetricsPortInUseError, startMetricsServer } from "./metrics-server.js";
export type { MetricsServer } from "./metrics-server.js";
export { codeLabel, createObservabilityInterceptor } from "./rpc-interceptor.js";
export type { RequestTraceHolder } from "./rpc-interceptor.js";
export { instrumentEventBus } from "./instrumented-bus.js";
export {
  activeTraceIds,
  contextFromHeaders,
  contextFromRecord,
  injectTraceHeaders,
  inSpan,
  recordError,
  SpanKind,
  TRACE_HEADERS,
  traceContextInterceptor,
  traceContextRecord,
  tracer,
  TRACER_NAME,
} from "./trace-context.js";
export { setUpTracing } from "./tracing.js";
export type { Tracing, TracingOptions } from "./tracing.js";
