// Traces with OpenTelemetry. Each process registers one tracer provider at start; the code that
// makes spans (the RPC interceptor, the instrumented bus, the outbox) uses only the API
// (trace-context.ts), so where no provider was registered (most tests) its spans cost nothing.
// The W3C trace context travels in `traceparent` / `tracestate` headers: on HTTP and gRPC calls
// between processes, in outbox rows, and in NATS message headers.
import { context, propagation, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter as OtlpJsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as OtlpProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  type SpanExporter,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-node";

export interface TracingOptions {
  /** service.name unless OTEL_SERVICE_NAME says otherwise (`aiem-edge`, `aiem-catalogue`, ...). */
  readonly serviceName: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Processors used instead of those the OTEL_* variables name (tests: the in-memory exporter). */
  readonly spanProcessors?: readonly SpanProcessor[];
}

export interface Tracing {
  /** What the spans go to, for the start-up log line: e.g. `["otlp http/protobuf"]`, or none. */
  readonly exporters: readonly string[];
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

/**
 * Registers this process's tracer provider, context manager and W3C propagator. Spans are
 * exported only where the standard variables ask for it: OTEL_TRACES_EXPORTER (`otlp`,
 * `console`, `none`; comma-separated), or, when that is unset, an OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT. Without either, nothing is exported, but spans are still
 * made so that logs carry trace ids and incoming trace context is carried on. OTEL_SDK_DISABLED
 * turns it all off.
 */
export function setUpTracing(options: TracingOptions): Tracing {
  const env = options.env ?? process.env;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") {
    return { exporters: [], shutdown: async () => {} };
  }
  const names: string[] = [];
  const processors = options.spanProcessors
    ? [...options.spanProcessors]
    : exportersFromEnv(env).map(({ name, exporter }) => {
        names.push(name);
        return new BatchSpanProcessor(exporter);
      });
  const provider = new NodeTracerProvider({
    resource: defaultResource()
      .merge(resourceFromAttributes({ "service.name": options.serviceName }))
      // OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME win over the defaults.
      .merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: processors,
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return {
    exporters: names,
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

function exportersFromEnv(env: NodeJS.ProcessEnv): Array<{ name: string; exporter: SpanExporter }> {
  const listed = env.OTEL_TRACES_EXPORTER?.trim();
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const wanted = listed
    ? listed
        .split(",")
        .map((s) => s.trim().toLowerCase())
        .filter(Boolean)
    : endpoint
      ? ["otlp"]
      : [];
  const out: Array<{ name: string; exporter: SpanExporter }> = [];
  for (const name of new Set(wanted)) {
    if (name === "none") continue;
    if (name === "console") out.push({ name, exporter: new ConsoleSpanExporter() });
    else if (name === "otlp") {
      const protocol = (
        env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ||
        env.OTEL_EXPORTER_OTLP_PROTOCOL ||
        "http/protobuf"
      ).trim();
      // The exporters read the endpoint, headers, timeout and compression from OTEL_* themselves.
      if (protocol === "http/json") out.push({ name: `otlp ${protocol}`, exporter: new OtlpJsonExporter() });
      else if (protocol === "http/protobuf") out.push({ name: `otlp ${protocol}`, exporter: new OtlpProtoExporter() });
      else throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL ${protocol} is not supported; use http/protobuf or http/json`);
    } else throw new Error(`OTEL_TRACES_EXPORTER ${name} is not supported; use otlp, console or none`);
  }
  return out;
}
