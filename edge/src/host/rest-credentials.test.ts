// A REST caller without valid credentials hears that first, whatever is wrong with its request
// (found by the API fuzzer: a malformed body without a token was answered 400, not 401).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeImageCatalogue } from "../testing/fake-catalogue.js";
import { startTestHost, type TestHost } from "../testing/test-host.js";

const images = fakeImageCatalogue({
  createNotebookEngineImage(req) {
    return {
      notebookEngineImage: {
        image: req.notebookEngineImage?.image ?? "",
        name: `${req.parent}/notebookEngineImages/${req.notebookEngineImageId}`,
      },
    };
  },
});

const path = "/v1/workspaces/global/notebookEngineImages?notebookEngineImageId=jupyter";
const malformed = JSON.stringify({ image: 5 });

describe("REST credentials and malformed requests", () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startTestHost({ modules: [images] });
  });
  afterAll(() => t.stop());

  it("answers a malformed request without a token with UNAUTHENTICATED", async () => {
    const res = await t.call("POST", path, { body: malformed });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 16 });
  });

  it("answers a malformed request with a forged token with UNAUTHENTICATED", async () => {
    const res = await t.call("POST", path, { body: malformed, headers: { authorization: "Bearer not.a.token" } });
    expect(res.status).toBe(401);
  });

  it("tells a signed-in caller what is wrong with the request", async () => {
    const res = await t.call("POST", path, { user: "alice", body: malformed });
    expect(res.status).toBe(400);
    const status = (await res.json()) as { code: number; message: string };
    expect(status.code).toBe(3);
    expect(status.message).toContain("image");
  });

  it("still serves a well-formed request", async () => {
    const res = await t.call("POST", path, { user: "alice", body: { image: "jupyter:1" } });
    expect(res.status).toBe(200);
  });
});
