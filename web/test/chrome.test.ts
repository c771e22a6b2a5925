// The site chrome in a real browser: navigation and its dropdowns, the theme switch and the
// announcement bar (both applied before the app runs), the docs version in local storage, the
// sidebar, the table of contents, client-side navigation, the mobile layout, and screenshots.
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import {
  axeScan,
  BASE,
  formatViolations,
  openPage,
  screenshot,
  setUpSiteAndBrowser,
  waitForContent,
} from "./harness.js";

const env = setUpSiteAndBrowser();

/** Holds back the app's entry script, to look at the page as the browser paints it first. */
async function holdEntryScript(page: Page): Promise<() => void> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  await page.route(/\/assets\/index-[\w-]+\.js$/, async (route) => {
    await released;
    await route.continue();
  });
  return release;
}

/** Waits until the HTML is parsed; DOMContentLoaded itself waits for the held module script. */
async function parsed(page: Page): Promise<void> {
  await page.waitForFunction(() => document.readyState !== "loading" && document.getElementById("root") !== null);
}

describe("navigation bar and footer", () => {
  it("has section links, dropdowns of sibling docs, the version, search, theme and the two buttons", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url("py/login"));
    await waitForContent(t.page);
    const nav = t.page.getByRole("navigation", { name: "Main" });
    await expect(nav.getByRole("link", { name: "Python client" }).getAttribute("aria-current")).resolves.toBe("page");
    for (const name of ["Guides", "API"])
      await expect(nav.getByRole("link", { name, exact: true }).isVisible()).resolves.toBe(true);

    const dropdown = nav.getByRole("button", { name: "AI engines" });
    await expect(dropdown.getAttribute("aria-expanded")).resolves.toBe("false");
    await dropdown.click();
    await expect(dropdown.getAttribute("aria-expanded")).resolves.toBe("true");
    const driverless = nav.getByRole("link", { name: /^Driverless AI/ });
    await expect(driverless.getAttribute("target")).resolves.toBe("_blank");
    await expect(driverless.getAttribute("href")).resolves.toMatch(/^https:\/\//);
    await t.page.keyboard.press("Escape");
    await expect(dropdown.getAttribute("aria-expanded")).resolves.toBe("false");
    await expect(dropdown.evaluate((el) => el === document.activeElement)).resolves.toBe(true);
    await nav.getByRole("button", { name: "Python APIs" }).click();
    await expect(nav.getByRole("link", { name: /H2O-3 Python module/ }).isVisible()).resolves.toBe(true);
    // A click anywhere else closes it.
    await t.page.mouse.click(640, 850);
    await expect(nav.getByRole("link", { name: /H2O-3 Python module/ }).isVisible()).resolves.toBe(false);

    await nav.getByRole("button", { name: "1.3.0" }).click();
    await expect(nav.getByRole("link", { name: "1.3.0 (current)" }).isVisible()).resolves.toBe(true);
    await t.page.keyboard.press("Escape");

    for (const name of ["Learn More", "Request a Demo"]) {
      const link = nav.getByRole("link", { name, exact: true });
      await expect(link.isVisible()).resolves.toBe(true);
      await expect(link.getAttribute("href")).resolves.toMatch(/^https:\/\//);
    }
    const footer = t.page.getByRole("contentinfo");
    await expect(footer.getByRole("heading").allTextContents()).resolves.toEqual(["About us", "Legal", "Community"]);
    await expect(footer.getByRole("link").count()).resolves.toBeGreaterThanOrEqual(6);
    t.expectNoErrors();
    await t.close();
  });
});

describe("theme", () => {
  it("is light by default, switches to dark, and the saved choice applies before the app starts", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url("get-started/access-ai-engines"));
    await waitForContent(t.page);
    await expect(t.page.getAttribute("html", "data-theme")).resolves.toBe("light");
    const background = () => t.page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    await expect(background()).resolves.toBe("rgb(255, 255, 255)");
    await t.page.getByRole("button", { name: "Switch to dark mode (currently light mode)" }).click();
    await expect(t.page.getAttribute("html", "data-theme")).resolves.toBe("dark");
    await expect(t.page.evaluate(() => localStorage.getItem("theme"))).resolves.toBe("dark");
    await expect(background()).resolves.toBe("rgb(27, 27, 29)");

    const release = await holdEntryScript(t.page);
    await t.page.goto(env.site.url("get-started/access-ai-engines"), { waitUntil: "commit" });
    await parsed(t.page);
    // The app has not run yet (the root is empty), yet the page is already dark.
    await expect(t.page.evaluate(() => document.getElementById("root")!.childElementCount)).resolves.toBe(0);
    await expect(t.page.getAttribute("html", "data-theme")).resolves.toBe("dark");
    await expect(background()).resolves.toBe("rgb(27, 27, 29)");
    release();
    await waitForContent(t.page);
    await t.page.getByRole("button", { name: "Switch to light mode (currently dark mode)" }).click();
    await expect(t.page.evaluate(() => localStorage.getItem("theme"))).resolves.toBe("light");
    t.expectNoErrors();
    await t.close();
  });
});

describe("announcement bar", () => {
  it("stays dismissed after reloads, hidden before the app starts", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url(""));
    await waitForContent(t.page);
    const bar = t.page.getByRole("region", { name: "Announcement" });
    await expect(bar.isVisible()).resolves.toBe(true);
    await bar.getByRole("button", { name: "Close the announcement" }).click();
    await expect(bar.count()).resolves.toBe(0);
    await expect(t.page.evaluate(() => localStorage.getItem("ai-engine-manager.announcement.dismiss"))).resolves.toBe(
      "true",
    );

    const release = await holdEntryScript(t.page);
    await t.page.goto(env.site.url("py/login"), { waitUntil: "commit" });
    await parsed(t.page);
    await expect(t.page.getAttribute("html", "data-announcement-dismissed")).resolves.toBe("true");
    release();
    await waitForContent(t.page);
    await expect(bar.count()).resolves.toBe(0);

    // A new announcement (another id) shows again.
    await t.page.evaluate(() => localStorage.setItem("ai-engine-manager.announcement.id", "an-older-one"));
    await t.page.reload();
    await waitForContent(t.page);
    await expect(bar.isVisible()).resolves.toBe(true);
    t.expectNoErrors();
    await t.close();
  });
});

describe("docs version", () => {
  it("is 1.3.0, kept in local storage, and replaces a stale stored version", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url("release-notes"));
    await waitForContent(t.page);
    await expect(t.page.evaluate(() => localStorage.getItem("docs-preferred-version-ai-engine-manager"))).resolves.toBe(
      "1.3.0",
    );
    await t.page.evaluate(() => localStorage.setItem("docs-preferred-version-ai-engine-manager", "0.9.0"));
    await t.page.reload();
    await waitForContent(t.page);
    await expect(t.page.evaluate(() => localStorage.getItem("docs-preferred-version-ai-engine-manager"))).resolves.toBe(
      "1.3.0",
    );
    await expect(t.page.getByRole("contentinfo").textContent()).resolves.toContain("version 1.3.0");
    t.expectNoErrors();
    await t.close();
  });
});

describe("documentation layout", () => {
  it("has a 300px sidebar, shared by py/login, and a table of contents of the h2 and h3 headings", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url("py/login"));
    await waitForContent(t.page);
    const sidebar = t.page.locator(".sidebar-column");
    await expect(sidebar.evaluate((el) => el.getBoundingClientRect().width)).resolves.toBe(300);
    await expect(sidebar.getByRole("link", { name: "Login", exact: true }).getAttribute("aria-current")).resolves.toBe(
      "page",
    );

    const headings = await t.page.locator("article h2, article h3").evaluateAll((els) => els.map((e) => `#${e.id}`));
    const toc = t.page.getByRole("navigation", { name: "On this page" });
    await expect(toc.locator("a").evaluateAll((els) => els.map((e) => e.getAttribute("href")))).resolves.toEqual(
      headings,
    );
    await expect(t.page.locator("article h4").count()).resolves.toBe(0);
    await toc.getByRole("link", { name: "Parameters of login()" }).click();
    await t.page.waitForURL((url) => url.hash === "#parameters-of-login");
    await expect
      .poll(() => t.page.locator("#parameters-of-login").evaluate((el) => el.getBoundingClientRect().top))
      .toBeLessThan(150);

    // Every page of the sidebar keeps the same sidebar; API reference pages use their own navigation.
    await sidebar.getByRole("link", { name: "Migration" }).click();
    await t.page.locator("main h1", { hasText: "Migrate to" }).waitFor();
    await expect(sidebar.getByRole("link", { name: "Login", exact: true }).isVisible()).resolves.toBe(true);
    t.expectNoErrors();
    await t.close();
  });

  it("navigates without reloading, and Back returns to the previous page and scroll position", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url("user-guide/dai-engine/manage"));
    await waitForContent(t.page);
    await t.page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    await t.page.mouse.wheel(0, 1500);
    await expect.poll(() => t.page.evaluate(() => window.scrollY)).toBeGreaterThan(1000);
    const link = t.page.locator("article").getByRole("link", { name: "Driverless AI examples" });
    await link.scrollIntoViewIfNeeded();
    const scrolled = await t.page.evaluate(() => window.scrollY);
    await link.click();
    await t.page.locator("main h1", { hasText: "Driverless AI examples" }).waitFor();
    expect(new URL(t.page.url()).pathname).toBe(`${BASE}py/dai_examples`);
    await expect(t.page.evaluate(() => window.scrollY)).resolves.toBe(0);
    await expect(t.page.evaluate(() => (window as unknown as { marker?: number }).marker)).resolves.toBe(42);
    await t.page.goBack();
    await t.page.locator("main h1", { hasText: "Manage a Driverless AI engine" }).waitFor();
    await expect.poll(() => t.page.evaluate(() => window.scrollY)).toBe(scrolled);
    await expect(t.page.evaluate(() => (window as unknown as { marker?: number }).marker)).resolves.toBe(42);
    t.expectNoErrors();
    await t.close();
  });

  it("copies code blocks", async () => {
    const t = await openPage(env.browser, { permissions: ["clipboard-read", "clipboard-write"] });
    await t.page.goto(env.site.url("get-started/access-ai-engines"));
    await waitForContent(t.page);
    const block = t.page.locator(".code-block").first();
    await block.hover();
    await block.getByRole("button", { name: "Copy code to clipboard" }).click();
    await expect.poll(() => block.locator(".copy-button").textContent()).toBe("Copied");
    await expect(t.page.evaluate(() => navigator.clipboard.readText())).resolves.toBe("npm install\nnpm start");
    t.expectNoErrors();
    await t.close();
  });
});

describe("mobile layout", () => {
  it("applies at 996px and narrower, not at 997px", async () => {
    const t = await openPage(env.browser, { viewport: { width: 997, height: 800 } });
    await t.page.goto(env.site.url("py/installation"));
    await waitForContent(t.page);
    const menu = t.page.getByRole("button", { name: "Open the navigation menu" });
    await expect(menu.isVisible()).resolves.toBe(false);
    await expect(t.page.locator(".sidebar-column").isVisible()).resolves.toBe(true);
    await expect(t.page.locator(".toc-desktop").isVisible()).resolves.toBe(true);
    await t.page.setViewportSize({ width: 996, height: 800 });
    await expect(menu.isVisible()).resolves.toBe(true);
    await expect(t.page.locator(".sidebar-column").isVisible()).resolves.toBe(false);
    await expect(t.page.locator(".toc-desktop").isVisible()).resolves.toBe(false);
    await expect(t.page.locator(".toc-mobile").isVisible()).resolves.toBe(true);
    t.expectNoErrors();
    await t.close();
  });

  it("opens a drawer with the navigation and the sidebar on a narrow screen", async () => {
    const t = await openPage(env.browser, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await t.page.goto(env.site.url("py/installation"));
    await waitForContent(t.page);
    await expect(t.page.evaluate(() => document.documentElement.scrollWidth)).resolves.toBeLessThanOrEqual(390);
    await t.page.locator(".toc-mobile summary").click();
    await expect(
      t.page
        .getByRole("navigation", { name: "On this page (collapsed)" })
        .getByRole("link", { name: "Requirements" })
        .isVisible(),
    ).resolves.toBe(true);
    await screenshot(t.page, "guide-mobile-light");

    await t.page.getByRole("button", { name: "Open the navigation menu" }).click();
    const drawer = t.page.getByRole("dialog", { name: "Navigation menu" });
    await drawer.waitFor();
    await expect(drawer.getByRole("link", { name: "API", exact: true }).isVisible()).resolves.toBe(true);
    await expect(drawer.getByRole("navigation", { name: "Docs sidebar" }).isVisible()).resolves.toBe(true);
    await expect(drawer.getByRole("link", { name: "Request a Demo" }).isVisible()).resolves.toBe(true);
    const violations = await axeScan(t.page);
    expect(formatViolations("drawer", violations)).toBe("");
    await screenshot(t.page, "drawer-mobile-light");
    await t.page.keyboard.press("Escape");
    await drawer.waitFor({ state: "detached" });

    await t.page.getByRole("button", { name: "Open the navigation menu" }).click();
    await drawer.getByRole("button", { name: "Expand Get started" }).click();
    await drawer.getByRole("link", { name: "Access AI engines" }).click();
    await drawer.waitFor({ state: "detached" });
    await t.page.locator("main h1", { hasText: "Access AI engines" }).waitFor();
    t.expectNoErrors();
    await t.close();
  });
});

describe("screenshots", () => {
  const pages = [
    ["home", ""],
    ["guide", "user-guide/dai-engine/create"],
    ["api", "api/"],
    ["py-clients", "py/clients/"],
  ];
  for (const theme of ["light", "dark"] as const) {
    it(`of the home page, a guide, api/ and py/clients in ${theme} mode`, async () => {
      const t = await openPage(env.browser);
      await t.page.addInitScript((value) => localStorage.setItem("theme", value), theme);
      for (const [name, path] of pages) {
        await t.page.goto(env.site.url(path!));
        await waitForContent(t.page);
        await t.page.evaluate(() => document.fonts.ready);
        await screenshot(t.page, `${name}-${theme}`);
      }
      t.expectNoErrors();
      await t.close();
    });
  }
});
