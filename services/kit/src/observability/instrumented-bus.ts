// The bus a host hands its modules, with a span and a count for every event published and
// handled. A publish continues the trace context its headers carry (the outbox row keeps that of
// the transaction that wrote it) and passes its own span on in the message's headers, so a
// consumer's span continues the request that caused the event, in whichever process it runs.
import { context, trace } from "@opentelemetry/api";
import type { EventBus, EventHandler } from "../events/event-bus.js";
import type { Metrics } from "./metrics.js";
import {
  contextFromRecord,
  recordError,
  SpanKind,
  TRACE_HEADERS,
  tracer,
  traceContextRecord,
} from "./trace-context.js";

/** `engines`, `catalogue`: a subject's second token, the label that keeps series few. */
function domainOf(subject: string): string {
  return subject.split(".")[1] ?? "unknown";
}

export function instrumentEventBus(bus: EventBus, options: { metrics?: Metrics } = {}): EventBus {
  const { metrics } = options;

  const traced = (consumer: string, stream: string, handler: EventHandler): EventHandler => {
    return async (msg) => {
      const parent = contextFromRecord(msg.headers);
      const span = tracer().startSpan(
        `${consumer} process`,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            "messaging.system": "nats",
            "messaging.operation.type": "process",
            "messaging.destination.name": msg.subject,
            "messaging.message.id": msg.id,
            "messaging.consumer.group.name": consumer,
          },
        },
        parent,
      );
      try {
        await context.with(trace.setSpan(parent, span), () => handler(msg));
        metrics?.eventsConsumed.inc({ consumer, stream, outcome: "ok" });
      } catch (err) {
        recordError(span, err);
        metrics?.eventsConsumed.inc({ consumer, stream, outcome: "error" });
        throw err;
      } finally {
        span.end();
      }
    };
  };

  const removeLag = metrics?.gauge({
    name: "aiem_events_consumer_pending",
    help: "Messages on a consumer's subjects not yet handled by it (NATS consumer lag), per consumer of this process",
    labelNames: ["consumer", "stream"] as const,
    async collect(set) {
      const totals = new Map<string, { consumer: string; stream: string; pending: number }>();
      for (const lag of await bus.lag()) {
        const key = `${lag.stream}/${lag.consumer}`;
        const seen = totals.get(key);
        if (seen) seen.pending = Math.max(seen.pending, lag.pending);
        else totals.set(key, { ...lag });
      }
      for (const { consumer, stream, pending } of totals.values()) set({ consumer, stream }, pending);
    },
  });

  return {
    kind: bus.kind,
    streams: bus.streams,
    async publish(subject, data, publishOptions) {
      const given = publishOptions.headers ?? {};
      // The row's trace context when it has one; else whatever is active (a direct publish).
      const parent = TRACE_HEADERS.some((h) => h in given) ? contextFromRecord(given) : context.active();
      const span = tracer().startSpan(
        `${domainOf(subject)} publish`,
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            "messaging.system": "nats",
            "messaging.operation.type": "send",
            "messaging.destination.name": subject,
            "messaging.message.id": publishOptions.id,
          },
        },
        parent,
      );
      try {
        const headers = { ...given };
        for (const h of TRACE_HEADERS) delete headers[h];
        Object.assign(headers, traceContextRecord(trace.setSpan(parent, span)));
        const result = await bus.publish(subject, data, { ...publishOptions, headers });
        if (!result.duplicate) metrics?.eventsPublished.inc({ domain: domainOf(subject) });
        return result;
      } catch (err) {
        recordError(span, err);
        throw err;
      } finally {
        span.end();
      }
    },
    consume(name, consumeOptions, handler) {
      return bus.consume(name, consumeOptions, traced(name, streamOf(consumeOptions.subjects), handler));
    },
    replay(replayOptions, handler) {
      const name = replayOptions.name ?? "replay";
      return bus.replay(replayOptions, traced(name, streamOf(replayOptions.subjects), handler));
    },
    lastSequence: (stream) => bus.lastSequence(stream),
    deleteConsumer: (stream, name) => bus.deleteConsumer(stream, name),
    lag: () => bus.lag(),
    async close() {
      removeLag?.();
      await bus.close();
    },
  };
}

function streamOf(subjects: string | readonly string[]): string {
  const first = typeof subjects === "string" ? subjects : subjects[0];
  return first?.split(".")[1] === "catalogue" ? "catalogue" : "events";
}
