// /metrics of a host, scraped as Prometheus would: on its own port, without a token, after a
// create, a failed call and the event the create published, each found counted.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestHost, type TestHost } from "../testing/test-host.js";
import { createModuleFactories } from "./modules.js";

/** The value of one series in Prometheus text, or undefined when it is absent. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const [series, value] = [line.slice(0, line.lastIndexOf(" ")), line.slice(line.lastIndexOf(" ") + 1)];
    if (Object.entries(labels).every(([k, v]) => series.includes(`${k}="${v}"`))) return Number(value);
  }
  return undefined;
}

describe("metrics", () => {
  let t: TestHost;
  const scrape = async () => {
    const res = await fetch(t.host.metricsUrl!);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    return res.text();
  };

  beforeAll(async () => {
    t = await startTestHost({
      modules: createModuleFactories().filter((m) => m.name === "catalogue" || m.name === "engine"),
      metrics: true,
      env: { AIEM_JUPYTER_COMMAND: "none" },
    });
  }, 120_000);
  afterAll(() => t?.stop());

  it("is served on a port of its own, not on the API's", async () => {
    const metricsUrl = new URL(t.host.metricsUrl!);
    expect(metricsUrl.port).not.toBe(new URL(t.url).port);
    expect((await fetch(`${t.url}/metrics`)).status).toBe(404);
    expect((await fetch(new URL("/", metricsUrl))).status).toBe(404);
    const text = await scrape();
    // The process's own Node metrics.
    expect(text).toContain("process_resident_memory_bytes");
    expect(text).toContain("nodejs_eventloop_lag_seconds");
  });

  it("counts a create, a failed call and the event the create published", async () => {
    const service = "enginemanager.v1.DAIEngineProfileService";
    const before = await scrape();
    const created = (n: string) =>
      sample(n, "aiem_rpc_requests_total", { service, method: "CreateDAIEngineProfile", code: "ok" }) ?? 0;
    const notFound = (n: string) =>
      sample(n, "aiem_rpc_errors_total", { service, method: "GetDAIEngineProfile", code: "not_found" }) ?? 0;
    const published = (n: string) => sample(n, "aiem_events_published_total", { domain: "catalogue" }) ?? 0;
    const consumed = (n: string) =>
      sample(n, "aiem_events_consumed_total", {
        consumer: "engine-catalogue-view",
        stream: "catalogue",
        outcome: "ok",
      }) ?? 0;

    const create = await t.call("POST", "/v1/workspaces/global/daiEngineProfiles?daiEngineProfileId=metered", {
      user: "root",
      admin: true,
      body: { cpuConstraint: { min: "1", default: "1" } },
    });
    expect(create.status, await create.clone().text()).toBe(200);
    const missing = await t.call("GET", "/v1/workspaces/global/daiEngineProfiles/absent", {
      user: "root",
      admin: true,
    });
    expect(missing.status).toBe(404);

    // The event reaches the bus after the relay's next round, and the engine's catalogue copy.
    let after = await scrape();
    for (const until = Date.now() + 15_000; consumed(after) <= consumed(before) && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 100));
      after = await scrape();
    }
    expect(created(after)).toBe(created(before) + 1);
    expect(notFound(after)).toBe(notFound(before) + 1);
    expect(published(after)).toBeGreaterThan(published(before));
    expect(consumed(after)).toBeGreaterThan(consumed(before));
    // Latency of the create, and the gauges filled at scrape time.
    expect(
      sample(after, "aiem_rpc_duration_seconds_count", { service, method: "CreateDAIEngineProfile" }),
    ).toBeGreaterThan(0);
    expect(sample(after, "aiem_outbox_pending", { schema: "catalogue" })).toBe(0);
    expect(sample(after, "aiem_events_consumer_pending", { consumer: "engine-catalogue-view" })).toBe(0);
    expect(sample(after, "aiem_engine_reconciler_in_flight", {})).toBe(0);
  });
});
