// The Python client reference in a real browser. It is generated from whatever source the build
// finds; to test it independently of the real client's state, this file builds the site once
// more from the small fixture package in test/fixtures/py and checks the pages it produces.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { buildSite } from "./build-helper.js";
import { buildPythonReference, readPythonPackage } from "../build/py-reference.js";
import {
  axeScan,
  formatViolations,
  openPage,
  readRoutes,
  screenshot,
  setUpSiteAndBrowser,
  waitForContent,
} from "./harness.js";

const fixtureDist = fileURLToPath(new URL("../test-results/fixture-dist", import.meta.url));
const fixturePackage = fileURLToPath(new URL("./fixtures/py/ai_engine_manager", import.meta.url));
const env = setUpSiteAndBrowser({
  dist: fixtureDist,
  prepare: () => buildSite({ outDir: fixtureDist, env: { AIEM_PY_SOURCE: fixturePackage } }),
});

describe("the Python client reference", () => {
  it("has a route for each page the generator makes from the source, and nothing else under py/clients", () => {
    const routes = readRoutes(fixtureDist)
      .routes.map((r) => r.path)
      .filter((p) => p.startsWith("py/clients/"));
    const pages = buildPythonReference(readPythonPackage(fixturePackage), {
      prefix: "py/clients/",
      base: "/",
      sourceLabel: "",
    }).pages;
    expect(routes).toEqual(pages.map((p) => p.route));
    expect(routes).toContain("py/clients/dai_engine/client");
  });

  it("links from the index to module pages with signatures, docstrings and anchors", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url("py/clients/"));
    await waitForContent(t.page);
    await expect(t.page.locator("main h1").textContent()).resolves.toBe("Python client reference");
    await t.page.getByRole("link", { name: "dai_engine.client" }).click();
    await t.page.locator("main h1", { hasText: "ai_engine_manager.dai_engine.client" }).waitFor();
    const method = t.page.locator('section.py-function:has([id="DAIEngineClient.create_engine"])');
    await expect(method.locator(".py-signature").textContent()).resolves.toBe(
      "def create_engine(\n    workspace_id: str,\n    engine_id: Optional[str] = None,\n    cpu: Optional[int] = None,\n    annotations: Optional[Dict[str, str]] = None,\n    validate_only: bool = False,\n) -> 'DAIEngine'",
    );
    await expect(method.locator("dt code").allTextContents()).resolves.toEqual([
      "workspace_id",
      "engine_id",
      "cpu",
      "annotations",
      "validate_only",
    ]);
    await expect(t.page.locator('[id="DAIEngineClient._private"]').count()).resolves.toBe(0);

    // The sidebar is built from the package tree, with the current module marked.
    const sidebar = t.page.getByRole("navigation", { name: "Docs sidebar" });
    await expect(sidebar.getByRole("link", { name: "client", exact: true }).getAttribute("aria-current")).resolves.toBe(
      "page",
    );
    await sidebar.getByRole("link", { name: "state", exact: true }).click();
    await t.page.locator("main h1", { hasText: "ai_engine_manager.dai_engine.state" }).waitFor();
    await expect(t.page.locator('[id="DAIEngineState.STATE_RUNNING"] td').last().textContent()).resolves.toBe(
      "The engine runs.",
    );
    t.expectNoErrors();
    await t.close();
  });

  it("deep-links to a function and is found by search", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url("py/clients/login#login"));
    await waitForContent(t.page);
    await expect
      .poll(() => t.page.locator('[id="login"]').evaluate((el) => el.getBoundingClientRect().top))
      .toBeLessThan(200);
    await t.page.keyboard.press("Control+k");
    await t.page.getByRole("dialog").getByRole("searchbox").fill("DAIEngineClient");
    await t.page.getByRole("dialog").locator(".search-hit-title", { hasText: "DAIEngineClient" }).first().waitFor();
    t.expectNoErrors();
    await t.close();
  });

  for (const theme of ["light", "dark"] as const) {
    it(`has no axe violations (${theme}) and is captured in a screenshot`, async () => {
      const t = await openPage(env.browser);
      await t.page.addInitScript((value) => localStorage.setItem("theme", value), theme);
      const problems: string[] = [];
      for (const path of ["py/clients/", "py/clients/login", "py/clients/dai_engine/client"]) {
        await t.page.goto(env.site.url(path));
        await waitForContent(t.page);
        if (path === "py/clients/login") await screenshot(t.page, `py-clients-module-${theme}`);
        const violations = await axeScan(t.page);
        if (violations.length) problems.push(formatViolations(path, violations));
      }
      expect(problems.join("\n")).toBe("");
      t.expectNoErrors();
      await t.close();
    });
  }
});
