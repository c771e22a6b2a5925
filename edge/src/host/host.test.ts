import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { principalOf } from "@aiem/kit/server";
import { fakeImageCatalogue } from "../testing/fake-catalogue.js";
import { startTestHost, type TestHost } from "../testing/test-host.js";

// A stand-in catalogue part: one slow GET, a call counter and a readiness switch.
function fakeCatalogue() {
  const state = { calls: 0, ready: true, delayMs: 0 };
  const factory = fakeImageCatalogue(
    {
      async getNotebookEngineImage(req, ctx) {
        state.calls++;
        await sleep(state.delayMs);
        return { notebookEngineImage: { name: req.name, creator: principalOf(ctx).name, image: "jupyter:1" } };
      },
    },
    {
      isReady: () => state.ready,
      httpRoutes: [
        {
          prefix: "/engines/",
          handler: (req, res) => {
            res.writeHead(200, { "content-type": "text/plain" });
            res.end(`engine page ${req.url}`);
          },
        },
      ],
    },
  );
  return { state, factory };
}

const imagePath = "/v1/workspaces/global/notebookEngineImages/jupyter";

describe("host", () => {
  const fake = fakeCatalogue();
  let t: TestHost;
  beforeAll(async () => {
    t = await startTestHost({ modules: [fake.factory] });
  });
  afterAll(() => t.stop());

  it("answers /healthz and /readyz without a token, and /readyz follows the modules", async () => {
    expect(await (await t.call("GET", "/healthz")).json()).toEqual({ status: "ok" });
    expect((await t.call("GET", "/readyz")).status).toBe(200);
    fake.state.ready = false;
    const notReady = await t.call("GET", "/readyz");
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({ status: "not ready", failing: ["catalogue"] });
    fake.state.ready = true;
  });

  it("returns a request id, keeping a plain one the caller sent", async () => {
    const fresh = await t.call("GET", "/healthz");
    expect(fresh.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await t.call("GET", "/healthz", { headers: { "x-request-id": "trace-42" } });
    expect(kept.headers.get("x-request-id")).toBe("trace-42");
    const replaced = await t.call("GET", "/healthz", { headers: { "x-request-id": "bad id\twith tab" } });
    expect(replaced.headers.get("x-request-id")).not.toBe("bad id\twith tab");
  });

  it("rejects a missing or invalid token with 401 before the service sees the call", async () => {
    const before = fake.state.calls;
    const attempts: Record<string, string>[] = [{}, { authorization: "Bearer nope" }, { authorization: "Basic YTpi" }];
    for (const headers of attempts) {
      const res = await t.call("GET", imagePath, { headers });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 16 });
    }
    expect(fake.state.calls).toBe(before);
  });

  it("hands the caller to the service through REST and Connect alike", async () => {
    const rest = await t.call("GET", imagePath, { user: "alice" });
    expect(rest.status).toBe(200);
    expect(await rest.json()).toMatchObject({ notebookEngineImage: { creator: "users/alice", image: "jupyter:1" } });
    const connect = await t.call("POST", "/enginemanager.v1.NotebookEngineImageService/GetNotebookEngineImage", {
      user: "bob",
      body: { name: "workspaces/global/notebookEngineImages/jupyter" },
    });
    expect(connect.status).toBe(200);
    expect(await connect.json()).toMatchObject({ notebookEngineImage: { creator: "users/bob" } });
  });

  it("mounts a module's plain HTTP routes beside the API", async () => {
    const res = await t.call("GET", "/engines/abc/login");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("engine page /engines/abc/login");
    expect((await t.call("GET", "/other")).status).toBe(404);
  });

  it("answers services that no part provides with UNIMPLEMENTED (501)", async () => {
    const res = await t.call("GET", "/v1/workspaces/w/daiEngines/e", { user: "alice" });
    expect(res.status).toBe(501);
    expect(await res.json()).toMatchObject({ code: 12 });
  });
});

describe("host shutdown", () => {
  it("lets an in-flight request finish, then refuses new connections", async () => {
    const fake = fakeCatalogue();
    fake.state.delayMs = 400;
    const t = await startTestHost({ modules: [fake.factory] });
    const inFlight = t.call("GET", imagePath, { user: "alice" });
    await sleep(100);
    const stopped = t.stop();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ notebookEngineImage: { image: "jupyter:1" } });
    await stopped;
    await expect(fetch(`${t.url}/healthz`)).rejects.toThrow();
  });
});
