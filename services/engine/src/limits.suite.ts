// Idle and running limits (issue 6, part 4), with limits of a few seconds: DAI and notebook
// engines pause, H2O engines terminate (and stay listed); the current durations are live; calls on
// an engine and traffic through its URL reset its idle time.
import { beforeAll, describe, expect, it } from "vitest";
import {
  bodyOf,
  deleteAllEngines,
  expectError,
  get,
  h,
  ok,
  post,
  profileFixture,
  res,
  runningEngine,
  type KindKey,
} from "./testing/rest-suite.js";
import { freshId } from "./testing/index.js";

const profiles: Record<KindKey, string> = { dai: "", h2o: "", notebook: "" };
const seconds = (d: string | undefined) => (d === undefined ? NaN : Number(d.replace(/s$/, "")));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Independent engines with their own clocks: side by side.
describe.concurrent("idle and running limits", () => {
  // Inside the describe, so it runs after rest.test.ts has started the host.
  beforeAll(async () => {
    for (const kind of ["dai", "h2o", "notebook"] as const) {
      profiles[kind] = await profileFixture(kind, freshId("lim"), {
        maxIdleDurationConstraint: { min: "0s", default: "3600s" },
        maxRunningDurationConstraint: { min: "0s", default: "3600s" },
      });
    }
  });

  it("pause DAI and notebook engines and terminate H2O engines after their maximum idle duration", async () => {
    const names = await Promise.all(
      (["dai", "notebook", "h2o"] as const).map((kind) =>
        runningEngine(kind, { body: bodyOf(kind, { profile: profiles[kind], maxIdleDuration: "2s" }) }),
      ),
    );
    const [dai, notebook, h2o] = names as [string, string, string];
    const first = res(await get(`/v1/${dai}`, { who: "alice" }));
    await sleep(400);
    const second = res(await get(`/v1/${dai}`, { who: "alice" }));
    // Live: the idle and running durations grow between two reads.
    expect(seconds(second.currentIdleDuration)).toBeGreaterThan(seconds(first.currentIdleDuration));
    expect(seconds(second.currentRunningDuration)).toBeGreaterThan(seconds(first.currentRunningDuration));
    const paused = await h().waitForState(dai, "STATE_PAUSED", 10_000);
    const pausedNb = await h().waitForState(notebook, "STATE_PAUSED", 10_000);
    const terminated = await h().waitForState(h2o, "STATE_TERMINATED", 10_000);
    for (const e of [paused, pausedNb, terminated]) {
      expect(new Date(e.updateTime).getTime() - new Date(e.resumeTime).getTime()).toBeGreaterThanOrEqual(2_000);
      expect(e.reconciling).toBe(false);
    }
    // Terminated engines stay listed, and cannot be started again.
    expect(
      ok(await get(`/v1/workspaces/team-a/engines?filter=${encodeURIComponent(`name = "${h2o}"`)}`, { who: "alice" }))
        .engines[0].state,
    ).toBe("STATE_TERMINATED");
    expectError(await post(`/v1/${h2o}:terminate`, { who: "alice" }), "FAILED_PRECONDITION", "STATE_TERMINATED");
    // A paused engine resumes and runs again.
    ok(await post(`/v1/${dai}:resume`, { who: "alice" }));
    await h().waitForState(dai, "STATE_RUNNING");
  });

  it("pause or terminate engines after their maximum running duration, even when they are busy", async () => {
    const dai = await runningEngine("dai", {
      body: bodyOf("dai", { profile: profiles.dai, maxRunningDuration: "3s" }),
    });
    const h2o = await runningEngine("h2o", {
      body: bodyOf("h2o", { profile: profiles.h2o, maxRunningDuration: "3s" }),
    });
    const e = res(await get(`/v1/${dai}`, { who: "alice" }));
    const token = await h().token("alice");
    let stop = false;
    const busy = (async () => {
      while (!stop) {
        await fetch(e.loginUrl, { headers: { authorization: `Bearer ${token}` } }).catch(() => {});
        await sleep(300);
      }
    })();
    const paused = await h().waitForState(dai, "STATE_PAUSED", 12_000);
    const terminated = await h().waitForState(h2o, "STATE_TERMINATED", 12_000);
    stop = true;
    await busy;
    for (const x of [paused, terminated])
      expect(new Date(x.updateTime).getTime() - new Date(x.resumeTime).getTime()).toBeGreaterThanOrEqual(3_000);
  });

  it("count calls on an engine and traffic through its URL as activity", async () => {
    // The idle limit is twice the longest quiet gap below, so a loaded machine's slow requests
    // cannot make a gap look like idleness.
    const name = await runningEngine("dai", { body: bodyOf("dai", { profile: profiles.dai, maxIdleDuration: "4s" }) });
    const e = res(await get(`/v1/${name}`, { who: "alice" }));
    const token = await h().token("alice");
    const started = Date.now();
    // 5 s of traffic, every 400 ms: longer than the idle limit, yet the engine keeps running.
    let lastTraffic = started;
    while (Date.now() - started < 5_000) {
      lastTraffic = Date.now();
      const page = await fetch(`${e.apiUrl}/api/health`, { headers: { authorization: `Bearer ${token}` } });
      expect(page.status).toBe(200);
      await sleep(400);
    }
    const busy = res(await get(`/v1/${name}`, { who: "alice" }));
    expect(busy.state).toBe("STATE_RUNNING");
    // Idle since the last request through its URL at most, however slow the machine is.
    expect(seconds(busy.currentIdleDuration)).toBeLessThanOrEqual((Date.now() - lastTraffic) / 1000);
    // Calls on the engine count too: each resets the idle time; not reset, it would read at
    // least a second more than the call and the read took.
    await sleep(1_000);
    const sinceCall = Date.now();
    ok(await post(`/v1/${name}:downloadLogs`, { who: "alice" }));
    const after = res(await get(`/v1/${name}`, { who: "alice" }));
    expect(seconds(after.currentIdleDuration)).toBeLessThanOrEqual((Date.now() - sinceCall) / 1000);
    await sleep(1_000);
    ok(await post(`/v1/${name}:downloadLogs`, { who: "alice" }));
    expect(res(await get(`/v1/${name}`, { who: "alice" })).state).toBe("STATE_RUNNING");
    // Reading it does not: left alone, it pauses.
    const quiet = Date.now();
    await h().waitForState(name, "STATE_PAUSED", 15_000);
    expect(Date.now() - quiet).toBeGreaterThanOrEqual(3_000);
  });
});

describe("after the suite", () => {
  it("deletes every engine it made", deleteAllEngines, 90_000);
});
