// Page loading in a real browser: the spinner, a chunk that fails to load (with Retry), a failed
// preload during navigation (one reload, never a loop), a page that throws, the progress bar,
// prefetching on fast and on 2g / Save-Data connections, and the initial JavaScript budget.
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { Page, Request } from "playwright-core";
import { BASE, chunkOf, openPage, readRoutes, setUpSiteAndBrowser, waitForContent } from "./harness.js";

const env = setUpSiteAndBrowser();

const h1 = (page: Page) => page.locator("main h1").first();
const pageChunks = new Set(readRoutes().routes.flatMap((r) => (r.chunk ? [BASE + r.chunk] : [])));
const isPageChunk = (request: Request) => pageChunks.has(new URL(request.url()).pathname);
const failedChunk = (path: string) =>
  new RegExp(`Failed to load resource: net::ERR_FAILED \\(.*${chunkOf(path).replace(/[.]/g, "\\.")}\\)`);

describe("loading a page", () => {
  it("shows a spinner while a slow page chunk loads, then the page", async () => {
    const t = await openPage(env.browser);
    await t.page.route(`**${chunkOf("py/migration")}`, async (route) => {
      await new Promise((r) => setTimeout(r, 1200));
      await route.continue();
    });
    await t.page.goto(env.site.url("py/migration"));
    await t.page.locator(".page-loading .spinner").waitFor({ state: "visible" });
    await expect(t.page.getByRole("status").textContent()).resolves.toContain("Loading the page");
    // The chrome is usable while the page loads.
    await expect(t.page.locator(".navbar-brand").isVisible()).resolves.toBe(true);
    await h1(t.page).filter({ hasText: "Migrate to" }).waitFor();
    await expect(t.page.locator(".spinner").count()).resolves.toBe(0);
    t.expectNoErrors();
    await t.close();
  });

  it("shows the error and a Retry button when the page chunk fails, and Retry loads it", async () => {
    const t = await openPage(env.browser, { expectErrors: [failedChunk("py/login")] });
    let blocked = true;
    await t.page.route(`**${chunkOf("py/login")}`, (route) => (blocked ? route.abort("failed") : route.continue()));
    await t.page.goto(env.site.url("py/login"));
    const error = t.page.locator(".page-error");
    await error.waitFor();
    await expect(error.getByRole("heading").textContent()).resolves.toBe("This page could not be loaded.");
    await expect(error.locator(".page-error-text").textContent()).resolves.toMatch(
      /TypeError: Failed to fetch dynamically imported module: .*page-py-login/,
    );
    blocked = false;
    await error.getByRole("button", { name: "Retry" }).click();
    await h1(t.page).filter({ hasText: "Log in with the Python client" }).waitFor();
    t.expectNoErrors();
    await t.close();
  });

  it("reloads the page once when a navigation's chunk fails to load, then shows Retry instead of looping", async () => {
    const t = await openPage(env.browser, { expectErrors: [failedChunk("py/login")] });
    let blocked = true;
    await t.page.route(`**${chunkOf("py/login")}`, (route) => (blocked ? route.abort("failed") : route.continue()));
    const warnings: string[] = [];
    t.page.on("console", (m) => m.type() === "warning" && warnings.push(m.text()));
    await t.page.goto(env.site.url("py/installation"));
    await waitForContent(t.page);
    const documents: string[] = [];
    t.page.on("request", (r) => r.resourceType() === "document" && documents.push(new URL(r.url()).pathname));
    await t.page.locator(".sidebar-column").getByRole("link", { name: "Login", exact: true }).click();
    await t.page.locator(".page-error").waitFor();
    // Give a loop the time it would need to show itself.
    await t.page.waitForTimeout(1000);
    expect(documents).toEqual([`${BASE}py/login`]);
    expect(warnings.filter((w) => w.includes("reloading the page"))).toHaveLength(1);
    blocked = false;
    await t.page.getByRole("button", { name: "Retry" }).click();
    await h1(t.page).filter({ hasText: "Log in with the Python client" }).waitFor();
    t.expectNoErrors();
    await t.close();
  });

  it("shows 'This page crashed.' with Try again when a page throws while rendering", async () => {
    const t = await openPage(env.browser, { expectErrors: [/Simulated render failure/] });
    await t.page.addInitScript(() => ((window as unknown as { crashPage: boolean }).crashPage = true));
    await t.page.route(`**${chunkOf("release-notes")}`, (route) =>
      route.fulfill({
        contentType: "text/javascript",
        body: `export const page = { title: "Release notes", description: "", toc: [], get html() {
          if (window.crashPage) throw new Error("Simulated render failure", { cause: new Error("the cause") });
          return "<h1>Recovered</h1>";
        } };`,
      }),
    );
    await t.page.goto(env.site.url("release-notes"));
    const crash = t.page.locator(".page-error");
    await expect(crash.getByRole("heading").textContent()).resolves.toBe("This page crashed.");
    await expect(crash.locator(".page-error-text").textContent()).resolves.toContain("Error: Simulated render failure");
    await expect(crash.locator(".page-error-text").textContent()).resolves.toContain("Cause: Error: the cause");
    // The rest of the site keeps working.
    await expect(t.page.locator(".sidebar-column nav").isVisible()).resolves.toBe(true);
    await t.page.evaluate(() => ((window as unknown as { crashPage: boolean }).crashPage = false));
    await crash.getByRole("button", { name: "Try again" }).click();
    await h1(t.page).filter({ hasText: "Recovered" }).waitFor();
    expect(t.errors).toEqual([]);
    await t.close();
  });

  it("shows the progress bar only after 200 ms of a navigation, keeping the old page until the new one is ready", async () => {
    const t = await openPage(env.browser);
    await t.page.route(`**${chunkOf("py/login")}`, async (route) => {
      await new Promise((r) => setTimeout(r, 1200));
      await route.continue();
    });
    await t.page.goto(env.site.url("py/installation"));
    await waitForContent(t.page);
    const started = await t.page.evaluate(() => {
      const link = [...document.querySelectorAll<HTMLAnchorElement>(".sidebar-column a")].find(
        (a) => a.textContent === "Login",
      )!;
      const start = performance.now();
      (window as unknown as { progressSeen: Promise<number> }).progressSeen = new Promise((resolve) => {
        new MutationObserver((_, observer) => {
          if (document.querySelector(".progress-bar")) {
            observer.disconnect();
            resolve(performance.now() - start);
          }
        }).observe(document.body, { childList: true, subtree: true });
      });
      link.click();
      return document.querySelector("main h1")!.textContent;
    });
    expect(started).toBe("Install the Python client");
    const delay = await t.page.evaluate(() => (window as unknown as { progressSeen: Promise<number> }).progressSeen);
    expect(delay).toBeGreaterThanOrEqual(195);
    expect(delay).toBeLessThan(1000);
    await expect(h1(t.page).textContent()).resolves.toBe("Install the Python client");
    await h1(t.page).filter({ hasText: "Log in with the Python client" }).waitFor();
    await expect(t.page.locator(".progress-bar").count()).resolves.toBe(0);
    t.expectNoErrors();
    await t.close();
  });

  it("does not show the progress bar for navigations faster than 200 ms", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url("py/installation"));
    await waitForContent(t.page);
    await t.page.evaluate(() => {
      (window as unknown as { sawProgress: boolean }).sawProgress = false;
      new MutationObserver(() => {
        if (document.querySelector(".progress-bar")) (window as unknown as { sawProgress: boolean }).sawProgress = true;
      }).observe(document.body, { childList: true, subtree: true });
    });
    await t.page.locator(".sidebar-column").getByRole("link", { name: "Initialization" }).click();
    await h1(t.page).filter({ hasText: "Initialize the Python client" }).waitFor();
    await t.page.waitForTimeout(300);
    await expect(t.page.evaluate(() => (window as unknown as { sawProgress: boolean }).sawProgress)).resolves.toBe(
      false,
    );
    t.expectNoErrors();
    await t.close();
  });
});

describe("prefetching", () => {
  async function chunksFetchedOn(
    connection: { effectiveType: string; saveData: boolean } | undefined,
    expected: string[] = [],
  ): Promise<string[]> {
    const t = await openPage(env.browser);
    if (connection) {
      await t.page.addInitScript((value) => {
        Object.defineProperty(navigator, "connection", { configurable: true, get: () => value });
      }, connection);
    }
    const fetched: string[] = [];
    t.page.on("request", (r) => isPageChunk(r) && fetched.push(new URL(r.url()).pathname));
    await t.page.goto(env.site.url("user-guide/dai-engine/create"));
    await waitForContent(t.page);
    await t.page.locator(".sidebar-column").getByRole("link", { name: "Release notes" }).hover();
    if (expected.length)
      await expect.poll(() => expected.every((c) => fetched.includes(c)), { timeout: 5000 }).toBe(true);
    // Idle-time prefetches start within a second; waiting longer shows that none come.
    else await t.page.waitForTimeout(1500);
    t.expectNoErrors();
    await t.close();
    return fetched.filter((p) => p !== chunkOf("user-guide/dai-engine/create"));
  }

  it("loads the chunks of visible and hovered links on a normal connection", async () => {
    // Hovered, in the sidebar, and linked from the content.
    const expected = [
      chunkOf("release-notes"),
      chunkOf("user-guide/dai-engine/manage"),
      chunkOf("administration/catalogue"),
    ];
    const fetched = await chunksFetchedOn(undefined, expected);
    expect(fetched).toEqual(expect.arrayContaining(expected));
  });

  it("loads nothing ahead on a 2g connection", async () => {
    expect(await chunksFetchedOn({ effectiveType: "2g", saveData: false })).toEqual([]);
  });

  it("loads nothing ahead with Save-Data on, yet navigation still works", async () => {
    expect(await chunksFetchedOn({ effectiveType: "4g", saveData: true })).toEqual([]);
    const t = await openPage(env.browser);
    await t.page.addInitScript(() =>
      Object.defineProperty(navigator, "connection", { get: () => ({ effectiveType: "4g", saveData: true }) }),
    );
    await t.page.goto(env.site.url("user-guide/dai-engine/create"));
    await waitForContent(t.page);
    await t.page.locator(".sidebar-column").getByRole("link", { name: "Release notes" }).click();
    await h1(t.page).filter({ hasText: "Release notes" }).waitFor();
    t.expectNoErrors();
    await t.close();
  });
});

describe("performance", () => {
  it("keeps the initial JavaScript of a guide page under 100 KB gzipped and fetches no search index", async () => {
    const t = await openPage(env.browser);
    // Save-Data keeps prefetching out of the measurement: only what the page itself needs counts.
    await t.page.addInitScript(() =>
      Object.defineProperty(navigator, "connection", { get: () => ({ effectiveType: "4g", saveData: true }) }),
    );
    const scripts = new Map<string, number>();
    const others: string[] = [];
    t.page.on("response", async (response) => {
      const url = new URL(response.url());
      if (url.pathname.endsWith(".js")) scripts.set(url.pathname, gzipSync(await response.body(), { level: 9 }).length);
      else others.push(url.pathname);
    });
    await t.page.goto(env.site.url("user-guide/dai-engine/manage"), { waitUntil: "networkidle" });
    await waitForContent(t.page);
    const total = [...scripts.values()].reduce((a, b) => a + b, 0);
    expect(scripts.has(chunkOf("user-guide/dai-engine/manage"))).toBe(true);
    expect(total, JSON.stringify([...scripts])).toBeLessThanOrEqual(100 * 1024);
    expect(others.filter((p) => p.includes("search-index"))).toEqual([]);
    expect([...scripts.keys()].filter((p) => /try-it|page-api|es-/.test(p))).toEqual([]);
    t.expectNoErrors();
    await t.close();
  });
});
