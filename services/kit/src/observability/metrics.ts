// Prometheus metrics of one process: a registry of its own (several hosts in one test process
// must not share counters), the per-RPC series every host records, the process's Node metrics,
// and gauges that modules add and fill at scrape time from their database or memory.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export interface Metrics {
  readonly registry: Registry;
  /** Calls answered, by service, method and code (`ok`, `not_found`, ...). */
  readonly rpcRequests: Counter<"service" | "method" | "code">;
  /** Calls that failed, by service, method and code; the same calls as rpcRequests minus `ok`. */
  readonly rpcErrors: Counter<"service" | "method" | "code">;
  /** Seconds from the call to its answer (unary) or its end (streams). */
  readonly rpcDuration: Histogram<"service" | "method">;
  /** Events this process published (from its outbox), by their subject's domain. */
  readonly eventsPublished: Counter<"domain">;
  /** Events handed to a consumer, by consumer, stream and outcome (`ok`, `error`). */
  readonly eventsConsumed: Counter<"consumer" | "stream" | "outcome">;
  /**
   * A gauge filled when scraped: every `collect` given for its name sets its values (all are
   * cleared first, so a state that went away disappears). Several modules of one process may add
   * collectors to one name, each setting its own label values. Returns what removes this collector.
   */
  gauge<L extends string>(options: {
    name: string;
    help: string;
    labelNames?: readonly L[];
    collect: (set: (labels: Partial<Record<L, string>>, value: number) => void) => Promise<void> | void;
  }): () => void;
  /** The exposition text and its content type. */
  scrape(): Promise<{ contentType: string; body: string }>;
}

/** Latency buckets in seconds: a few milliseconds (a cached read) up to a minute (a slow start). */
const RPC_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

type Collector = (set: (labels: Record<string, string>, value: number) => void) => Promise<void> | void;

export function createMetrics(options: { process?: string; nodeMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.process) registry.setDefaultLabels({ process: options.process });
  if (options.nodeMetrics !== false) collectDefaultMetrics({ register: registry });
  const rpcRequests = new Counter({
    name: "aiem_rpc_requests_total",
    help: "RPCs answered (every protocol, REST included), by service, method and status code",
    labelNames: ["service", "method", "code"] as const,
    registers: [registry],
  });
  const rpcErrors = new Counter({
    name: "aiem_rpc_errors_total",
    help: "RPCs answered with an error, by service, method and status code",
    labelNames: ["service", "method", "code"] as const,
    registers: [registry],
  });
  const rpcDuration = new Histogram({
    name: "aiem_rpc_duration_seconds",
    help: "Time from an RPC's arrival to its answer (unary) or its end (streams)",
    labelNames: ["service", "method"] as const,
    buckets: RPC_BUCKETS,
    registers: [registry],
  });
  const eventsPublished = new Counter({
    name: "aiem_events_published_total",
    help: "Events published to the bus (from the outbox), by the subject's domain",
    labelNames: ["domain"] as const,
    registers: [registry],
  });
  const eventsConsumed = new Counter({
    name: "aiem_events_consumed_total",
    help: "Events handed to this process's consumers, by consumer, stream and outcome",
    labelNames: ["consumer", "stream", "outcome"] as const,
    registers: [registry],
  });
  const gauges = new Map<string, { collectors: Set<Collector> }>();
  return {
    registry,
    rpcRequests,
    rpcErrors,
    rpcDuration,
    eventsPublished,
    eventsConsumed,
    gauge({ name, help, labelNames, collect }) {
      let entry = gauges.get(name);
      if (!entry) {
        const collectors = new Set<Collector>();
        new Gauge({
          name,
          help,
          labelNames: [...(labelNames ?? [])] as string[],
          registers: [registry],
          async collect() {
            this.reset();
            const set = (labels: Record<string, string>, value: number) => this.set(labels, value);
            // A collector whose source is away (the database restarting) leaves its series out;
            // the others, and the rest of the scrape, still answer.
            await Promise.all([...collectors].map((c) => Promise.resolve(c(set)).catch(() => undefined)));
          },
        });
        entry = { collectors };
        gauges.set(name, entry);
      }
      const collector = collect as Collector;
      entry.collectors.add(collector);
      const { collectors } = entry;
      return () => {
        collectors.delete(collector);
      };
    },
    async scrape() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
