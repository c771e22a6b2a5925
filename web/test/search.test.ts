// Search in a real browser: the keyboard shortcuts, the index loaded only on first open, results
// across guides, the API reference and the Python reference, the empty result, the network
// failure messages and the search page.
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { BASE, openPage, setUpSiteAndBrowser, waitForContent } from "./harness.js";

const env = setUpSiteAndBrowser();

const dialog = (page: Page) => page.getByRole("dialog", { name: "Search the documentation" });
const input = (page: Page) => dialog(page).getByRole("searchbox");

function countIndexRequests(page: Page): () => number {
  let n = 0;
  page.on("request", (r) => {
    if (r.url().includes("/assets/search-index-")) n++;
  });
  return () => n;
}

describe("the search box", () => {
  it("opens with Ctrl+K, Cmd+K and /, closes with Escape, and loads the index only when first opened", async () => {
    const t = await openPage(env.browser);
    const indexRequests = countIndexRequests(t.page);
    await t.page.goto(env.site.url("get-started/access-ai-engines"));
    await waitForContent(t.page);
    await t.page.waitForTimeout(500);
    expect(indexRequests()).toBe(0);

    const indexLoaded = t.page.waitForResponse((r) => r.url().includes("/assets/search-index-"));
    await t.page.keyboard.press("Control+k");
    await dialog(t.page).waitFor();
    await expect(input(t.page).evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    await indexLoaded;
    expect(indexRequests()).toBe(1);
    await t.page.keyboard.press("Escape");
    await dialog(t.page).waitFor({ state: "detached" });

    await t.page.keyboard.press("Meta+k");
    await dialog(t.page).waitFor();
    await t.page.keyboard.press("Escape");
    await t.page.keyboard.press("/");
    await dialog(t.page).waitFor();
    await t.page.getByRole("button", { name: "Close search" }).click();
    await dialog(t.page).waitFor({ state: "detached" });
    // Opening again does not fetch the index again.
    expect(indexRequests()).toBe(1);

    await t.page.getByRole("button", { name: "Search" }).click();
    await dialog(t.page).waitFor();
    t.expectNoErrors();
    await t.close();
  });

  it("finds guide sections, API methods and Python pages, and goes to a result", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url(""));
    await waitForContent(t.page);
    await t.page.keyboard.press("Control+k");
    await input(t.page).fill("resize storage");
    const hits = dialog(t.page).locator(".search-hit");
    await hits.first().waitFor();
    const titles = await hits.locator(".search-hit-title").allTextContents();
    expect(titles).toContain("ResizeDAIEngineStorage");
    expect(titles).toContain("ResizeNotebookEngineStorage");

    await input(t.page).fill("platform token login");
    await dialog(t.page).locator(".search-hit-page", { hasText: "Log in with the Python client" }).first().waitFor();

    await input(t.page).fill("grow the data disk");
    await dialog(t.page).locator(".search-hit-title", { hasText: "Grow the data disk" }).first().waitFor();
    // Arrow keys move through the results; Enter follows the focused one.
    await t.page.keyboard.press("ArrowDown");
    await expect(t.page.evaluate(() => document.activeElement?.classList.contains("search-hit"))).resolves.toBe(true);
    const href = await t.page.evaluate(() => (document.activeElement as HTMLAnchorElement).getAttribute("href"));
    await t.page.keyboard.press("Enter");
    await dialog(t.page).waitFor({ state: "detached" });
    await t.page.waitForURL((url) => url.pathname + url.hash === href);
    const target = decodeURIComponent(new URL(href!, env.site.origin).hash.slice(1));
    await t.page.locator(`[id="${target}"]`).waitFor();
    await expect(t.page.locator(`[id="${target}"]`).isVisible()).resolves.toBe(true);
    t.expectNoErrors();
    await t.close();
  });

  it("says 'No results for' a query that matches nothing", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url(""));
    await waitForContent(t.page);
    await t.page.keyboard.press("/");
    await input(t.page).fill("qwxzv");
    await expect.poll(() => dialog(t.page).getByRole("status").textContent()).toBe('No results for "qwxzv"');
    t.expectNoErrors();
    await t.close();
  });

  it("reports a network failure with the help text, and works again once the network is back", async () => {
    const t = await openPage(env.browser, { expectErrors: [/ERR_INTERNET_DISCONNECTED/] });
    await t.page.goto(env.site.url("py/login"));
    await waitForContent(t.page);
    await t.context.setOffline(true);
    await t.page.keyboard.press("Control+k");
    const alert = dialog(t.page).getByRole("alert");
    await alert.waitFor();
    await expect(alert.locator("p").allTextContents()).resolves.toEqual([
      "Unable to fetch results",
      "You might want to check your network connection.",
    ]);
    await input(t.page).fill("engine");
    await expect
      .poll(() => alert.locator("p").allTextContents())
      .toEqual(["Unable to fetch results", "You might want to check your network connection."]);
    await t.context.setOffline(false);
    await input(t.page).fill("engines");
    await dialog(t.page).locator(".search-hit").first().waitFor();
    t.expectNoErrors();
    await t.close();
  });
});

describe("the search page", () => {
  it("shows the results for ?q=, keeps the query in the URL and does not open the dialog on /", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url("search?q=sandbox%20template"));
    await waitForContent(t.page);
    await expect(t.page.locator("main h1").textContent()).resolves.toBe('Search results for "sandbox template"');
    await t.page.locator(".search-page .search-hit").first().waitFor();
    expect(await t.page.locator(".search-page .search-hit-title").allTextContents()).toContain("SandboxEngineTemplate");

    const box = t.page.getByRole("searchbox", { name: "Search" });
    await box.fill("");
    await box.type("ports/");
    await expect(dialog(t.page).count()).resolves.toBe(0);
    await t.page.waitForURL((url) => url.pathname === `${BASE}search` && url.searchParams.get("q") === "ports/");
    await box.fill("qwxzv");
    await expect.poll(() => t.page.locator(".search-page [role=status]").textContent()).toBe('No results for "qwxzv"');
    t.expectNoErrors();
    await t.close();
  });

  it("is where the dialog's 'See all results' link goes", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url(""));
    await waitForContent(t.page);
    await t.page.keyboard.press("Control+k");
    await input(t.page).fill("pause");
    await dialog(t.page).getByRole("link", { name: 'See all results for "pause"' }).click();
    await t.page.locator("main h1", { hasText: 'Search results for "pause"' }).waitFor();
    t.expectNoErrors();
    await t.close();
  });
});
