// In Chromium, against the real all-in-one server: a page that a sandbox port serves, opened at
// the port's own origin, cannot read the docs site's storage, cannot read another engine's page
// (a notebook the browser was signed in to with the ticket of its access URL), and the cookies it
// sets do not reach the API.
// Chromium resolves `*.localhost` to loopback by itself; the API is opened at `localhost:<port>`
// so that a cookie set for the parent domain `localhost` would reach it but for the edge.
import type { IncomingMessage, ServerResponse } from "node:http";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startContentFixture, type ContentFixture } from "../testing/content-fixture.js";
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

describe("a sandbox port's page in Chromium", () => {
  let f: ContentFixture;
  let browser: Browser;
  /** The Cookie header of each request that reached the API's probe path. */
  const probed: (string | undefined)[] = [];
  const probe = (req: IncomingMessage, res: ServerResponse) => {
    probed.push(req.headers["cookie"]);
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
      ["aiem_engine_token", new URL(uri).hostname, true],
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
});
