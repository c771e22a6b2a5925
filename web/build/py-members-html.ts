// The HTML of a Python module's members: tables of variables and attributes, and functions and
// methods with their signatures (each also a search entry).
import type { SearchDoc } from "../src/site-types.js";
import { SEARCH_TAG } from "../src/site-types.js";
import { docstringHtml, type DocumentedAttribute, type PyLinker } from "./docstring.js";
import { escapeHtml, headingHtml } from "./html.js";
import { codeWithLinks } from "./py-links.js";
import { formatSignature, type PyFunction, type PyVariable } from "./py-reference.js";

export function variablesTable(
  vars: PyVariable[],
  link: PyLinker,
  anchorPrefix: string,
  heading: string,
  documented: Map<string, DocumentedAttribute> = new Map(),
): string {
  // Attributes a docstring describes but the class body does not assign (set in __init__).
  const all: PyVariable[] = [
    ...vars,
    ...[...documented.keys()]
      .filter((name) => !vars.some((v) => v.name === name))
      .map((name) => ({
        name,
        annotation: documented.get(name)!.type ?? null,
        value: null,
        docstring: null,
        lineno: 0,
      })),
  ];
  if (all.length === 0) return "";
  const rows = all
    .map((v) => {
      const id = anchorPrefix + v.name;
      const type = v.annotation ? `<code>${codeWithLinks(v.annotation, link)}</code>` : "";
      const value =
        v.value !== null
          ? `<code>${escapeHtml(v.value.length > 80 ? `${v.value.slice(0, 77)}...` : v.value)}</code>`
          : "";
      const description = v.docstring ? docstringHtml(v.docstring, link) : (documented.get(v.name)?.html ?? "");
      return `<tr id="${escapeHtml(id)}"><td><code>${escapeHtml(v.name)}</code></td><td>${type}</td><td>${value}</td><td>${description}</td></tr>`;
    })
    .join("");
  return (
    `<p class="doc-section-title">${heading}</p><div class="table-wrapper" tabindex="0"><table><thead><tr><th scope="col">Name</th>` +
    `<th scope="col">Type</th><th scope="col">Value</th><th scope="col">Description</th></tr></thead><tbody>${rows}</tbody></table></div>`
  );
}

export function functionHtml(
  searchDocs: SearchDoc[],
  f: PyFunction,
  level: number,
  id: string,
  owner: string,
  link: PyLinker,
  pageTitle: string,
  url: string,
): string {
  const decorators = f.decorators
    .filter((d) => d !== "property")
    .map((d) => `@${d}\n`)
    .join("");
  const prefix = f.is_property ? "property " : f.is_async ? "async def " : "def ";
  const signature = f.is_property
    ? `${f.name}${f.returns ? `: ${f.returns}` : ""}`
    : `${f.name}${formatSignature(f.signature, prefix.length + f.name.length)}`;
  searchDocs.push({
    id: `py:${url}#${id}`,
    title: owner ? `${owner}.${f.name}` : f.name,
    page: pageTitle,
    url: `${url}#${id}`,
    text: `${signature} ${f.docstring ?? ""}`,
    kind: "python",
    tags: [SEARCH_TAG],
  });
  return (
    `<section class="py-function">${headingHtml(level, id, `<code>${escapeHtml(f.name)}</code>`)}` +
    `<pre class="py-signature" tabindex="0"><code>${escapeHtml(decorators)}<span class="tok-keyword">${prefix}</span>${codeWithLinks(signature, link)}</code></pre>` +
    `${docstringHtml(f.docstring, link)}</section>`
  );
}
