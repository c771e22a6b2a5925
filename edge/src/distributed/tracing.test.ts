// One trace from a REST call at the edge, through the service that handles it and its outbox,
// to the consumers of the event it wrote. Spans of this process go to OpenTelemetry's in-memory
// exporter; the parts in processes of their own export theirs with OTLP (http/json, as the
// OTEL_* variables say) to a collector this test runs, so all of them are seen together.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { context, propagation, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNatsEventBus, type NatsEventBus } from "@aiem/kit/events";
import { instrumentEventBus, setUpTracing, type Tracing } from "@aiem/kit/observability";
import { createModuleFactories } from "../host/modules.js";
import { startTestHost, type TestHost } from "../testing/test-host.js";
import { createCluster, type Cluster } from "./cluster.js";

interface SeenSpan {
  readonly process: string;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
}

const memory = new InMemorySpanExporter();
let tracing: Tracing;
beforeAll(() => {
  tracing = setUpTracing({ serviceName: "test", spanProcessors: [new SimpleSpanProcessor(memory)] });
});
afterAll(() => tracing?.shutdown());

function local(): SeenSpan[] {
  return memory.getFinishedSpans().map((s) => ({
    process: "test",
    name: s.name,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parentSpanId: s.parentSpanContext?.spanId,
  }));
}

/** A client's call in a span of its own; its `traceparent` goes on the request. */
async function tracedCall(url: string, init: RequestInit): Promise<{ traceId: string; spanId: string; res: Response }> {
  const span = trace.getTracer("test").startSpan("client call");
  const ctx = trace.setSpan(context.active(), span);
  const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
  propagation.inject(ctx, headers);
  const res = await fetch(url, { ...init, headers });
  span.end();
  return { ...span.spanContext(), res };
}

async function until<T>(what: string, find: () => T | undefined, ms = 30_000): Promise<T> {
  for (const end = Date.now() + ms; ; ) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Expects `spans` to hold one named `name` (in `process`) whose parent is `parent`; returns it. */
function childOf(spans: SeenSpan[], parent: SeenSpan | { spanId: string }, name: string, process?: string): SeenSpan {
  const found = spans.filter(
    (s) => s.name === name && s.parentSpanId === parent.spanId && (process === undefined || s.process === process),
  );
  expect(found, `${name} under ${parent.spanId} in ${JSON.stringify(spans, null, 1)}`).toHaveLength(1);
  return found[0]!;
}

const PROFILE_BODY = JSON.stringify({ cpuConstraint: { min: "1", default: "1" } });
const CREATE = "enginemanager.v1.DAIEngineProfileService/CreateDAIEngineProfile";

describe("a trace through the all-in-one process (any bus)", () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startTestHost({
      modules: createModuleFactories().filter((m) => m.name === "catalogue" || m.name === "engine"),
      env: { AIEM_JUPYTER_COMMAND: "none" },
    });
  }, 120_000);
  afterAll(() => t?.stop());

  it("continues the caller's trace from the RPC to its outbox event and the engine's catalogue copy", async () => {
    const token = await t.token("root", { admin: true });
    const call = await tracedCall(`${t.url}/v1/workspaces/global/daiEngineProfiles?daiEngineProfileId=traced`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: PROFILE_BODY,
    });
    expect(call.res.status, await call.res.text()).toBe(200);
    const spans = await until("the consumer's span", () => {
      const all = local().filter((s) => s.traceId === call.traceId);
      return all.some((s) => s.name === "engine-catalogue-view process") ? all : undefined;
    });
    const rpc = childOf(spans, call, CREATE);
    const publish = childOf(spans, rpc, "catalogue publish");
    childOf(spans, publish, "engine-catalogue-view process");
  });
});

const real = Boolean(process.env.DATABASE_URL && process.env.NATS_URL);
describe.skipIf(!real)("a trace through the parts in processes of their own, on PostgreSQL and NATS", () => {
  let cluster: Cluster;
  let collector: Server;
  const exported: SeenSpan[] = [];
  let bus: NatsEventBus;

  beforeAll(async () => {
    collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as OtlpTraces;
        for (const rs of body.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a) => a.key === "service.name")?.value?.stringValue ?? "?";
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              exported.push({
                process: service,
                name: s.name,
                traceId: hex(s.traceId),
                spanId: hex(s.spanId),
                parentSpanId: s.parentSpanId ? hex(s.parentSpanId) : undefined,
              });
        }
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
    const { port } = collector.address() as AddressInfo;
    cluster = await createCluster({
      replicas: 1,
      databaseUrl: process.env.DATABASE_URL!,
      natsUrl: process.env.NATS_URL!,
      policy: "admins: [users/root]\n",
      env: {
        AIEM_JUPYTER_COMMAND: "none",
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_BSP_SCHEDULE_DELAY: "100",
      },
    });
    bus = await createNatsEventBus({ url: process.env.NATS_URL!, prefix: `c${cluster.suffix}` });
  }, 180_000);

  afterAll(async () => {
    await bus?.close();
    await cluster?.close();
    collector?.close();
  });

  it("sees one trace from the edge through the catalogue and its outbox to every consumer of the event", async () => {
    // A consumer of this process, as an operator's own would be: its span goes to the in-memory exporter.
    const seen = new Promise<void>((resolve) => {
      instrumentEventBus(bus).replay({ name: "test-consumer", subjects: "enginemanager.catalogue.>" }, async (m) => {
        if (m.subject.endsWith(".traced")) resolve();
      });
    });
    const token = await cluster.token("root", true);
    const call = await tracedCall(
      `${cluster.edge.url}/v1/workspaces/global/daiEngineProfiles?daiEngineProfileId=traced`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: PROFILE_BODY,
      },
    );
    expect(call.res.status, await call.res.text()).toBe(200);
    await seen;
    const spans = await until("every part's spans", () => {
      const all = [...local(), ...exported].filter((s) => s.traceId === call.traceId);
      // The edge's span ends with its answer, and is exported after the consumers' may be.
      const consumers = all.filter((s) => s.name.endsWith("process"));
      return consumers.length >= 3 && all.some((s) => s.process === "aiem-edge") ? all : undefined;
    });
    const atEdge = childOf(spans, call, CREATE, "aiem-edge");
    const inCatalogue = childOf(spans, atEdge, CREATE, "aiem-catalogue");
    const publish = childOf(spans, inCatalogue, "catalogue publish", "aiem-catalogue");
    childOf(spans, publish, "engine-catalogue-view process", "aiem-engine");
    childOf(spans, publish, "sandbox-catalogue-view process", "aiem-sandbox");
    childOf(spans, publish, "test-consumer process", "test");
  });
});

interface OtlpTraces {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value?: { stringValue?: string } }> };
    scopeSpans?: Array<{
      spans?: Array<{ name: string; traceId: string; spanId: string; parentSpanId?: string }>;
    }>;
  }>;
}

/** OTLP/JSON ids are hex; tolerate base64 as well. */
function hex(id: string): string {
  return /^[0-9a-f]+$/i.test(id) ? id.toLowerCase() : Buffer.from(id, "base64").toString("hex");
}
