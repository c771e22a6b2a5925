// The OpenAPI document over real HTTP, as a client generator or the fuzzer fetches it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { startTestHost, type TestHost } from "../testing/test-host.js";

describe("the OpenAPI document", () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startTestHost();
  });
  afterAll(() => t.stop());

  it("is served as JSON without a token, with the REST routes in it", async () => {
    const res = await fetch(`${t.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const doc = (await res.json()) as { swagger: string; paths: Record<string, unknown> };
    expect(doc.swagger).toBe("2.0");
    expect(Object.keys(doc.paths)).toContain("/v1/workspaces/{workspace}/daiEngines/{daiEngine}");
  });

  it("is served as YAML holding the same document", async () => {
    const [json, yaml] = await Promise.all([fetch(`${t.url}/openapi.json`), fetch(`${t.url}/openapi.yaml`)]);
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get("content-type")).toBe("application/yaml");
    expect(parse(await yaml.text())).toEqual(await json.json());
  });

  it("answers HEAD with the headers only and refuses other methods", async () => {
    const head = await fetch(`${t.url}/openapi.yaml`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(Number(head.headers.get("content-length"))).toBeGreaterThan(1000);
    const post = await fetch(`${t.url}/openapi.json`, { method: "POST", body: "{}" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });
});
