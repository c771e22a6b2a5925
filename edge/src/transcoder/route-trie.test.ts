import { describe, expect, it } from "vitest";
import { parsePathTemplate } from "./path-template.js";
import { createRouteTrie } from "./route-trie.js";

describe("parsePathTemplate", () => {
  it("flattens variables into segments", () => {
    const t = parsePathTemplate("/v1/{name=workspaces/*/daiEngines/*}:pause");
    expect(t.verb).toBe("pause");
    expect(t.segments.map((s) => (s.kind === "literal" ? s.value : s.kind))).toEqual([
      "v1",
      "workspaces",
      "star",
      "daiEngines",
      "star",
    ]);
    expect(t.variables).toEqual([{ fieldPath: ["name"], start: 1, end: 5, multiSegment: true }]);
  });

  it("treats {x} as a single segment and {x=**} as multi", () => {
    const t = parsePathTemplate("/v1/shelves/{shelf_id}/files/{path=**}");
    expect(t.variables).toEqual([
      { fieldPath: ["shelf_id"], start: 2, end: 3, multiSegment: false },
      { fieldPath: ["path"], start: 4, end: 5, multiSegment: true },
    ]);
  });

  it("reads nested field paths and verbs after literals", () => {
    expect(parsePathTemplate("/v1/{book.name=shelves/*/books/*}").variables[0]?.fieldPath).toEqual(["book", "name"]);
    const t = parsePathTemplate("/v1/{name=workspaces/*/sandboxEngines/*}/filesystem:readFile");
    expect(t.verb).toBe("readFile");
    expect(t.segments.at(-1)).toEqual({ kind: "literal", value: "filesystem" });
  });

  it("rejects malformed templates", () => {
    for (const bad of ["v1/x", "/v1/**/x", "/v1/{a}/{a}", "/v1/{a", "/v1//x", "/v1/x:"]) {
      expect(() => parsePathTemplate(bad), bad).toThrow();
    }
  });
});

describe("route trie", () => {
  const trie = createRouteTrie<string>((r) => r);
  const add = (method: string, path: string) => trie.add(method, parsePathTemplate(path), `${method} ${path}`);
  add("GET", "/v1/{name=shelves/*/books/*}");
  add("DELETE", "/v1/{name=shelves/*/books/*}");
  add("POST", "/v1/{name=shelves/*/books/*}:archive");
  add("GET", "/v1/{parent=shelves/*}/books");
  add("GET", "/v1/books:search");
  add("GET", "/v1/shelves/special/books/x");
  add("GET", "/v1/{shelf=shelves/*}/files/{path=**}");

  it("prefers literals over wildcards", () => {
    expect(trie.match("GET", "/v1/shelves/special/books/x")).toMatchObject({
      route: "GET /v1/shelves/special/books/x",
    });
    expect(trie.match("GET", "/v1/shelves/special/books/y")).toMatchObject({
      route: "GET /v1/{name=shelves/*/books/*}",
    });
  });

  it("splits a declared verb off the last segment", () => {
    expect(trie.match("POST", "/v1/shelves/s/books/b:archive")).toMatchObject({
      route: "POST /v1/{name=shelves/*/books/*}:archive",
      segments: ["v1", "shelves", "s", "books", "b"],
    });
    expect(trie.match("GET", "/v1/books:search")).toMatchObject({ route: "GET /v1/books:search" });
  });

  it("keeps a colon that is no declared verb in the value", () => {
    expect(trie.match("GET", "/v1/shelves/s/books/a:b")).toMatchObject({
      route: "GET /v1/{name=shelves/*/books/*}",
      segments: ["v1", "shelves", "s", "books", "a:b"],
    });
  });

  it("reports the methods a known path allows", () => {
    expect(trie.match("PUT", "/v1/shelves/s/books/b")).toEqual({ kind: "method", allowed: ["DELETE", "GET"] });
    expect(trie.match("GET", "/v1/shelves/s/books/b:archive")).toEqual({ kind: "method", allowed: ["POST"] });
  });

  it("matches ** with zero or more segments and nothing else", () => {
    expect(trie.match("GET", "/v1/shelves/s/files/a/b/c")).toMatchObject({ kind: "found" });
    expect(trie.match("GET", "/v1/shelves/s/files")).toMatchObject({ kind: "found" });
    expect(trie.match("GET", "/v1/nothing")).toEqual({ kind: "none" });
    expect(trie.match("GET", "/v1/shelves//books")).toEqual({ kind: "none" });
  });

  it("does not split on an encoded slash", () => {
    expect(trie.match("GET", "/v1/shelves/a%2Fb/books/c")).toMatchObject({
      segments: ["v1", "shelves", "a%2Fb", "books", "c"],
    });
  });

  it("refuses two rules for the same method and shape", () => {
    expect(() => add("GET", "/v1/{other=shelves/*}/books")).toThrow(/clashes/);
  });
});
