import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SEARCH_TAG } from "../src/site-types.js";
import { buildSearchIndex, sectionDocs } from "./search-index.js";
import { buildSiteModel, checkLinks, type SitePage } from "./site-model.js";

const webRoot = fileURLToPath(new URL("..", import.meta.url));
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const model = buildSiteModel({
  webRoot,
  repoRoot,
  base: "/ai-engine-manager/",
  pythonPackage: fileURLToPath(new URL("../test/fixtures/py/ai_engine_manager", import.meta.url)),
});
const paths = model.routes.map((r) => r.path);

describe("the site model", () => {
  it("has every route of the spec's table", () => {
    const spec = [
      "api/",
      "search",
      "",
      "get-started/what-is-ai-engine-manager",
      "get-started/access-ai-engines",
      "release-notes",
      ...["dai-engine", "h2o-engine", "notebook-engine"].flatMap((k) => [
        `user-guide/${k}/create`,
        `user-guide/${k}/manage`,
      ]),
      "py/installation",
      "py/initialization",
      "py/migration",
      "py/dai_examples",
      "py/h2o_examples",
      "py/notebook_examples",
      "py/login",
      "py/clients/",
    ];
    expect(paths).toEqual(expect.arrayContaining(spec));
    expect(paths.filter((p) => p.startsWith("py/clients/")).length).toBeGreaterThan(1);
  });

  it("gives every page a title, an h1 and content", () => {
    for (const page of model.pages) {
      expect(page.title, page.route).not.toBe("");
      expect(page.html, page.route).toMatch(/<h1[\s>]/);
      expect(page.html.length, page.route).toBeGreaterThan(400);
    }
  });

  it("puts py/login in the one sidebar every documentation page shares", () => {
    const flat = JSON.stringify(model.sidebar);
    for (const route of model.pages.filter((p) => p.layout === "doc").map((p) => p.route)) {
      expect(flat, route).toContain(`"path":"${route}"`);
    }
  });

  it("ships the OpenAPI document for download, linked from the API page", () => {
    expect(model.downloads.map((d) => d.fileName)).toEqual(["openapi.json", "openapi.yaml"]);
    expect(JSON.parse(model.downloads[0]!.source)).toHaveProperty("swagger", "2.0");
    const api = model.pages.find((p) => p.route === "api/")!;
    expect(api.html).toContain('href="/ai-engine-manager/openapi.json"');
    expect(api.html).toContain('href="/ai-engine-manager/openapi.yaml"');
  });

  it("indexes pages, the API reference and the Python reference, all tagged", () => {
    const kinds = new Set(model.searchDocs.map((d) => d.kind));
    expect([...kinds].sort()).toEqual(["api", "page", "python", "section"]);
    expect(model.searchDocs.every((d) => d.tags.includes(SEARCH_TAG))).toBe(true);
    expect(model.searchDocs.some((d) => d.url === "user-guide/dai-engine/manage#grow-the-data-disk")).toBe(true);
    expect(JSON.parse(buildSearchIndex(model.searchDocs)).documentCount).toBe(
      new Set(model.searchDocs.map((d) => d.id)).size,
    );
  });
});

describe("the link check", () => {
  const page = (route: string, html: string): SitePage => ({
    route,
    title: route,
    description: "",
    layout: "doc",
    html,
    toc: [],
  });
  const pages = [page("a", '<h2 id="x">X</h2>'), page("b", "")];
  const routes = pages.map((p) => ({ path: p.route, title: p.title, layout: "doc" as const }));

  it("accepts links to pages and anchors that exist", () => {
    expect(() =>
      checkLinks(
        [
          { from: "b.md", to: "a#x" },
          { from: "b.md", to: "a" },
        ],
        pages,
        routes,
      ),
    ).not.toThrow();
  });

  it("accepts links to files shipped beside the pages", () => {
    expect(() => checkLinks([{ from: "b.md", to: "openapi.json" }], pages, routes, ["openapi.json"])).not.toThrow();
    expect(() => checkLinks([{ from: "b.md", to: "openapi.json" }], pages, routes)).toThrow("is not a page");
  });

  it("fails the build on a missing page or anchor", () => {
    expect(() => checkLinks([{ from: "b.md", to: "c" }], pages, routes)).toThrow("b.md: /c is not a page");
    expect(() => checkLinks([{ from: "b.md", to: "a#y" }], pages, routes)).toThrow("b.md: /a#y has no anchor #y");
  });
});

describe("search sections", () => {
  it("split a page at h2 and h3 headings", () => {
    const docs = sectionDocs(
      "p",
      "Page",
      '<h1>Page</h1><p>Intro</p><h2 id="one">One<a class="hash-link" href="#one">#</a></h2><p>Body one</p><h3 id="two">Two</h3><p>Body two</p>',
    );
    expect(docs.map((d) => [d.url, d.title, d.text, d.kind])).toEqual([
      ["p", "Page", "Intro", "page"],
      ["p#one", "One", "Body one", "section"],
      ["p#two", "Two", "Body two", "section"],
    ]);
  });
});
