import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDocsHandler } from "./static-handler.js";

const dist = mkdtempSync(join(tmpdir(), "aiem-dist-"));
const js = "export const x = 1;\n".repeat(100);
mkdirSync(join(dist, "assets"));
mkdirSync(join(dist, ".vite"));
writeFileSync(join(dist, "index.html"), "<!doctype html><title>app</title>");
writeFileSync(join(dist, "favicon.svg"), "<svg/>");
writeFileSync(join(dist, ".vite/manifest.json"), "{}");
writeFileSync(join(dist, "assets/app-Ab12Cd34.js"), js);
writeFileSync(join(dist, "assets/app-Ab12Cd34.js.gz"), gzipSync(js));
writeFileSync(
  join(dist, "routes.json"),
  JSON.stringify({
    version: "1.3.0",
    routes: ["", "api/", "py/installation", "py/clients/", "search"].map((path) => ({ path, title: path })),
  }),
);
writeFileSync(join(tmpdir(), "secret.txt"), "outside");

let server: Server;
let origin: string;

beforeAll(async () => {
  const docs = createDocsHandler({ distDir: dist });
  server = createServer((req, res) => {
    if (!docs(req, res)) {
      res.statusCode = 418;
      res.end("not docs");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  rmSync(dist, { recursive: true, force: true });
});

const get = (path: string, init?: RequestInit) => fetch(origin + path, { redirect: "manual", ...init });

describe("the docs handler", () => {
  it("leaves requests outside the base path to the caller", async () => {
    expect((await get("/v1/workspaces")).status).toBe(418);
    expect((await get("/ai-engine-managerx")).status).toBe(418);
  });

  it("serves index.html for known routes, deep links included, and revalidates HTML", async () => {
    for (const path of [
      "/ai-engine-manager/",
      "/ai-engine-manager/py/installation",
      "/ai-engine-manager/api/",
      "/ai-engine-manager/search?q=engine",
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(await res.text()).toContain("<title>app</title>");
    }
  });

  it("answers unknown paths with the app and a real 404", async () => {
    for (const path of [
      "/ai-engine-manager/nope",
      "/ai-engine-manager/py/installation/extra",
      "/ai-engine-manager/py/Installation",
      "/ai-engine-manager/index.html",
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    }
  });

  it("caches hashed assets for a year as immutable and serves them compressed when accepted", async () => {
    const plain = await get("/ai-engine-manager/assets/app-Ab12Cd34.js", {
      headers: { "accept-encoding": "identity" },
    });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(plain.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(await plain.text()).toBe(js);
    const zipped = await get("/ai-engine-manager/assets/app-Ab12Cd34.js", {
      headers: { "accept-encoding": "gzip, deflate" },
    });
    expect(zipped.headers.get("content-encoding")).toBe("gzip");
    expect(zipped.headers.get("vary")).toBe("Accept-Encoding");
    expect(await zipped.text()).toBe(js);
  });

  it("answers a missing asset with a plain 404, never with HTML", async () => {
    const res = await get("/ai-engine-manager/assets/gone-123.js");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
  });

  it("revalidates files without a hash and supports conditional requests", async () => {
    const first = await get("/ai-engine-manager/favicon.svg");
    expect(first.headers.get("cache-control")).toBe("no-cache");
    const etag = first.headers.get("etag")!;
    expect((await get("/ai-engine-manager/favicon.svg", { headers: { "if-none-match": etag } })).status).toBe(304);
  });

  it("redirects the slashless forms of the home page and the API reference, and trailing slashes of pages", async () => {
    expect((await get("/ai-engine-manager")).headers.get("location")).toBe("/ai-engine-manager/");
    expect((await get("/ai-engine-manager/api?x=1")).headers.get("location")).toBe("/ai-engine-manager/api/?x=1");
    const slash = await get("/ai-engine-manager/py/installation/");
    expect(slash.status).toBe(301);
    expect(slash.headers.get("location")).toBe("/ai-engine-manager/py/installation");
  });

  it("never serves files outside the build or hidden ones", async () => {
    expect((await get("/ai-engine-manager/..%2f..%2fsecret.txt")).status).toBe(404);
    // URL parsing resolves %2e%2e first, so this one leaves the base path and is not ours at all.
    expect(await (await get("/ai-engine-manager/%2e%2e/secret.txt")).text()).not.toContain("outside");
    expect((await get("/ai-engine-manager/.vite/manifest.json")).status).toBe(404);
    expect((await get("/ai-engine-manager/%E0%A4%A")).status).toBe(400);
  });

  it("answers HEAD without a body and refuses other methods", async () => {
    const head = await get("/ai-engine-manager/api/", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const post = await get("/ai-engine-manager/api/", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("answers 404 for a file removed since it was first served (a rebuild), and goes on serving", async () => {
    writeFileSync(join(dist, "assets/gone-Ef56Gh78.js"), js);
    writeFileSync(join(dist, "assets/gone-Ef56Gh78.js.gz"), gzipSync(js));
    const path = "/ai-engine-manager/assets/gone-Ef56Gh78.js";
    expect((await get(path, { headers: { "accept-encoding": "gzip" } })).status).toBe(200);
    rmSync(join(dist, "assets/gone-Ef56Gh78.js.gz"));
    const gone = await get(path, { headers: { "accept-encoding": "gzip" } });
    expect(gone.status).toBe(404);
    expect(gone.headers.get("content-encoding")).toBeNull();
    rmSync(join(dist, "assets/gone-Ef56Gh78.js"));
    // Its size was cached: the headers may be out, so the answer is cut; the server lives on.
    await get(path).then(
      (res) => res.arrayBuffer(),
      () => undefined,
    );
    expect((await get("/ai-engine-manager/")).status).toBe(200);
  });
});
