// Every route of the built site, loaded directly as a deep link: its content shows, nothing is
// logged as an error, and axe-core finds no accessibility violation, in light and dark themes.
// Paths that are not routes get the not-found page with a real 404.
import { describe, expect, it } from "vitest";
import {
  axeScan,
  BASE,
  formatViolations,
  openPage,
  readRoutes,
  setUpSiteAndBrowser,
  waitForContent,
} from "./harness.js";

const env = setUpSiteAndBrowser();
const routes = readRoutes().routes;

const apiSample = [
  "header",
  ".announcement-bar",
  "footer",
  ".sidebar-column",
  "main h1",
  ".api-packages",
  '[id="enginemanager.v1.DAIEngineService"]',
  'section.api-method:has([id="enginemanager.v1.DAIEngineService.CreateDAIEngine"])',
  'section.api-message:has(> [id="enginemanager.v1.DAIEngine"])',
  'section.api-message:has(> [id="google.protobuf.Duration"])',
];

/**
 * Visits routes in one page and scans each with axe. The first is loaded as a deep link, the
 * others through the app's own navigation, which is how readers reach most pages and keeps a
 * sweep over every route short.
 */
async function scanRoutes(
  paths: string[],
  theme: "light" | "dark",
  viewport = { width: 1280, height: 900 },
): Promise<string[]> {
  const t = await openPage(env.browser, { viewport });
  await t.page.addInitScript((value) => localStorage.setItem("theme", value), theme);
  const problems: string[] = [];
  for (const [i, path] of paths.entries()) {
    const title = titleOf(path);
    if (i === 0) {
      const response = await t.page.goto(env.site.url(path));
      if (response?.status() !== 200) problems.push(`${path}: HTTP ${response?.status()}`);
    } else {
      await t.page.evaluate((href) => {
        const a = document.createElement("a");
        a.href = href;
        document.body.appendChild(a);
        a.click();
        a.remove();
      }, BASE + path);
    }
    await t.page.waitForFunction(
      (expected) => document.title === expected && document.querySelector("main h1") !== null,
      title,
    );
    expect(await t.page.getAttribute("html", "data-theme")).toBe(theme);
    const violations = await axeScan(t.page, scope(path, theme, viewport.width));
    if (violations.length) problems.push(formatViolations(`${path} (${theme}, ${viewport.width}px)`, violations));
  }
  t.expectNoErrors();
  await t.close();
  return problems;
}

/**
 * What to scan on a route: the whole page, or for repeat scans of identical chrome a part. The
 * API reference is scanned whole once (light, desktop); its other scans take the chrome and one
 * section of each kind, which carry every style the page uses. Python module pages share one
 * template and one chrome: a few are scanned whole, the rest only their main content.
 */
function scope(path: string, theme: string, width: number): string[] | undefined {
  if (path === "api/") return theme === "dark" || width < 997 ? apiSample : undefined;
  const modules = routes.filter((r) => r.path.startsWith("py/clients/") && r.path !== "py/clients/").map((r) => r.path);
  return modules.indexOf(path) >= 3 ? ["main"] : undefined;
}

function titleOf(path: string): string {
  if (path === "") return "AI Engine Manager";
  const route = routes.find((r) => r.path === path);
  return `${route ? route.title : "Page Not Found"} | AI Engine Manager`;
}

describe("every route", () => {
  it("has the pages the spec's table names, and the Python reference pages the build found", () => {
    const paths = routes.map((r) => r.path);
    for (const path of [
      "",
      "api/",
      "search",
      "release-notes",
      "get-started/what-is-ai-engine-manager",
      "get-started/access-ai-engines",
      "py/login",
      "py/clients/",
    ]) {
      expect(paths).toContain(path);
    }
  });

  it("is served as a deep link: the app's HTML with status 200", async () => {
    const statuses = await Promise.all(
      routes.map(async (r) => {
        const response = await fetch(env.site.url(r.path));
        return `${r.path}: ${response.status} ${(await response.text()).includes('<div id="root">')}`;
      }),
    );
    expect(statuses).toEqual(routes.map((r) => `${r.path}: 200 true`));
  });

  it("shows its title and content with no console errors and no axe violations (light)", async () => {
    const paths = routes.map((r) => r.path);
    // Two pages at a time keeps the sweep short on small machines.
    const half = Math.ceil(paths.length / 2);
    const problems = (
      await Promise.all([scanRoutes(paths.slice(0, half), "light"), scanRoutes(paths.slice(half), "light")])
    ).flat();
    expect(problems.join("\n")).toBe("");
  }, 180_000);

  it("has no axe violations in dark mode either", async () => {
    const sample = ["", "user-guide/sandbox-engine/manage", "py/clients/", "search", "no/such/page"];
    const problems = (await Promise.all([scanRoutes(sample, "dark"), scanRoutes(["api/"], "dark")])).flat();
    expect(problems.join("\n")).toBe("");
  }, 90_000);

  it("has no axe violations in the mobile layout", async () => {
    const sample = ["", "user-guide/notebook-engine/manage", "py/clients/", "search"];
    const problems = (
      await Promise.all([
        scanRoutes(sample, "light", { width: 390, height: 844 }),
        scanRoutes(["api/"], "dark", { width: 390, height: 844 }),
      ])
    ).flat();
    expect(problems.join("\n")).toBe("");
  }, 90_000);

  it("shows each page's own title in the document title", async () => {
    const t = await openPage(env.browser);
    for (const path of ["py/login", "api/", "release-notes"]) {
      await t.page.goto(env.site.url(path));
      await waitForContent(t.page);
      const title = routes.find((r) => r.path === path)!.title;
      expect(await t.page.title()).toBe(`${title} | AI Engine Manager`);
    }
    await t.page.goto(env.site.url(""));
    await waitForContent(t.page);
    expect(await t.page.title()).toBe("AI Engine Manager");
    t.expectNoErrors();
    await t.close();
  });
});

describe("paths that are not routes", () => {
  it("get the not-found page with status 404, because routes match exactly", async () => {
    const t = await openPage(env.browser, { expectErrors: [/status of 404 \(Not Found\)/] });
    for (const path of ["nope", "py/login/extra", "py/Login", "user-guide", "py/clients/no_such_module", "api/v1"]) {
      const response = await t.page.goto(env.site.url(path));
      expect(response?.status(), path).toBe(404);
      await expect(t.page.locator("main h1").textContent()).resolves.toBe("Page Not Found");
      expect(await t.page.title()).toBe("Page Not Found | AI Engine Manager");
    }
    // The not-found page keeps the chrome, so the reader can go on from there.
    await t.page.getByRole("link", { name: "Documentation home" }).click();
    await t.page.locator("main h1", { hasText: "AI Engine Manager" }).waitFor();
    t.expectNoErrors();
    await t.close();
  });

  it("show the not-found page after client-side navigation too", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url("py/login"));
    await waitForContent(t.page);
    await t.page.evaluate((href) => {
      const a = document.createElement("a");
      a.href = href;
      a.textContent = "broken";
      document.querySelector("main")!.appendChild(a);
      a.click();
    }, `${BASE}py/logins`);
    await expect(t.page.locator("main h1").textContent()).resolves.toBe("Page Not Found");
    expect(new URL(t.page.url()).pathname).toBe(`${BASE}py/logins`);
    t.expectNoErrors();
    await t.close();
  });
});
