import { describe, expect, it, vi } from "vitest";
import { buildSearchIndex } from "../../build/search-index.js";
import type { SearchDoc } from "../site-types.js";
import { createDocSearch, createLocalSearch } from "./search-client.js";

const doc = (id: string, title: string, text: string, tags = ["ai-engine-manager"]): SearchDoc => ({
  id,
  title,
  page: "Page",
  url: `page#${id}`,
  text,
  kind: "section",
  tags,
});

const index = buildSearchIndex([
  doc("pause", "Pause and resume", "Pausing stops the engine and keeps its data disk."),
  doc("resize", "Grow the data disk", "Storage only grows; resizeStorage takes newStorageBytes."),
  doc("sibling", "Pause a model", "A page of another product's docs about pausing.", ["other-product"]),
]);

const ok = (body: string) => Promise.resolve(new Response(body, { status: 200 }));

describe("the local search", () => {
  it("loads the index only when asked, once, and finds pages by prefix", async () => {
    const fetch = vi.fn(() => ok(index));
    const search = createLocalSearch({
      indexUrl: "/ai-engine-manager/assets/search-index-x.json",
      base: "/ai-engine-manager/",
      fetch,
    });
    expect(fetch).not.toHaveBeenCalled();
    const hits = await search.search("resiz");
    expect(hits.map((h) => [h.title, h.url])).toEqual([["Grow the data disk", "/ai-engine-manager/page#resize"]]);
    await search.search("data disk");
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it("only returns documents tagged ai-engine-manager", async () => {
    const search = createLocalSearch({ indexUrl: "/i.json", base: "/", fetch: () => ok(index) });
    expect((await search.search("pause")).map((h) => h.id)).toEqual(["pause"]);
    const other = createLocalSearch({ indexUrl: "/i.json", base: "/", fetch: () => ok(index), tag: "other-product" });
    expect((await other.search("pause")).map((h) => h.id)).toEqual(["sibling"]);
  });

  it("returns nothing for words that are nowhere", async () => {
    const search = createLocalSearch({ indexUrl: "/i.json", base: "/", fetch: () => ok(index) });
    expect(await search.search("kubectl")).toEqual([]);
  });

  it("fails while the index cannot be fetched and recovers once it can", async () => {
    let online = false;
    const search = createLocalSearch({
      indexUrl: "/i.json",
      base: "/",
      fetch: () => (online ? ok(index) : Promise.reject(new TypeError("Failed to fetch"))),
    });
    await expect(search.search("pause")).rejects.toThrow("Failed to fetch");
    online = true;
    expect(await search.search("pause")).toHaveLength(1);
  });

  it("treats an HTTP error as a failure", async () => {
    const search = createLocalSearch({
      indexUrl: "/i.json",
      base: "/",
      fetch: () => Promise.resolve(new Response("", { status: 404 })),
    });
    await expect(search.prepare()).rejects.toThrow("search index: HTTP 404");
  });
});

describe("a DocSearch-compatible service", () => {
  it("sends the query with the language and tag facet filters and maps hits", async () => {
    const fetch = vi.fn((_url: RequestInfo | URL, _init?: RequestInit) =>
      Promise.resolve(
        Response.json({
          hits: [
            {
              objectID: "1",
              url: "https://docs.example.com/ai-engine-manager/py/login#with-a-token",
              hierarchy: { lvl0: "Python client", lvl1: "Log in", lvl2: "With a token", lvl3: null },
              _snippetResult: { content: { value: "Pass it as <mark>platform_token</mark>" } },
            },
          ],
        }),
      ),
    );
    const search = createDocSearch({
      appId: "APP",
      apiKey: "KEY",
      indexName: "aiem docs",
      fetch,
      origin: "https://docs.example.com",
    });
    const hits = await search.search("token", 5);
    const [url, init] = fetch.mock.calls[0]!;
    expect(url).toBe("https://APP-dsn.algolia.net/1/indexes/aiem%20docs/query");
    expect(init!.headers).toMatchObject({ "X-Algolia-Application-Id": "APP", "X-Algolia-API-Key": "KEY" });
    expect(JSON.parse(init!.body as string)).toEqual({
      query: "token",
      hitsPerPage: 5,
      facetFilters: ["language:en", ["docusaurus_tag:ai-engine-manager"]],
      attributesToSnippet: ["content:20"],
    });
    expect(hits).toEqual([
      {
        id: "1",
        title: "With a token",
        page: "Python client › Log in",
        url: "/ai-engine-manager/py/login#with-a-token",
        excerpt: "Pass it as platform_token",
        kind: "page",
      },
    ]);
  });

  it("fails on an HTTP error", async () => {
    const search = createDocSearch({
      appId: "A",
      apiKey: "K",
      indexName: "i",
      host: "https://search.example",
      fetch: () => Promise.resolve(new Response("", { status: 503 })),
    });
    await expect(search.search("x")).rejects.toThrow("search service: HTTP 503");
  });
});
