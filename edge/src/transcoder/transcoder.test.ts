import { request as httpRequest } from "node:http";
import type { RestJson } from "@aiem/kit/testing";
import type { AddressInfo } from "node:net";
import { createRouterTransport, type Interceptor, type Transport } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEdgeHandler } from "../server/edge-handler.js";
import { createEdgeServer, type EdgeServer } from "../server/front-door.js";
import { createInProcessTransport } from "../server/in-process-transport.js";
import { createLibraryFixture, type LibraryFixture } from "../testing/library-fixture.js";

let fixture: LibraryFixture;
let edge: EdgeServer;
let base: string;
let address: AddressInfo;
let intercepted: string[] = [];

beforeAll(() => {
  fixture = createLibraryFixture();
});

async function startEdge(makeTransport: (routes: LibraryFixture["routes"]) => Transport): Promise<void> {
  intercepted = [];
  const transport = makeTransport(fixture.routes);
  const tag: Interceptor = (next) => async (req) => {
    intercepted.push(req.method.name);
    req.header.set("x-intercepted", "yes");
    return next(req);
  };
  const handler = createEdgeHandler({
    registry: fixture.registry,
    services: [{ service: fixture.service, transport }],
    interceptors: [tag],
    bodyLimitBytes: 1024,
    cors: { allowedOrigins: ["https://app.example.com"] },
  });
  edge = createEdgeServer(handler);
  address = await edge.listen(0, "127.0.0.1");
  base = `http://127.0.0.1:${address.port}`;
}

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: RestJson;
}

async function call(
  method: string,
  path: string,
  init: { body?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const res = await fetch(base + path, {
    method,
    body: init.body,
    headers: { ...(init.body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

const last = (method: string) => fixture.lastRequest.get(method) as RestJson;

// The same rules through a transport that serialises (as to a remote service) and through the
// direct in-process one the all-in-one edge uses.
describe.each([
  ["router transport", createRouterTransport],
  ["in-process transport", createInProcessTransport],
] as const)("REST transcoding (%s)", (_label, makeTransport) => {
  beforeAll(() => startEdge((routes) => makeTransport(routes)));
  afterAll(() => edge.close());

  describe("path variables and bindings", () => {
    it("gets a resource by a multi-segment variable, emitting zero values", async () => {
      const r = await call("GET", "/v1/shelves/s1/books/b1", { headers: { authorization: "Bearer t0k" } });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/json");
      expect(r.json).toMatchObject({
        name: "shelves/s1/books/b1",
        title: "Title of shelves/s1/books/b1",
        pageCount: "320",
        genre: "GENRE_FICTION",
        archived: false,
        cover: "",
        labels: {},
        tags: ["a"],
      });
      expect(r.headers.get("x-book-etag")).toBe("etag-1");
      const headers = fixture.lastHeaders.get("GetBook")!;
      expect(headers.get("authorization")).toBe("Bearer t0k");
      expect(headers.get("x-intercepted")).toBe("yes");
    });

    it("serves additional_bindings and response_body", async () => {
      const archived = await call("GET", "/v1/archives/a1/books/b2");
      expect(archived.json.name).toBe("archives/a1/books/b2");
      const title = await call("GET", "/v1/shelves/s/books/b/title");
      expect(title.status).toBe(200);
      expect(title.json).toBe("Title of shelves/s/books/b");
    });

    it("keeps %2F in multi-segment variables and decodes everything else", async () => {
      const r = await call("GET", "/v1/shelves/a%2Fb/books/c%20d%3Ae");
      expect(r.status).toBe(200);
      expect(r.json.name).toBe("shelves/a%2Fb/books/c d:e");
    });

    it("fully decodes single-segment variables", async () => {
      const r = await call("GET", "/v1/shelves/a%2Fb%3Ac%25");
      expect(r.status).toBe(200);
      expect(r.json.shelfId).toBe("a/b:c%");
    });

    it("takes the rest of the path for **", async () => {
      const r = await call("GET", "/v1/shelves/s/files/a/b%2Fc/d.txt");
      expect(r.json).toEqual({ shelf: "shelves/s", path: "a/b%2Fc/d.txt" });
    });

    it("sets nested path fields next to the body", async () => {
      const r = await call("PATCH", "/v1/shelves/s/books/b?updateMask=title,page_count,Author.Display_Name", {
        body: JSON.stringify({ title: "New", name: "shelves/other/books/x" }),
      });
      expect(r.status).toBe(200);
      const req = last("UpdateBook");
      expect(req.book.name).toBe("shelves/s/books/b");
      expect(req.book.title).toBe("New");
      // Exactly as sent: snake_case and case kept, nothing camel-cased.
      expect(req.updateMask.paths).toEqual(["title", "page_count", "Author.Display_Name"]);
    });

    it("treats a colon in the last segment as a verb only when the verb is declared there", async () => {
      const plain = await call("GET", "/v1/shelves/s/books/a:b");
      expect(plain.status).toBe(200);
      expect(plain.json.name).toBe("shelves/s/books/a:b");
      const shelf = await call("GET", "/v1/shelves/x:archive");
      expect(shelf.status).toBe(200);
      expect(shelf.json.shelfId).toBe("x:archive");
      const verb = await call("POST", "/v1/shelves/s/books/b:archive", { body: JSON.stringify({ reason: "old" }) });
      expect(verb.status).toBe(200);
      expect(verb.json).toMatchObject({ name: "shelves/s/books/b", archived: true, archiveReason: "old" });
      const collection = await call("GET", "/v1/books:search?query=a+b%21");
      expect(collection.json.nextPageToken).toBe("q=a b!");
    });
  });

  describe("query parameters", () => {
    it("converts every field kind, by JSON or proto name, nested and repeated", async () => {
      const query = [
        "pageSize=10",
        "page_token=tok",
        "genres=GENRE_FICTION",
        "genres=2",
        "minPages=-5",
        "max_pages=18446744073709551615",
        "publishedAfter=2024-01-02T03:04:05.5Z",
        "maxReadTime=90.5s",
        "readMask=title,page_count",
        "coverHash=AQID",
        "labels[k]=v",
        "labels%5Bk2%5D=v%20w",
        "tags=x",
        "tags=y",
        "query.author.displayName=Ann",
        "query.author.birth_year=1970",
        "query.genres=GENRE_SCIENCE",
        "includeDrafts=true",
        "minRating=4.5",
        "maxRating=1.5",
        "edition=3",
        "ids=1",
        "ids=9007199254740993",
        "genreByYear[1999]=GENRE_FICTION",
        "sortByTitle=asc",
      ].join("&");
      const r = await call("GET", `/v1/shelves/s/books?${query}`);
      expect(r.status, r.text).toBe(200);
      expect(r.json.request).toEqual({
        parent: "shelves/s",
        pageSize: 10,
        pageToken: "tok",
        genres: ["GENRE_FICTION", "GENRE_SCIENCE"],
        minPages: "-5",
        maxPages: "18446744073709551615",
        publishedAfter: "2024-01-02T03:04:05.500Z",
        maxReadTime: "90.500s",
        readMask: "title,pageCount",
        coverHash: "AQID",
        labels: { k: "v", k2: "v w" },
        tags: ["x", "y"],
        query: { author: { displayName: "Ann", birthYear: 1970 }, genres: ["GENRE_SCIENCE"] },
        includeDrafts: true,
        minRating: 4.5,
        maxRating: 1.5,
        edition: 3,
        ids: ["1", "9007199254740993"],
        genreByYear: { "1999": "GENRE_FICTION" },
        sortByTitle: "asc",
      });
      expect(last("ListBooks").readMask.paths).toEqual(["title", "page_count"]);
    });

    it("rejects unknown query parameters, naming every one", async () => {
      const r = await call("GET", "/v1/shelves/s/books?pageSize=1&bogus=1&also.bad=2");
      expect(r.status).toBe(400);
      expect(r.headers.get("content-type")).toBe("application/json");
      expect(r.json.code).toBe(3);
      expect(r.json.message).toContain("bogus: unknown query parameter");
      expect(r.json.message).toContain("also.bad: unknown query parameter");
      expect(r.json.details).toEqual([
        {
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [
            { field: "bogus", description: "unknown query parameter" },
            { field: "also.bad", description: "unknown query parameter" },
          ],
        },
      ]);
    });

    it("rejects bad values, repeats of singular fields and oneof clashes", async () => {
      const cases: Array<[string, string]> = [
        ["pageSize=abc", "pageSize"],
        ["pageSize=99999999999", "pageSize"],
        ["genres=NOPE", "genres"],
        ["includeDrafts=maybe", "includeDrafts"],
        ["publishedAfter=yesterday", "publishedAfter"],
        ["maxReadTime=5m", "maxReadTime"],
        ["pageSize=1&pageSize=2", "pageSize"],
        ["sortByTitle=a&sortByAuthor=b", "sortByAuthor"],
        ["labels=x", "labels"],
        ["query=x", "query"],
        ["genreByYear[x]=GENRE_FICTION", "genreByYear[x]"],
        ["page%ZZ=1", "page%ZZ"],
      ];
      for (const [query, field] of cases) {
        const r = await call("GET", `/v1/shelves/s/books?${query}`);
        expect(r.status, query).toBe(400);
        expect(r.json.message.startsWith(`${field}: `), `${query} -> ${r.json.message}`).toBe(true);
      }
    });

    it("does not take fields bound by the path or the body from the query", async () => {
      const path = await call("GET", "/v1/shelves/s/books/b?name=x");
      expect(path.status).toBe(400);
      expect(path.json.message).toMatch(/^name: /);
      const body = await call("POST", "/v1/shelves/s/books?bookId=b1&book.title=x", { body: "{}" });
      expect(body.status).toBe(400);
      expect(body.json.message).toMatch(/^book\.title: /);
    });

    it('allows no query parameter with body "*"', async () => {
      const r = await call("POST", "/v1/shelves/s/books/b:archive?reason=x", { body: "{}" });
      expect(r.status).toBe(400);
      expect(r.json.message).toMatch(/^reason: unknown query parameter/);
    });
  });

  describe("request bodies", () => {
    it("maps a body field and the id query parameter", async () => {
      const r = await call("POST", "/v1/shelves/s/books?bookId=b9", {
        body: JSON.stringify({
          title: "T",
          pageCount: "12",
          genre: "GENRE_SCIENCE",
          labels: { a: "b" },
          author: { display_name: "Bo" },
        }),
      });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toMatchObject({
        name: "shelves/s/books/b9",
        title: "T",
        pageCount: "12",
        genre: "GENRE_SCIENCE",
        labels: { a: "b" },
      });
      expect(last("CreateBook").book.author.displayName).toBe("Bo");
    });

    it("keeps FieldMask paths in a body exactly as sent, under either field name", async () => {
      await call("POST", "/v1/shelves/s/books/b:archive", { body: JSON.stringify({ keepMask: "title,page_count" }) });
      expect(last("ArchiveBook").keepMask.paths).toEqual(["title", "page_count"]);
      await call("POST", "/v1/shelves/s/books/b:archive", { body: JSON.stringify({ keep_mask: "archive_reason" }) });
      expect(last("ArchiveBook").keepMask.paths).toEqual(["archive_reason"]);
    });

    it("takes an empty body as an empty message", async () => {
      const r = await call("POST", "/v1/shelves/s/books/b:archive");
      expect(r.status).toBe(200);
      expect(r.json.archiveReason).toBe("");
    });

    it("rejects unknown JSON fields by their full path", async () => {
      const r = await call("POST", "/v1/shelves/s/books?bookId=x", {
        body: JSON.stringify({ title: "x", author: { displayName: "a", nickname: "y" } }),
      });
      expect(r.status).toBe(400);
      expect(r.json.code).toBe(3);
      expect(r.json.message).toBe("author.nickname: unknown field in the request body");
      const top = await call("POST", "/v1/shelves/s/books/b:archive", {
        body: JSON.stringify({ reason: "x", extra: 1 }),
      });
      expect(top.json.message).toBe("extra: unknown field in the request body");
    });

    it("rejects malformed JSON and wrong JSON types", async () => {
      const malformed = await call("POST", "/v1/shelves/s/books?bookId=x", { body: '{"title": ' });
      expect(malformed.status).toBe(400);
      expect(malformed.json.message).toMatch(/^malformed JSON in the request body/);
      const wrong = await call("POST", "/v1/shelves/s/books?bookId=x", { body: JSON.stringify({ pageCount: "many" }) });
      expect(wrong.status).toBe(400);
      expect(wrong.json.message).toMatch(/^invalid request body: /);
      const array = await call("POST", "/v1/shelves/s/books/b:archive", { body: "[]" });
      expect(array.status).toBe(400);
    });

    it("rejects a body on a method that takes none", async () => {
      const r = await call("DELETE", "/v1/shelves/s/books/b?force=true", { body: JSON.stringify({ force: true }) });
      expect(r.status).toBe(400);
      const ok = await call("DELETE", "/v1/shelves/s/books/b?force=true");
      expect(ok.json).toEqual({ name: "shelves/s/books/b", force: true });
    });

    it("answers 413 with a Status past the body limit", async () => {
      const r = await call("POST", "/v1/shelves/s/books?bookId=x", {
        body: JSON.stringify({ title: "x".repeat(2000) }),
      });
      expect(r.status).toBe(413);
      expect(r.json).toMatchObject({ code: 8, message: expect.stringContaining("1024 bytes") });
    });

    it("answers 413 for a chunked body that grows past the limit", async () => {
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: "127.0.0.1",
            port: address.port,
            method: "POST",
            path: "/v1/shelves/s/books?bookId=x",
            headers: { "content-type": "application/json" },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.write('{"title":"');
        req.write("y".repeat(3000));
        req.end('"}');
      });
      expect(status).toBe(413);
    });
  });

  describe("routing errors", () => {
    it("answers 404 with a Status for an unknown path", async () => {
      for (const path of ["/v1/nothing", "/v1/shelves/s/books/b/extra", "/v2/shelves/s", "/"]) {
        const r = await call("GET", path);
        expect(r.status, path).toBe(404);
        expect(r.json.code).toBe(5);
        expect(r.json.details).toEqual([]);
      }
    });

    it("answers 405 with Allow for a known path and the wrong method", async () => {
      const r = await call("PUT", "/v1/shelves/s/books/b", { body: "{}" });
      expect(r.status).toBe(405);
      expect(r.headers.get("allow")).toBe("DELETE, GET, PATCH");
      expect(r.json.code).toBe(12);
      const verb = await call("GET", "/v1/shelves/s/books/b:archive");
      expect(verb.status).toBe(405);
      expect(verb.headers.get("allow")).toBe("POST");
    });

    it("maps service errors to their HTTP status", async () => {
      const r = await call("GET", "/v1/shelves/s/books/missing");
      expect(r.status).toBe(404);
      expect(r.json).toEqual({ code: 5, message: 'book "shelves/s/books/missing" not found', details: [] });
    });
  });

  describe("server streaming", () => {
    const lines = (text: string) =>
      text
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l));

    it("streams newline-delimited JSON results", async () => {
      const r = await call("GET", "/v1/shelves/s/books:stream?count=3");
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("application/x-ndjson");
      const out = lines(r.text);
      expect(out).toHaveLength(3);
      expect(out[0]).toMatchObject({ result: { name: "shelves/s/books/0", pageCount: "320", archived: false } });
    });

    it("ends with an error line when the stream fails after it started", async () => {
      const r = await call("GET", "/v1/shelves/s/books:stream?count=5&failAfter=2");
      expect(r.status).toBe(200);
      const out = lines(r.text);
      expect(out).toHaveLength(3);
      expect(out[2]).toEqual({ error: { code: 10, message: "the shelf fell over", details: [] } });
    });

    it("answers a proper error status when the stream fails before its first message", async () => {
      const r = await call("GET", "/v1/shelves/s/books:stream?count=5&failAfter=-1");
      expect(r.status).toBe(409);
      expect(r.json).toEqual({ code: 10, message: "the shelf fell over", details: [] });
    });

    it("sends the headers of a quiet stream after a second; a later failure is an error line", async () => {
      const r = await call("GET", "/v1/shelves/s/books:stream?count=2&failAfter=-1&firstDelayMs=1300");
      expect(r.status).toBe(200);
      expect(lines(r.text)).toEqual([{ error: { code: 10, message: "the shelf fell over", details: [] } }]);
    });

    it("cancels the upstream call when the client disconnects", async () => {
      const cancelled = fixture.streamCancelled();
      await new Promise<void>((resolve, reject) => {
        const req = httpRequest(
          { host: "127.0.0.1", port: address.port, path: "/v1/shelves/s/books:stream?count=5&hang=true" },
          (res) => {
            res.once("data", (chunk: Buffer) => {
              expect(JSON.parse(chunk.toString())).toMatchObject({ result: { name: "shelves/s/books/0" } });
              req.destroy();
              resolve();
            });
          },
        );
        req.on("error", () => {});
        req.on("close", () => resolve());
        setTimeout(() => reject(new Error("no first message")), 5_000);
        req.end();
      });
      await expect(
        Promise.race([cancelled.then(() => "cancelled"), new Promise((r) => setTimeout(() => r("timeout"), 5_000))]),
      ).resolves.toBe("cancelled");
    });
  });

  describe("CORS", () => {
    const origin = "https://app.example.com";

    it("answers a preflight for REST and Connect paths", async () => {
      for (const path of ["/v1/shelves/s/books", "/edgetest.v1.LibraryService/GetBook"]) {
        const r = await call("OPTIONS", path, {
          headers: {
            origin,
            "access-control-request-method": "PATCH",
            "access-control-request-headers": "authorization, content-type",
          },
        });
        expect(r.status, path).toBe(204);
        expect(r.headers.get("access-control-allow-origin")).toBe(origin);
        expect(r.headers.get("access-control-allow-methods")).toContain("PATCH");
        expect(r.headers.get("access-control-allow-headers")).toBe("authorization, content-type");
        expect(r.headers.get("vary")).toContain("Origin");
      }
    });

    it("refuses origins that are not configured", async () => {
      const r = await call("OPTIONS", "/v1/shelves/s/books", {
        headers: { origin: "https://evil.example.com", "access-control-request-method": "GET" },
      });
      expect(r.status).toBe(403);
      expect(r.headers.get("access-control-allow-origin")).toBeNull();
      const actual = await call("GET", "/v1/shelves/s/books/b", { headers: { origin: "https://evil.example.com" } });
      expect(actual.status).toBe(200);
      expect(actual.headers.get("access-control-allow-origin")).toBeNull();
    });

    it("marks actual responses, errors included", async () => {
      const ok = await call("GET", "/v1/shelves/s/books/b", { headers: { origin } });
      expect(ok.headers.get("access-control-allow-origin")).toBe(origin);
      expect(ok.headers.get("access-control-expose-headers")).toContain("Grpc-Status");
      const error = await call("GET", "/v1/nothing", { headers: { origin } });
      expect(error.status).toBe(404);
      expect(error.headers.get("access-control-allow-origin")).toBe(origin);
    });
  });

  describe("interceptors", () => {
    it("run around REST calls", () => {
      expect(intercepted).toContain("GetBook");
      expect(intercepted).toContain("StreamBooks");
    });
  });
});
