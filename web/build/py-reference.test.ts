import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  buildPythonReference,
  findPythonPackage,
  formatSignature,
  pyRoute,
  readPythonPackage,
} from "./py-reference.js";

const fixture = fileURLToPath(new URL("../test/fixtures/py/ai_engine_manager", import.meta.url));
const pkg = readPythonPackage(fixture);
const module = (name: string) => pkg.modules.find((m) => m.name === name)!;

describe("pydoc.py", () => {
  it("lists public modules and packages, skipping private ones", () => {
    expect(pkg.package).toBe("ai_engine_manager");
    expect(pkg.modules.map((m) => m.name)).toEqual([
      "ai_engine_manager",
      "ai_engine_manager.convert",
      "ai_engine_manager.convert.duration_convertor",
      "ai_engine_manager.dai_engine",
      "ai_engine_manager.dai_engine.client",
      "ai_engine_manager.dai_engine.state",
      "ai_engine_manager.exception",
      "ai_engine_manager.login",
    ]);
  });

  it("reads signatures with annotations, defaults and keyword-only markers", () => {
    const login = module("ai_engine_manager.login").functions.find((f) => f.name === "login")!;
    expect(login.signature).toBe(
      "(environment: str, platform_token: Optional[str] = None, *, default_workspace_id: str = DEFAULT_WORKSPACE, verify_ssl: bool = True) -> Clients",
    );
    expect(login.docstring).toMatch(/^Signs in and returns a client/);
    expect(module("ai_engine_manager.login").functions.map((f) => f.name)).toEqual(["login"]);
  });

  it("reads classes: methods without self, async, properties, static methods and private members left out", () => {
    const client = module("ai_engine_manager.dai_engine.client").classes[0]!;
    expect(client.methods.map((m) => m.name)).toEqual([
      "__init__",
      "create_engine",
      "list_engines",
      "url",
      "parse_name",
    ]);
    expect(client.methods[0]!.signature).toBe("(url: str, token: str) -> None");
    expect(client.methods.find((m) => m.name === "list_engines")).toMatchObject({
      is_async: true,
      signature: "(workspace_id: str, page_size: int = 0, *args, **kwargs) -> List['DAIEngine']",
    });
    expect(client.methods.find((m) => m.name === "url")!.is_property).toBe(true);
    expect(client.methods.find((m) => m.name === "parse_name")!.signature).toBe("(name: str) -> str");
  });

  it("reads enum members with their attribute docstrings, and module constants", () => {
    const state = module("ai_engine_manager.dai_engine.state").classes[0]!;
    expect(state.is_enum).toBe(true);
    expect(state.attributes.map((a) => [a.name, a.docstring])).toEqual([
      ["STATE_UNSPECIFIED", null],
      ["STATE_RUNNING", "The engine runs."],
      ["STATE_PAUSED", null],
    ]);
    expect(module("ai_engine_manager.login").variables).toMatchObject([
      { name: "DEFAULT_WORKSPACE", value: "'default'", docstring: "The workspace used when a call names none." },
    ]);
  });

  it("honours __all__ and records re-exports, resolving relative imports", () => {
    expect(module("ai_engine_manager").all).toEqual(["login", "Clients"]);
    expect(module("ai_engine_manager.dai_engine").imports).toEqual([
      { name: "DAIEngineClient", target: "DAIEngineClient", module: "ai_engine_manager.dai_engine.client" },
      { name: "DAIEngineState", target: "DAIEngineState", module: "ai_engine_manager.dai_engine.state" },
    ]);
  });
});

describe("the Python reference pages", () => {
  const ref = buildPythonReference(pkg, {
    prefix: "py/clients/",
    base: "/ai-engine-manager/",
    sourceLabel: "clients/python/ai_engine_manager",
  });
  const page = (route: string) => ref.pages.find((p) => p.route === route)!;

  it("has an index and one page per module, at routes taken from the module path", () => {
    expect(ref.pages.map((p) => p.route)).toEqual([
      "py/clients/",
      "py/clients/convert",
      "py/clients/convert/duration_convertor",
      "py/clients/dai_engine",
      "py/clients/dai_engine/client",
      "py/clients/dai_engine/state",
      "py/clients/exception",
      "py/clients/login",
    ]);
    expect(page("py/clients/").title).toBe("Python client reference");
    expect(page("py/clients/").html).toContain(
      '<a href="/ai-engine-manager/py/clients/dai_engine/client"><code>dai_engine.client</code></a>',
    );
  });

  it("renders signatures, Google-style sections and links between pages", () => {
    const login = page("py/clients/login");
    expect(login.toc).toEqual([
      { id: "classes", text: "Classes", level: 2 },
      { id: "Clients", text: "Clients", level: 3 },
      { id: "functions", text: "Functions", level: 2 },
      { id: "login", text: "login", level: 3 },
      { id: "variables", text: "Variables", level: 2 },
    ]);
    expect(login.html).toContain('<h3 id="login">');
    expect(login.html).toContain('<p class="doc-section-title">Parameters</p>');
    expect(login.html).toContain('<dt><code>platform_token</code> <span class="doc-type">(str)</span></dt>');
    expect(login.html).toContain('<p class="doc-section-title">Raises</p>');
    // The return annotation links to the class on the same page.
    expect(login.html).toContain('-&gt; <a href="/ai-engine-manager/py/clients/login#Clients">Clients</a>');
    // Attributes of Clients link to the client class on its own page, and are listed once, with
    // the description from the class docstring.
    expect(login.html).toContain('href="/ai-engine-manager/py/clients/dai_engine/client#DAIEngineClient"');
    expect(login.html.match(/doc-section-title">Attributes/g)).toHaveLength(1);
    expect(login.html).toMatch(
      /<tr id="Clients\.dai_engine_client">.*<td><p>Manages Driverless AI engines\.<\/p><\/td><\/tr>/,
    );
    // Without bases or decorators there is no separate class signature.
    expect(login.html).not.toContain('<span class="tok-keyword">class</span> Clients');
  });

  it("gives methods anchors under their class and lists re-exports of packages", () => {
    expect(page("py/clients/dai_engine/client").html).toContain('<h4 id="DAIEngineClient.create_engine">');
    expect(page("py/clients/dai_engine").html).toContain(
      '<a href="/ai-engine-manager/py/clients/dai_engine/state#DAIEngineState"><code>DAIEngineState</code></a>',
    );
  });

  it("builds the sidebar from the package tree", () => {
    expect(ref.sidebar).toMatchObject({
      type: "category",
      label: "Client reference",
      path: "py/clients/",
      items: [
        {
          type: "category",
          label: "convert",
          path: "py/clients/convert",
          items: [{ type: "link", label: "duration_convertor" }],
        },
        { type: "category", label: "dai_engine", items: [{ label: "client" }, { label: "state" }] },
        { type: "link", label: "exception" },
        { type: "link", label: "login" },
      ],
    });
  });

  it("makes every module, class and function searchable", () => {
    const titles = ref.searchDocs.map((d) => d.title);
    expect(titles).toEqual(
      expect.arrayContaining([
        "ai_engine_manager.login",
        "Clients",
        "login",
        "DAIEngineClient",
        "DAIEngineClient.create_engine",
      ]),
    );
    expect(ref.searchDocs.every((d) => d.tags.includes("ai-engine-manager"))).toBe(true);
  });

  it("still has an index page when there is no package", () => {
    const empty = buildPythonReference(undefined, { prefix: "py/clients/", base: "/b/", sourceLabel: "x" });
    expect(empty.pages.map((p) => p.route)).toEqual(["py/clients/"]);
    expect(empty.sidebar).toEqual({ type: "link", label: "Client reference", path: "py/clients/" });
  });
});

describe("the reference of the real client", () => {
  const real = findPythonPackage(fileURLToPath(new URL("../..", import.meta.url)), "");

  it.skipIf(!real)("has a page for every module that spec section 2 names", () => {
    const ref = buildPythonReference(readPythonPackage(real!), { prefix: "py/clients/", base: "/", sourceLabel: "x" });
    const routes = new Set(ref.pages.map((p) => p.route.slice("py/clients/".length)));
    const families = [
      "dai_engine",
      "dai_engine_profile",
      "dai_engine_version",
      "h2o_engine",
      "h2o_engine_profile",
      "h2o_engine_version",
      "notebook_engine",
      "notebook_engine_image",
      "notebook_engine_profile",
      "sandbox_engine",
      "sandbox_engine_image",
      "sandbox_engine_template",
    ];
    const modules = [
      "",
      "auth",
      "auth/token_api_client",
      "base",
      "base/image_pull_policy",
      "connection_config",
      "constraint",
      "constraint/profile_constraint_duration",
      "constraint/profile_constraint_numeric",
      "convert",
      "convert/duration_convertor",
      "convert/quantity_convertor",
      "engine",
      "engine_id",
      "engine_id/generator",
      "exception",
      "login",
      ...families,
      ...families.map((f) => `${f}/client`),
    ];
    expect(modules.filter((m) => !routes.has(m))).toEqual([]);
  });
});

describe("finding the package", () => {
  it("finds ai_engine_manager in a src layout and skips virtual environments", () => {
    const root = mkdtempSync(join(tmpdir(), "aiem-py-layout-"));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    mkdirSync(join(root, "clients/python/.venv/lib/ai_engine_manager"), { recursive: true });
    writeFileSync(join(root, "clients/python/.venv/lib/ai_engine_manager/__init__.py"), "");
    expect(findPythonPackage(root, "")).toBeUndefined();
    mkdirSync(join(root, "clients/python/src/ai_engine_manager"), { recursive: true });
    writeFileSync(join(root, "clients/python/src/ai_engine_manager/__init__.py"), "");
    expect(findPythonPackage(root, "")).toBe(join(root, "clients/python/src/ai_engine_manager"));
  });

  it("lays out long signatures one parameter per line", () => {
    expect(formatSignature("(a: int) -> None", 10)).toBe("(a: int) -> None");
    const long =
      "(workspace_id: str | None = None, *, labels: dict[str, str] = {'a, b': 'c'}, validate_only: bool = False) -> DAIEngine";
    expect(formatSignature(long, 17)).toBe(
      "(\n    workspace_id: str | None = None,\n    *,\n    labels: dict[str, str] = {'a, b': 'c'},\n    validate_only: bool = False,\n) -> DAIEngine",
    );
  });

  it("maps module names to routes", () => {
    expect(pyRoute("py/clients/", "ai_engine_manager", "ai_engine_manager")).toBe("py/clients/");
    expect(pyRoute("py/clients/", "ai_engine_manager", "ai_engine_manager.auth.token_api_client")).toBe(
      "py/clients/auth/token_api_client",
    );
  });
});
