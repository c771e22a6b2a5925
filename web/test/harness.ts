// Shared set-up of the browser tests: serves web/dist with the production static handler (plus a
// small fake of the API for the "Try it" panel), drives Debian's Chromium through playwright-core,
// and fails a test on any console error it did not expect.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { createDocsHandler } from "../serve/static-handler.js";

const require = createRequire(import.meta.url);

export const distDir = fileURLToPath(new URL("../dist", import.meta.url));
export const screenshotDir = fileURLToPath(new URL("../test-results/screenshots", import.meta.url));
export const BASE = "/ai-engine-manager/";
export const TEST_TOKEN = "test-token-for-try-it";

export interface RoutesJson {
  version: string;
  routes: { path: string; title: string; chunk?: string }[];
}

export function readRoutes(dir = distDir): RoutesJson {
  if (!existsSync(`${dir}/routes.json`)) {
    throw new Error(`${dir} is missing: build the site first with \`npx vite build --config web/vite.config.ts\``);
  }
  return JSON.parse(readFileSync(`${dir}/routes.json`, "utf8")) as RoutesJson;
}

/** The page chunk of a route, as a URL path. */
export function chunkOf(path: string, dir = distDir): string {
  const chunk = readRoutes(dir).routes.find((r) => r.path === path)?.chunk;
  if (!chunk) throw new Error(`no chunk for route ${path}`);
  return BASE + chunk;
}

// A stand-in for the edge's Connect endpoint: enough of one method to see the panel's request,
// headers and both outcomes.
function fakeApi(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.url !== "/enginemanager.v1.DAIEngineService/ListDAIEngines") return false;
  let body = "";
  req.on("data", (c: Buffer) => (body += c.toString()));
  req.on("end", () => {
    res.setHeader("Content-Type", "application/json");
    if (req.method !== "POST" || !String(req.headers["content-type"]).startsWith("application/json")) {
      res.statusCode = 415;
      res.end(JSON.stringify({ code: "unimplemented", message: "Connect JSON only" }));
      return;
    }
    if (req.headers.authorization !== `Bearer ${TEST_TOKEN}`) {
      res.statusCode = 401;
      res.end(JSON.stringify({ code: "unauthenticated", message: "the bearer token is missing or invalid" }));
      return;
    }
    const request = JSON.parse(body || "{}") as { parent?: string };
    res.end(
      JSON.stringify({
        daiEngines: [
          {
            name: `${request.parent}/daiEngines/demo`,
            displayName: "Demo engine",
            state: "STATE_RUNNING",
            cpu: 4,
            memoryBytes: "17179869184",
          },
        ],
        totalSize: 1,
      }),
    );
  });
  return true;
}

export interface Site {
  origin: string;
  url: (path: string) => string;
  close: () => Promise<void>;
}

export async function startSite(dir = distDir): Promise<Site> {
  readRoutes(dir);
  const docs = createDocsHandler({ distDir: dir });
  const server = createServer((req, res) => {
    if (docs(req, res) || fakeApi(req, res)) return;
    res.statusCode = 404;
    res.end("not found");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (path) => origin + BASE + path,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface TestEnvironment {
  site: Site;
  browser: Browser;
}

/**
 * Serves a build and launches Chromium once for the test file that calls it, and stops both
 * afterwards. `prepare` runs first, for files that build a site of their own.
 */
export function setUpSiteAndBrowser(options: { dist?: string; prepare?: () => Promise<void> } = {}): TestEnvironment {
  const env = {} as TestEnvironment;
  beforeAll(async () => {
    await options.prepare?.();
    [env.site, env.browser] = await Promise.all([startSite(options.dist), launchBrowser()]);
  });
  afterAll(async () => {
    await env.browser?.close();
    await env.site?.close();
  });
  return env;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
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
  });
}

export interface TestPage {
  page: Page;
  context: BrowserContext;
  /** Console errors and uncaught exceptions seen so far, minus the expected ones. */
  errors: string[];
  /** Fails when anything unexpected reached the console as an error. */
  expectNoErrors: () => void;
  close: () => Promise<void>;
}

export async function openPage(
  browser: Browser,
  options: BrowserContextOptions & { expectErrors?: RegExp[] } = {},
): Promise<TestPage> {
  const { expectErrors = [], ...contextOptions } = options;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...contextOptions });
  const page = await context.newPage();
  const errors: string[] = [];
  const record = (text: string) => {
    if (!expectErrors.some((re) => re.test(text))) errors.push(text);
  };
  page.on("console", (msg) => {
    if (msg.type() === "error") record(`console.error: ${msg.text()} (${msg.location().url})`);
  });
  page.on("pageerror", (error) => record(`uncaught: ${error.message}`));
  return {
    page,
    context,
    errors,
    expectNoErrors: () => {
      if (errors.length) throw new Error(`unexpected console errors:\n${errors.join("\n")}`);
    },
    close: () => context.close(),
  };
}

let axeSource: string | undefined;

export interface AxeViolation {
  id: string;
  impact: string;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/**
 * Runs axe-core on the page: WCAG 2.0, 2.1 and 2.2 A and AA, plus best practices. `include`
 * limits the scan to some parts (CSS selectors), for repeat scans of very long pages.
 */
export async function axeScan(page: Page, include?: string[]): Promise<AxeViolation[]> {
  axeSource ??= readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  // Pages visited through the app's own navigation keep axe from the previous scan.
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: axeSource });
  return page.evaluate(async (selectors) => {
    const axe = (
      window as unknown as { axe: { run: (ctx: unknown, opts: object) => Promise<{ violations: AxeViolation[] }> } }
    ).axe;
    const context = selectors ? { include: selectors.map((s) => [s]) } : document;
    const result = await axe.run(context, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"] },
      resultTypes: ["violations"],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 5).map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  }, include);
}

export function formatViolations(route: string, violations: AxeViolation[]): string {
  return violations
    .map(
      (v) =>
        `${route}: ${v.id} (${v.impact}) ${v.help}\n${v.nodes.map((n) => `  ${n.target.join(" ")}: ${n.failureSummary ?? ""}`).join("\n")}`,
    )
    .join("\n");
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: `${screenshotDir}/${name}.png` });
}

/** Waits until the route's content is on screen (its h1), after any loading state. */
export async function waitForContent(page: Page): Promise<void> {
  await page.locator("main h1").first().waitFor({ state: "visible" });
}
