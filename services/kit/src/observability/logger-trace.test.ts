// Log lines written inside a span name its trace and span; lines outside any span name none.
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createLogger } from "../logger.js";
import { inSpan, SpanKind } from "./trace-context.js";
import { setUpTracing, type Tracing } from "./tracing.js";

let tracing: Tracing;
const memory = new InMemorySpanExporter();
beforeAll(() => {
  tracing = setUpTracing({ serviceName: "test", spanProcessors: [new SimpleSpanProcessor(memory)] });
});
afterAll(() => tracing.shutdown());

it("puts the active span's trace and span ids on each line", async () => {
  const lines: string[] = [];
  const logger = createLogger({ write: (line) => lines.push(line) }).child({ service: "kit" });
  logger.info("outside");
  const ids = await inSpan("work", { kind: SpanKind.INTERNAL }, async (span) => {
    await new Promise((r) => setTimeout(r, 1));
    logger.warn("inside");
    return span.spanContext();
  });
  const [outside, inside] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(outside).not.toHaveProperty("traceId");
  expect(inside).toMatchObject({ msg: "inside", service: "kit", traceId: ids.traceId, spanId: ids.spanId });
  expect(memory.getFinishedSpans().map((s) => s.name)).toEqual(["work"]);
});
