// The Python client reference (py/clients/...), generated from the client's own source: pydoc.py
// reads it with Python's ast module, and this file turns the result into one page per module.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { SearchDoc, SidebarItem, TocItem } from "../src/site-types.js";
import { escapeHtml } from "./html.js";
import { createPyLinks } from "./py-links.js";
import { modulePage, type PySite } from "./py-module-page.js";

export interface PyParam {
  text: string;
  name: string;
  annotation: string | null;
  default: string | null;
  kind: "param" | "var_positional" | "var_keyword";
}

export interface PyFunction {
  name: string;
  signature: string;
  params: PyParam[];
  returns: string | null;
  decorators: string[];
  is_async: boolean;
  is_property: boolean;
  docstring: string | null;
  lineno: number;
}

export interface PyVariable {
  name: string;
  annotation: string | null;
  value: string | null;
  docstring: string | null;
  lineno: number;
}

export interface PyClass {
  name: string;
  bases: string[];
  decorators: string[];
  docstring: string | null;
  is_enum: boolean;
  is_exception: boolean;
  attributes: PyVariable[];
  methods: PyFunction[];
  lineno: number;
}

export interface PyModule {
  name: string;
  path: string;
  is_package: boolean;
  docstring: string | null;
  all: string[] | null;
  classes: PyClass[];
  functions: PyFunction[];
  variables: PyVariable[];
  imports: { name: string; target: string; module: string }[];
}

export interface PyPackage {
  package: string;
  modules: PyModule[];
}

export interface PyPage {
  route: string;
  title: string;
  description: string;
  html: string;
  toc: TocItem[];
}

export interface PyReference {
  pages: PyPage[];
  sidebar: SidebarItem;
  searchDocs: SearchDoc[];
}

const pydocScript = fileURLToPath(new URL("./pydoc.py", import.meta.url));

/**
 * Where the client's package is: AIEM_PY_SOURCE when set, otherwise the first ai_engine_manager
 * package under clients/python (src layout or flat), skipping virtual environments.
 */
export function findPythonPackage(repoRoot: string, override = process.env.AIEM_PY_SOURCE): string | undefined {
  if (override) return override;
  const root = join(repoRoot, "clients", "python");
  const queue = existsSync(root) ? [root] : [];
  while (queue.length) {
    const dir = queue.shift()!;
    if (/(^|\/)(\.|venv|node_modules|build|dist|__pycache__|tests?$)/.test(relative(root, dir))) continue;
    const candidate = join(dir, "ai_engine_manager");
    if (existsSync(join(candidate, "__init__.py"))) return candidate;
    for (const entry of readdirSync(dir)) {
      const full = join(dir, entry);
      if (!entry.startsWith(".") && statSync(full).isDirectory()) queue.push(full);
    }
  }
  return undefined;
}

export function readPythonPackage(dir: string, python = process.env.PYTHON ?? "python3"): PyPackage {
  const out = execFileSync(python, [pydocScript, dir], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(out) as PyPackage;
}

export function pyRoute(prefix: string, pkg: string, moduleName: string): string {
  const rest = moduleName === pkg ? "" : moduleName.slice(pkg.length + 1).replace(/\./g, "/");
  return prefix + rest;
}

/**
 * Lays a long signature out one parameter per line, as Python formatters do, so it reads
 * without horizontal scrolling: "(a: int, b=1) -> R" becomes "(\n    a: int,\n    b=1,\n) -> R".
 */
export function formatSignature(signature: string, prefixLength: number, width = 88): string {
  if (prefixLength + signature.length <= width || !signature.startsWith("(")) return signature;
  const params: string[] = [];
  let depth = 0;
  let quote = "";
  let current = "";
  let end = -1;
  for (let i = 1; i < signature.length; i++) {
    const c = signature[i]!;
    if (quote) {
      if (c === quote && signature[i - 1] !== "\\") quote = "";
    } else if (c === "'" || c === '"') {
      quote = c;
    } else if ("([{".includes(c)) {
      depth++;
    } else if (")]}".includes(c)) {
      if (depth === 0) {
        end = i;
        break;
      }
      depth--;
    } else if (c === "," && depth === 0) {
      params.push(current.trim());
      current = "";
      continue;
    }
    current += c;
  }
  if (current.trim()) params.push(current.trim());
  if (end < 0 || params.length === 0) return signature;
  return `(\n${params.map((p) => `    ${p},`).join("\n")}\n)${signature.slice(end + 1)}`;
}

export interface PyReferenceOptions {
  /** Route of the index page, for example "py/clients/". */
  prefix: string;
  /** The site's base path, for links. */
  base: string;
  /** Shown on pages as where the source lives, for example "clients/python/ai_engine_manager". */
  sourceLabel: string;
}

export function buildPythonReference(pkg: PyPackage | undefined, options: PyReferenceOptions): PyReference {
  const { prefix, base } = options;
  const modules = pkg?.modules ?? [];
  const packageName = pkg?.package ?? "ai_engine_manager";
  const route = (name: string) => pyRoute(prefix, packageName, name);
  const { definitions, linkerFor } = createPyLinks(modules, packageName, (name) => base + route(name));
  const site: PySite = {
    options,
    modules,
    packageName,
    route,
    definitions,
    linkerFor,
    children: (name) =>
      modules.filter((m) => m.name.startsWith(`${name}.`) && !m.name.slice(name.length + 1).includes(".")),
    searchDocs: [],
  };
  const pages = modules.map((module) => modulePage(site, module));
  const documented = modules.some((m) => m.name === packageName);
  if (!documented) pages.push(emptyIndexPage(options, packageName));
  const items = documented ? site.children(packageName).map((m) => sidebarItem(site, m)) : [];
  const sidebar: SidebarItem = items.length
    ? { type: "category", label: "Client reference", path: prefix, items }
    : { type: "link", label: "Client reference", path: prefix };
  return { pages, sidebar, searchDocs: site.searchDocs };
}

/** The index page of a build that found no package to document. */
function emptyIndexPage({ prefix, base }: PyReferenceOptions, packageName: string): PyPage {
  return {
    route: prefix,
    title: "Python client reference",
    description: "",
    html:
      `<h1>Python client reference</h1><p>This reference is generated at build time from the source of the ` +
      `<code>${escapeHtml(packageName)}</code> package in <code>clients/python</code>. This build found no package ` +
      `there, so there are no module pages yet. The guides cover <a href="${base}py/installation">installation</a> ` +
      `and <a href="${base}py/login">login</a>.</p>`,
    toc: [],
  };
}

function sidebarItem(site: PySite, m: PyModule): SidebarItem {
  const kids = site.children(m.name);
  const label = m.name.split(".").pop()!;
  return kids.length
    ? { type: "category", label, path: site.route(m.name), items: kids.map((k) => sidebarItem(site, k)) }
    : { type: "link", label, path: site.route(m.name) };
}
