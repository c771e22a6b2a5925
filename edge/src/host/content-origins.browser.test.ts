// In Chromium, against the real all-in-one server: a page that a sandbox port serves, opened at
// the port's own origin, cannot read the docs site's storage, cannot read another engine's page
// (a notebook the browser was signed in to with the ticket of its access URL), and the cookies it
// sets do not reach the API.
// Chromium resolves `*.localhost` to loopback by itself; the API is opened at `localhost:<port>`
// so that a cookie set for the parent domain `localhost` would reach it but for the edge.
import type { IncomingMessage, ServerResponse } from "node:http";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostRequest } from "../testing/content-client.js";
import { IMAGE, startContentFixture, TEMPLATE, type ContentFixture } from "../testing/content-fixture.js";
import { createDocsFallback, defaultDocsDir } from "./docs.js";
import { notFound } from "./create-host.js";

const PROBE = "/cookie-probe";

// The page the sandbox's program serves: what its script tries is what any page there could.
const PAGE = `<!doctype html><title>port</title><p>port page</p>
<script>
async function outcome(f) {
  try { return { ok: true, value: await f() }; } catch (err) { return { ok: false, error: String(err) }; }
}
async function probe(api, engineUrl, probePath) {
  // The docs' storage: this origin's own is empty, and the docs' window is out of reach.
  const ownStorage = localStorage.getItem("aiem-secret");
  const frame = document.createElement("iframe");
  frame.src = api + "/ai-engine-manager/";
  await new Promise((resolve) => { frame.onload = resolve; document.body.append(frame); });
  const docsStorage = await outcome(async () => frame.contentWindow.localStorage.getItem("aiem-secret"));
  // Another engine's page, with the browser's cookies for it.
  const engineRead = await outcome(async () => (await fetch(engineUrl, { credentials: "include" })).text());
  // Cookies this page sets: one for this origin, one for the parent domain.
  document.cookie = "leak=1; domain=localhost; path=/";
  document.cookie = "own=1; path=/";
  const cookies = document.cookie;
  await fetch(api + probePath, { credentials: "include", mode: "no-cors" });
  return { ownStorage, docsStorage, engineRead, cookies };
}
</script>`;

// Another user's program on a public port: its page tries every way a response or a script has
// to put a cookie where another user's port would see it.
const TOSSING_PROGRAM = `
const http = require("http");
http.createServer((q, s) => {
  s.setHeader("content-type", "text/html");
  s.setHeader("set-cookie", [
    "tossed_header_localhost=1; Domain=localhost; Path=/",
    "tossed_header_sandboxes=1; Domain=sandboxes.localhost; Path=/",
    "tossed_header_public=1; Domain=public.localhost; Path=/",
    "__Host-aiem_session=planted; Secure; Path=/",
    "aiem_session=planted; Path=/",
    "bobs=1; Path=/",
  ]);
  s.end('<!doctype html><p>public page</p><script>document.cookie = "tossed_js_sandboxes=1; domain=sandboxes.localhost; path=/"; document.cookie = "tossed_js_localhost=1; domain=localhost; path=/";</script>');
}).listen(8081, "127.0.0.1");`;

describe("a sandbox port's page in Chromium", () => {
  let f: ContentFixture;
  let browser: Browser;
  /** The Cookie header of each request that reached the API's probe path. */
  const probed: (string | undefined)[] = [];
  const probe = (req: IncomingMessage, res: ServerResponse) => {
    probed.push(req.headers.cookie);
    res.writeHead(200, { "content-type": "text/plain", "access-control-allow-origin": "*" });
    res.end("probed");
  };
  const docs = createDocsFallback(defaultDocsDir(), notFound);

  beforeAll(async () => {
    [f, browser] = await Promise.all([
      startContentFixture({
        page: PAGE,
        fallback: (req, res) =>
          (req.url ?? "").startsWith(PROBE)
            ? probe(req as IncomingMessage, res as unknown as ServerResponse)
            : docs(req, res),
      }),
      chromium.launch({
        executablePath: "/usr/bin/chromium",
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
        ],
      }),
    ]);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await f?.stop();
  });

  it("is kept from the docs' storage, other engines' pages and the API's cookies", async () => {
    const [a] = f.engines;
    const api = `http://localhost:${new URL(f.t.url).port}`;
    const context = await browser.newContext();
    const page = await context.newPage();

    // The docs site, at the API's origin, keeps something in its storage.
    const docsPage = await page.goto(`${api}/ai-engine-manager/`);
    expect(docsPage?.status()).toBe(200);
    await page.evaluate('localStorage.setItem("aiem-secret", "docs-secret")');

    // The user opens a notebook through the URL `:access` hands out (with its ticket): the
    // notebook's origin now holds the user's cookie, and engine A's too.
    const { uri } = (await f.rest("GET", `/v1/${f.notebook.name}:access`)).body;
    const notebook = await page.goto(uri);
    expect(notebook?.status()).toBe(200);
    expect(page.url()).toBe(new URL(new URL(uri).pathname, uri).toString());
    expect((await context.cookies(uri)).map((c) => [c.name, c.domain, c.httpOnly])).toEqual([
      ["__Host-aiem_session", new URL(uri).hostname, true],
    ]);
    const engine = await page.goto(`${a.loginUrl}?token=${f.token}`);
    expect(engine?.status()).toBe(200);

    // Then the sandbox's page, at its port's origin.
    const port = await page.goto(`${f.port.internalUrl}?token=${f.token}`);
    expect(port?.status()).toBe(200);
    expect(await page.textContent("p")).toBe("port page");
    expect(new URL(page.url()).host).toBe(new URL(f.port.internalUrl).host);

    const args = JSON.stringify([api, new URL(new URL(uri).pathname, uri).toString(), PROBE]).slice(1, -1);
    const seen = (await page.evaluate(`probe(${args})`)) as {
      ownStorage: string | null;
      docsStorage: { ok: boolean; error?: string };
      engineRead: { ok: boolean; error?: string };
      cookies: string;
    };
    expect(seen.ownStorage).toBeNull();
    expect(seen.docsStorage.ok, JSON.stringify(seen.docsStorage)).toBe(false);
    expect(seen.docsStorage.error).toMatch(/SecurityError|cross-origin/i);
    expect(seen.engineRead.ok, JSON.stringify(seen.engineRead)).toBe(false);
    expect(seen.engineRead.error).toMatch(/Failed to fetch/);
    // The page did get to set its cookies, so their absence below is the edge's and the browser's doing.
    expect(seen.cookies).toContain("from_port=1");
    expect(seen.cookies).toContain("own=1");
    // Chromium refuses a cookie for `localhost` itself; the edge drops any that another browser takes.
    expect(seen.cookies).not.toContain("leak");

    // A top-level visit of the API sends whatever the browser would send it.
    await page.goto(`${api}${PROBE}`);
    expect(probed.length).toBe(2);
    for (const header of probed) {
      expect(header ?? "").not.toMatch(/from_port|own=|leak|aiem_/);
    }
    // The docs' storage is still its own.
    await page.goto(`${api}/ai-engine-manager/`);
    expect(await page.evaluate('localStorage.getItem("aiem-secret")')).toBe("docs-secret");
    await context.close();
  });

  it("lets no user's public page set a cookie that another user's port sees", async () => {
    const bob = await f.t.token("bob");
    const until = async (path: string, field: string, state: string) => {
      for (const deadline = Date.now() + 90_000; ; ) {
        const got = (await f.rest("GET", path, undefined, bob)).body[field];
        if (got?.state === state) return got;
        if (Date.now() > deadline) throw new Error(`${path} stayed ${got?.state}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const made = await f.rest(
      "POST",
      "/v1/workspaces/content/sandboxEngines?sandboxEngineId=bobs",
      { sandboxEngineImage: IMAGE, sandboxEngineTemplate: TEMPLATE },
      bob,
    );
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const sandbox = await until(`/v1/${made.body.sandboxEngine.name}`, "sandboxEngine", "STATE_RUNNING");
    try {
      const run = await f.rest(
        "POST",
        `/v1/${sandbox.name}/processes?autoRun=true`,
        { command: "node", args: ["-e", TOSSING_PROGRAM] },
        bob,
      );
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      expect((await f.rest("POST", `/v1/${sandbox.name}/ports?portId=8081`, { public: true }, bob)).status).toBe(200);
      const bobsPort = await until(`/v1/${sandbox.name}/ports/8081`, "port", "STATE_READY");
      // The other user's port is public too, so that a cookie for `public.localhost` would reach it.
      const victim = (await f.rest("PATCH", `/v1/${f.sandbox.name}/ports/8080?updateMask=public`, { public: true }))
        .body.port;

      const context = await browser.newContext();
      const page = await context.newPage();
      // READY once routed, before the program listens: 502 until it serves.
      const publicHost = new URL(bobsPort.publicUrl).host;
      await expect.poll(async () => (await hostRequest(f.t.url, publicHost, "/")).status).not.toBe(502);
      const tossing = await page.goto(bobsPort.publicUrl);
      expect(tossing?.status()).toBe(200);
      expect(await page.textContent("p")).toBe("public page");
      // What the browser kept: bob's cookies, each for bob's origin alone; none of ours.
      const kept = await context.cookies();
      expect(kept.map((c) => c.name).sort()).toEqual([
        "bobs",
        "tossed_header_localhost",
        "tossed_header_public",
        "tossed_header_sandboxes",
      ]);
      for (const cookie of kept) expect(cookie.domain).toBe(new URL(bobsPort.publicUrl).hostname);

      // The other user's program, at its internal and its public origin, sees none of them.
      const seen: (string | undefined)[] = [];
      for (const url of [`${f.port.internalUrl}echo?token=${f.token}`, `${victim.publicUrl}echo`]) {
        const echoed = await page.goto(url);
        expect(echoed?.status()).toBe(200);
        const body = JSON.parse((await page.textContent("body")) ?? "{}") as { headers: Record<string, string> };
        seen.push(body.headers.cookie);
      }
      for (const header of seen) expect(header ?? "").not.toMatch(/tossed|planted|bobs|aiem_/);
      await context.close();
    } finally {
      await f.rest("PATCH", `/v1/${f.sandbox.name}/ports/8080?updateMask=public`, { public: false });
      await f.rest("DELETE", `/v1/${sandbox.name}`, undefined, bob);
    }
  });
});
