// The events page's example consumer (web/content/events/consumer.ts), run as a program outside
// the product would run it: on NATS, a durable consumer of its own, against a host whose engine
// service publishes through its outbox. On the embedded stack events never leave the process
// (the in-process bus), so there is nothing for an outside program to consume: skipped there.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine_State } from "@aiem/proto/enginemanager/v1/engine_pb.js";
import type { Event } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import { setUpTracing, type Tracing } from "@aiem/kit/observability";
import { followEvents } from "../../../web/content/events/consumer.js";
import { startTestHost, type TestHost } from "../testing/test-host.js";
import { createModuleFactories } from "./modules.js";

const natsUrl = process.env.NATS_URL;
describe.skipIf(!natsUrl)("the example event consumer", () => {
  let t: TestHost;
  let tracing: Tracing;
  beforeAll(async () => {
    // As the launchers do: spans made (none exported), so trace context is carried on.
    tracing = setUpTracing({ serviceName: "test", spanProcessors: [] });
    t = await startTestHost({
      modules: createModuleFactories().filter((m) => m.name === "catalogue" || m.name === "engine"),
      env: { AIEM_JUPYTER_COMMAND: "none" },
    });
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await tracing?.shutdown();
  });

  it("follows an engine's state changes, once each, with the trace of the request that caused them", async () => {
    const stop = new AbortController();
    const seen: Array<{ event: Event; traceparent: string | undefined }> = [];
    const created = new Promise<void>((resolve) => {
      void followEvents({
        servers: natsUrl!,
        durable: `example-${randomBytes(4).toString("hex")}`,
        // The test host's bus keeps its streams apart from other suites' with a prefix.
        stream: t.bus.streams.events,
        subject: `${t.eventsPrefix}.enginemanager.engines.default.>`,
        signal: stop.signal,
        async onEvent(event, traceparent) {
          seen.push({ event, traceparent });
          if (event.payload.case === "engineStateChanged") resolve();
        },
      });
    });
    const res = await t.call("POST", "/v1/workspaces/default/daiEngines?daiEngineId=followed", {
      user: "alice",
      body: {
        profile: "workspaces/global/daiEngineProfiles/default",
        daiEngineVersion: "workspaces/global/daiEngineVersions/latest",
      },
      headers: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
    });
    expect(res.status, await res.text()).toBe(200);
    await created;
    stop.abort();
    const first = seen[0]!;
    expect(first.event.source).toBe("engine");
    expect(first.event.payload.case).toBe("engineStateChanged");
    if (first.event.payload.case === "engineStateChanged") {
      expect(first.event.payload.value.engine).toBe("workspaces/default/daiEngines/followed");
      expect(first.event.payload.value.previousState).toBe(Engine_State.UNSPECIFIED);
    }
    expect(new Set(seen.map((s) => s.event.id)).size).toBe(seen.length);
    // The caller's trace, continued through the engine service and its outbox.
    expect(first.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
  });
});
