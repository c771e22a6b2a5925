// The API reference in a real browser: every public service and method from the descriptors,
// deep links to any item, the navigation filter, and the "Try it" panel calling the server the
// page is served from.
import { describe, expect, it } from "vitest";
import type { Request } from "playwright-core";
import { apiPackages } from "../build/api-reference.js";
import { loadDescriptorRegistry } from "../build/proto-descriptors.js";
import { openPage, TEST_TOKEN, setUpSiteAndBrowser, waitForContent } from "./harness.js";

const env = setUpSiteAndBrowser();

const services = [...loadDescriptorRegistry().files]
  .filter((f) => apiPackages.some((p) => p.name === f.proto.package))
  .flatMap((f) => f.services);

describe("the API reference page", () => {
  it("has a section for every service and method of the API, with HTTP bindings and field badges", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url("api/"));
    await waitForContent(t.page);
    const ids = new Set(await t.page.locator("main [id]").evaluateAll((els) => els.map((e) => e.id)));
    const missing = services
      .flatMap((s) => [s.typeName, ...s.methods.map((m) => `${s.typeName}.${m.name}`)])
      .filter((id) => !ids.has(id));
    expect(missing).toEqual([]);
    const method = t.page.locator("section.api-method", {
      has: t.page.locator('[id="enginemanager.v1.DAIEngineService.ResizeDAIEngineStorage"]'),
    });
    await expect(method.locator(".http-binding").textContent()).resolves.toBe(
      "POST /v1/{name=workspaces/*/daiEngines/*}:resizeStorage body: the request fields not in the path",
    );
    const profileRow = t.page.locator('[id="enginemanager.v1.DAIEngine.profile"]');
    await expect(profileRow.locator(".badge").allTextContents()).resolves.toEqual(["Required"]);
    await expect(
      t.page.locator('[id="enginemanager.sandbox.v1.SandboxEngine.sandbox_engine_image"] .badge').allTextContents(),
    ).resolves.toEqual(["Required", "Immutable"]);
    await expect(t.page.locator('[id="enginemanager.v1.DAIEngine.uid"] .badge').allTextContents()).resolves.toEqual([
      "Output only",
    ]);
    await expect(
      t.page
        .locator('[id="enginemanager.v1.NotebookEngine.FailureReason.FAILURE_REASON_OOM_KILLED"] td')
        .nth(1)
        .textContent(),
    ).resolves.toBe("2");
    t.expectNoErrors();
    await t.close();
  });

  it("scrolls to the item a deep link names", async () => {
    const t = await openPage(env.browser);
    const id = "enginemanager.sandbox.v1.ProcessService.StreamProcessOutput";
    await t.page.goto(env.site.url(`api/#${id}`));
    await waitForContent(t.page);
    const heading = t.page.locator(`[id="${id}"]`);
    await expect.poll(() => heading.evaluate((el) => Math.round(el.getBoundingClientRect().top))).toBeLessThan(200);
    await expect.poll(() => heading.evaluate((el) => el.getBoundingClientRect().top)).toBeGreaterThanOrEqual(0);
    await expect(heading.locator(".hash-link").getAttribute("href")).resolves.toBe(`#${id}`);
    t.expectNoErrors();
    await t.close();
  });

  it("filters its navigation", async () => {
    const t = await openPage(env.browser);
    await t.page.goto(env.site.url("api/"));
    await waitForContent(t.page);
    await t.page.getByRole("searchbox", { name: "Filter the API reference" }).fill("ResizeD");
    const nav = t.page.getByRole("navigation", { name: "API reference" });
    await expect.poll(() => nav.locator("ul ul a").allTextContents()).toEqual(["ResizeDAIEngineStorage"]);
    await nav.getByRole("link", { name: "ResizeDAIEngineStorage" }).click();
    await t.page.waitForURL((url) => url.hash === "#enginemanager.v1.DAIEngineService.ResizeDAIEngineStorage");
    t.expectNoErrors();
    await t.close();
  });
});

describe("Try it", () => {
  it("loads only when opened, calls the same origin with the pasted token, and shows both outcomes", async () => {
    const t = await openPage(env.browser, { expectErrors: [/status of 401 \(Unauthorized\)/] });
    const calls: Request[] = [];
    const chunks: string[] = [];
    t.page.on("request", (r) => {
      if (r.url().includes("/enginemanager.")) calls.push(r);
      if (r.url().includes("/assets/try-it-panel-")) chunks.push(r.url());
    });
    await t.page.goto(env.site.url("api/#enginemanager.v1.DAIEngineService.ListDAIEngines"));
    await waitForContent(t.page);
    expect(chunks).toEqual([]);

    const button = t.page.locator('button[data-try="enginemanager.v1.DAIEngineService.ListDAIEngines"]');
    await button.click();
    const panel = t.page.getByRole("form", { name: "Try ListDAIEngines" });
    await panel.waitFor();
    expect(chunks).toHaveLength(1);
    await expect(button.getAttribute("aria-expanded")).resolves.toBe("true");
    await expect(panel.getByLabel("Request (ListDAIEnginesRequest as JSON)").inputValue()).resolves.toBe(
      '{\n  "parent": "workspaces/default"\n}',
    );

    // Without a token the server refuses, and the panel says so.
    await panel.getByRole("button", { name: "Send request" }).click();
    await expect.poll(() => panel.locator(".try-it-status").textContent()).toMatch(/^unauthenticated \(code 16\)/);
    await expect(panel.locator("pre").textContent()).resolves.toBe("the bearer token is missing or invalid");

    // A request that is not valid JSON for the message never leaves the page.
    await panel.getByLabel("Request (ListDAIEnginesRequest as JSON)").fill('{"parent": 5, "nope": true}');
    await panel.getByRole("button", { name: "Send request" }).click();
    await expect.poll(() => panel.locator(".try-it-status").textContent()).toBe("The request is not valid");
    expect(calls).toHaveLength(1);

    await panel.getByRole("button", { name: "Reset example" }).click();
    await panel.getByLabel("Bearer token").fill(TEST_TOKEN);
    await panel.getByRole("button", { name: "Send request" }).click();
    await expect.poll(() => panel.locator(".try-it-status").textContent()).toMatch(/^OK · \d+ ms$/);
    const body = JSON.parse((await panel.locator("pre").textContent())!);
    expect(body).toMatchObject({
      daiEngines: [{ name: "workspaces/default/daiEngines/demo", displayName: "Demo engine", state: "STATE_RUNNING" }],
      totalSize: 1,
    });

    const last = calls.at(-1)!;
    expect(new URL(last.url()).origin).toBe(env.site.origin);
    expect(new URL(last.url()).pathname).toBe("/enginemanager.v1.DAIEngineService/ListDAIEngines");
    expect(last.method()).toBe("POST");
    expect(await last.headerValue("authorization")).toBe(`Bearer ${TEST_TOKEN}`);
    expect(last.postDataJSON()).toEqual({ parent: "workspaces/default" });

    // The token is kept for this tab and offered to the next panel.
    await expect(t.page.evaluate(() => sessionStorage.getItem("ai-engine-manager.try-it.token"))).resolves.toBe(
      TEST_TOKEN,
    );
    await t.page.locator('button[data-try="enginemanager.v1.DAIEngineService.GetDAIEngine"]').click();
    const second = t.page.getByRole("form", { name: "Try GetDAIEngine" });
    await expect(second.getByLabel("Bearer token").inputValue()).resolves.toBe(TEST_TOKEN);

    await button.click();
    await panel.waitFor({ state: "detached" });
    await expect(button.getAttribute("aria-expanded")).resolves.toBe("false");

    // Leaving the page with a panel open closes it cleanly.
    await t.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Guides" }).click();
    await t.page.locator("main h1", { hasText: "What is AI Engine Manager?" }).waitFor();
    await expect(second.count()).resolves.toBe(0);
    t.expectNoErrors();
    await t.close();
  });
});
