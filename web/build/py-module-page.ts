// One module's page of the Python client reference: where it sits, its docstring, then its
// submodules (or, on the package's page, every module), exports, classes, functions and variables.
import type { SearchDoc, TocItem } from "../src/site-types.js";
import { SEARCH_TAG } from "../src/site-types.js";
import { docstringHtml, inlineHtml, summaryOf, type PyLinker } from "./docstring.js";
import { escapeHtml, headingHtml } from "./html.js";
import { classHtml } from "./py-class-html.js";
import { functionHtml, variablesTable } from "./py-members-html.js";
import type { PyModule, PyPage, PyReferenceOptions } from "./py-reference.js";

/** What every page of one package's reference shares. */
export interface PySite {
  readonly options: PyReferenceOptions;
  readonly modules: readonly PyModule[];
  readonly packageName: string;
  /** A module's page route. */
  route(name: string): string;
  /** `module.name` (or `module.name.target`) -> its URL. */
  readonly definitions: ReadonlyMap<string, string>;
  linkerFor(module: PyModule): PyLinker;
  /** A module's direct submodules. */
  children(name: string): PyModule[];
  readonly searchDocs: SearchDoc[];
}

/** The page being built. */
export interface PyModulePage {
  readonly site: PySite;
  readonly module: PyModule;
  readonly url: string;
  readonly link: PyLinker;
  readonly toc: TocItem[];
}

export function modulePage(site: PySite, module: PyModule): PyPage {
  const { packageName } = site;
  const url = site.route(module.name);
  const page: PyModulePage = { site, module, url, link: site.linkerFor(module), toc: [] };
  const isRoot = module.name === packageName;
  const title = isRoot ? "Python client reference" : module.name;
  const kind = module.is_package ? "package" : "module";
  // A page has three parts (heading, where it sits, docstring) before any section.
  const parts: string[] = [...introHtml(page, isRoot, kind), docstringHtml(module.docstring, page.link)];
  site.searchDocs.push({
    id: `py:${url}`,
    title,
    page: "Python client reference",
    url,
    text: `${module.name} ${module.docstring ?? ""}`,
    kind: "python",
    tags: [SEARCH_TAG],
  });
  const subs = isRoot ? site.modules.filter((m) => m !== module) : site.children(module.name);
  if (subs.length) parts.push(submodulesHtml(page, isRoot, subs));
  if (module.imports.length && module.is_package) parts.push(exportsHtml(page));
  if (module.classes.length) {
    page.toc.push({ id: "classes", text: "Classes", level: 2 });
    parts.push(headingHtml(2, "classes", "Classes"));
    for (const c of module.classes) parts.push(classHtml(page, c));
  }
  if (module.functions.length) {
    page.toc.push({ id: "functions", text: "Functions", level: 2 });
    parts.push(headingHtml(2, "functions", "Functions"));
    for (const f of module.functions) {
      page.toc.push({ id: f.name, text: f.name, level: 3 });
      parts.push(functionHtml(site.searchDocs, f, 3, f.name, "", page.link, module.name, url));
    }
  }
  if (module.variables.length) {
    page.toc.push({ id: "variables", text: "Variables", level: 2 });
    parts.push(
      headingHtml(2, "variables", "Variables") + variablesTable(module.variables, page.link, "", "Module variables"),
    );
  }
  if (parts.length <= 3 && !subs.length) parts.push(`<p class="py-empty">This ${kind} has no public names.</p>`);
  return { route: url, title, description: summaryOf(module.docstring), html: parts.join(""), toc: page.toc };
}

/** The heading and, on the package's page, what the reference is; elsewhere where the module sits. */
function introHtml({ site, module }: PyModulePage, isRoot: boolean, kind: string): [string, string] {
  const { options, packageName } = site;
  const { base } = options;
  const heading = `<h1>${isRoot ? "Python client reference" : `<code>${escapeHtml(module.name)}</code>`}</h1>`;
  if (isRoot) {
    return [
      heading,
      `<p>The reference of the <code>${escapeHtml(packageName)}</code> package, generated at build time from its source in ` +
        `<code>${escapeHtml(options.sourceLabel)}</code>: signatures and docstrings as the code has them. ` +
        `To install and sign in, see <a href="${base}py/installation">Installation</a> and <a href="${base}py/login">Login</a>.</p>`,
    ];
  }
  const parent = module.name.split(".").slice(0, -1).join(".");
  return [
    heading,
    `<p class="py-breadcrumb">${kind} in <a href="${escapeHtml(base + site.route(parent))}"><code>${escapeHtml(parent)}</code></a> · ` +
      `source <code>${escapeHtml(options.sourceLabel)}/${escapeHtml(module.path)}</code></p>`,
  ];
}

function submodulesHtml({ site, link, toc }: PyModulePage, isRoot: boolean, subs: readonly PyModule[]): string {
  const { packageName } = site;
  const id = isRoot ? "modules" : "submodules";
  toc.push({ id, text: isRoot ? "Modules" : "Submodules", level: 2 });
  const rows = subs
    .map((m) => {
      const depth = m.name.split(".").length - packageName.split(".").length - 1;
      const label = isRoot ? m.name.slice(packageName.length + 1) : m.name.split(".").pop()!;
      return (
        `<tr><td class="py-module-cell" style="padding-left:${0.75 + (isRoot ? depth : 0) * 1.25}rem">` +
        `<a href="${escapeHtml(site.options.base + site.route(m.name))}"><code>${escapeHtml(label)}</code></a></td>` +
        `<td>${inlineHtml(summaryOf(m.docstring), link)}</td></tr>`
      );
    })
    .join("");
  return (
    headingHtml(2, id, isRoot ? "Modules" : "Submodules") +
    `<div class="table-wrapper" tabindex="0"><table class="py-modules"><thead><tr><th scope="col">Module</th>` +
    `<th scope="col">Summary</th></tr></thead><tbody>${rows}</tbody></table></div>`
  );
}

function exportsHtml({ site, module, toc }: PyModulePage): string {
  toc.push({ id: "exports", text: "Exports", level: 2 });
  const items = module.imports
    .map((i) => {
      const target = site.definitions.get(`${i.module}.${i.target}`) ?? site.definitions.get(i.module);
      const name = `<code>${escapeHtml(i.name)}</code>`;
      return `<li>${target ? `<a href="${escapeHtml(target)}">${name}</a>` : name} <span class="py-from">from <code>${escapeHtml(i.module)}</code></span></li>`;
    })
    .join("");
  return `${headingHtml(2, "exports", "Exports")}<ul class="py-exports">${items}</ul>`;
}
