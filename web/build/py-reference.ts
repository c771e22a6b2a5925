// The Python client reference (py/clients/...), generated from the client's own source: pydoc.py
// reads it with Python's ast module, and this file turns the result into one page per module.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { SearchDoc, SidebarItem, TocItem } from "../src/site-types.js";
import { SEARCH_TAG } from "../src/site-types.js";
import { docstringHtml, inlineHtml, splitAttributes, summaryOf } from "./docstring.js";
import { escapeHtml, headingHtml } from "./html.js";
import { codeWithLinks, createPyLinks } from "./py-links.js";
import { functionHtml, variablesTable } from "./py-members-html.js";

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
  const byName = new Map(modules.map((m) => [m.name, m]));

  const { definitions, linkerFor } = createPyLinks(modules, packageName, (name) => base + route(name));

  const searchDocs: SearchDoc[] = [];
  const pages: PyPage[] = [];
  const children = (name: string) =>
    modules.filter((m) => m.name.startsWith(`${name}.`) && !m.name.slice(name.length + 1).includes("."));

  for (const module of modules) {
    const link = linkerFor(module);
    const url = route(module.name);
    const isRoot = module.name === packageName;
    const title = isRoot ? "Python client reference" : module.name;
    const toc: TocItem[] = [];
    const parts: string[] = [];
    const kind = module.is_package ? "package" : "module";
    parts.push(`<h1>${isRoot ? "Python client reference" : `<code>${escapeHtml(module.name)}</code>`}</h1>`);
    if (isRoot) {
      parts.push(
        `<p>The reference of the <code>${escapeHtml(packageName)}</code> package, generated at build time from its source in ` +
          `<code>${escapeHtml(options.sourceLabel)}</code>: signatures and docstrings as the code has them. ` +
          `To install and sign in, see <a href="${base}py/installation">Installation</a> and <a href="${base}py/login">Login</a>.</p>`,
      );
    } else {
      const parent = module.name.split(".").slice(0, -1).join(".");
      parts.push(
        `<p class="py-breadcrumb">${kind} in <a href="${escapeHtml(base + route(parent))}"><code>${escapeHtml(parent)}</code></a> · ` +
          `source <code>${escapeHtml(options.sourceLabel)}/${escapeHtml(module.path)}</code></p>`,
      );
    }
    parts.push(docstringHtml(module.docstring, link));
    searchDocs.push({
      id: `py:${url}`,
      title,
      page: "Python client reference",
      url,
      text: `${module.name} ${module.docstring ?? ""}`,
      kind: "python",
      tags: [SEARCH_TAG],
    });

    const subs = isRoot ? modules.filter((m) => m !== module) : children(module.name);
    if (subs.length) {
      const id = isRoot ? "modules" : "submodules";
      toc.push({ id, text: isRoot ? "Modules" : "Submodules", level: 2 });
      const rows = subs
        .map((m) => {
          const depth = m.name.split(".").length - packageName.split(".").length - 1;
          const label = isRoot ? m.name.slice(packageName.length + 1) : m.name.split(".").pop()!;
          return (
            `<tr><td class="py-module-cell" style="padding-left:${0.75 + (isRoot ? depth : 0) * 1.25}rem">` +
            `<a href="${escapeHtml(base + route(m.name))}"><code>${escapeHtml(label)}</code></a></td>` +
            `<td>${inlineHtml(summaryOf(m.docstring), link)}</td></tr>`
          );
        })
        .join("");
      parts.push(
        headingHtml(2, id, isRoot ? "Modules" : "Submodules") +
          `<div class="table-wrapper" tabindex="0"><table class="py-modules"><thead><tr><th scope="col">Module</th>` +
          `<th scope="col">Summary</th></tr></thead><tbody>${rows}</tbody></table></div>`,
      );
    }

    if (module.imports.length && module.is_package) {
      toc.push({ id: "exports", text: "Exports", level: 2 });
      const items = module.imports
        .map((i) => {
          const target = definitions.get(`${i.module}.${i.target}`) ?? definitions.get(i.module);
          const name = `<code>${escapeHtml(i.name)}</code>`;
          return `<li>${target ? `<a href="${escapeHtml(target)}">${name}</a>` : name} <span class="py-from">from <code>${escapeHtml(i.module)}</code></span></li>`;
        })
        .join("");
      parts.push(`${headingHtml(2, "exports", "Exports")}<ul class="py-exports">${items}</ul>`);
    }

    if (module.classes.length) {
      toc.push({ id: "classes", text: "Classes", level: 2 });
      parts.push(headingHtml(2, "classes", "Classes"));
      for (const c of module.classes) {
        toc.push({ id: c.name, text: c.name, level: 3 });
        searchDocs.push({
          id: `py:${url}#${c.name}`,
          title: c.name,
          page: module.name,
          url: `${url}#${c.name}`,
          text: `${c.name} ${c.bases.join(" ")} ${c.docstring ?? ""} ${c.methods.map((m) => m.name).join(" ")}`,
          kind: "python",
          tags: [SEARCH_TAG],
        });
        const bases = c.bases.length ? `(${codeWithLinks(c.bases.join(", "), link)})` : "";
        const decorators = c.decorators.map((d) => `@${escapeHtml(d)}\n`).join("");
        const { rest, attributes } = splitAttributes(c.docstring, link);
        const members = variablesTable(
          c.attributes,
          link,
          `${c.name}.`,
          c.is_enum ? "Members" : "Attributes",
          attributes,
        );
        // The heading already says "class Name"; the signature only adds something with bases or decorators.
        const signature =
          bases || decorators
            ? `<pre class="py-signature" tabindex="0"><code>${decorators}<span class="tok-keyword">class</span> ${escapeHtml(c.name)}${bases}</code></pre>`
            : "";
        const methods = c.methods
          .map((f) => functionHtml(searchDocs, f, 4, `${c.name}.${f.name}`, c.name, link, module.name, url))
          .join("");
        parts.push(
          `<section class="py-class">${headingHtml(3, c.name, `<span class="py-kind">class</span> <code>${escapeHtml(c.name)}</code>`)}` +
            `${signature}${docstringHtml(rest, link)}${members}${methods}</section>`,
        );
      }
    }

    if (module.functions.length) {
      toc.push({ id: "functions", text: "Functions", level: 2 });
      parts.push(headingHtml(2, "functions", "Functions"));
      for (const f of module.functions) {
        toc.push({ id: f.name, text: f.name, level: 3 });
        parts.push(functionHtml(searchDocs, f, 3, f.name, "", link, module.name, url));
      }
    }

    if (module.variables.length) {
      toc.push({ id: "variables", text: "Variables", level: 2 });
      parts.push(
        headingHtml(2, "variables", "Variables") + variablesTable(module.variables, link, "", "Module variables"),
      );
    }

    if (parts.length <= 3 && !subs.length) parts.push(`<p class="py-empty">This ${kind} has no public names.</p>`);
    pages.push({ route: url, title, description: summaryOf(module.docstring), html: parts.join(""), toc });
  }

  if (!byName.has(packageName)) {
    pages.push({
      route: prefix,
      title: "Python client reference",
      description: "",
      html:
        `<h1>Python client reference</h1><p>This reference is generated at build time from the source of the ` +
        `<code>${escapeHtml(packageName)}</code> package in <code>clients/python</code>. This build found no package ` +
        `there, so there are no module pages yet. The guides cover <a href="${base}py/installation">installation</a> ` +
        `and <a href="${base}py/login">login</a>.</p>`,
      toc: [],
    });
  }

  const sidebarFor = (m: PyModule): SidebarItem => {
    const kids = children(m.name);
    const label = m.name.split(".").pop()!;
    return kids.length
      ? { type: "category", label, path: route(m.name), items: kids.map(sidebarFor) }
      : { type: "link", label, path: route(m.name) };
  };
  const items = byName.has(packageName) ? children(packageName).map(sidebarFor) : [];
  const sidebar: SidebarItem = items.length
    ? { type: "category", label: "Client reference", path: prefix, items }
    : { type: "link", label: "Client reference", path: prefix };
  return { pages, sidebar, searchDocs };
}
