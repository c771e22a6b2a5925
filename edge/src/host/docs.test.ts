// The edge serves the docs site: deep links load directly, hashed assets are cached for good,
// unknown pages are a real 404, and an unbuilt site says how to build it.
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSite } from "../../../web/test/build-helper.js";
import { startTestHost, type TestHost } from "../testing/test-host.js";
import { notFound } from "./create-host.js";
import { createDocsFallback } from "./docs.js";

describe("docs through the edge", () => {
  let dist: string;
  let t: TestHost;
  beforeAll(async () => {
    // A build of its own: the docs project's tests rebuild web/dist while these run.
    dist = await mkdtemp(join(tmpdir(), "aiem-docs-"));
    await buildSite({ outDir: dist });
    t = await startTestHost({ fallback: createDocsFallback(dist, notFound) });
  }, 120_000);
  afterAll(async () => {
    await t?.stop();
    await rm(dist, { recursive: true, force: true });
  });

  it("loads a deep link directly, as HTML that must be revalidated", async () => {
    const res = await t.call("GET", "/ai-engine-manager/py/installation");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(await res.text()).toContain('<div id="root"');
  });

  it("serves the OpenAPI document the API page links to, the same the edge serves at /openapi.*", async () => {
    for (const file of ["openapi.json", "openapi.yaml"]) {
      const [download, served] = await Promise.all([
        t.call("GET", `/ai-engine-manager/${file}`),
        t.call("GET", `/${file}`),
      ]);
      expect(download.status, file).toBe(200);
      expect(download.headers.get("content-type"), file).toMatch(
        file.endsWith(".json") ? /^application\/json/ : /^application\/yaml/,
      );
      expect(await download.text(), file).toBe(await served.text());
    }
  });

  it("caches hashed assets for a year", async () => {
    const asset = (await readdir(join(dist, "assets"))).find((f) => f.endsWith(".js"))!;
    const res = await t.call("GET", `/ai-engine-manager/assets/${asset}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  });

  it("answers an unknown page with the site's not-found page and a 404", async () => {
    const res = await t.call("GET", "/ai-engine-manager/no/such/page");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
  });

  it("sends / to the docs, and leaves the API and unknown paths alone", async () => {
    const root = await fetch(`${t.url}/`, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/ai-engine-manager/");
    expect((await t.call("GET", "/v1/workspaces/w/daiEngines")).status).toBe(401);
    expect(await (await t.call("GET", "/elsewhere")).json()).toMatchObject({ code: 5 });
  });

  it("says how to build the site when it has not been built", async () => {
    const unbuilt = await startTestHost({ fallback: createDocsFallback(join(dist, "missing"), notFound) });
    try {
      const res = await unbuilt.call("GET", "/ai-engine-manager/");
      expect(res.status).toBe(503);
      expect(await res.text()).toContain("npm run build:docs");
    } finally {
      await unbuilt.stop();
    }
  });
});
