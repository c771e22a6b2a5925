// A Python class on its module's page, for the Python client reference.
import { SEARCH_TAG } from "../src/site-types.js";
import { docstringHtml, splitAttributes } from "./docstring.js";
import { escapeHtml, headingHtml } from "./html.js";
import { codeWithLinks } from "./py-links.js";
import { functionHtml, variablesTable } from "./py-members-html.js";
import type { PyModulePage } from "./py-module-page.js";
import type { PyClass } from "./py-reference.js";

/** A class: its signature (with bases or decorators), docstring, attributes or members, and methods. */
export function classHtml(page: PyModulePage, c: PyClass): string {
  const { site, module, url, link, toc } = page;
  toc.push({ id: c.name, text: c.name, level: 3 });
  site.searchDocs.push({
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
  const members = variablesTable(c.attributes, link, `${c.name}.`, c.is_enum ? "Members" : "Attributes", attributes);
  // The heading already says "class Name"; the signature only adds something with bases or decorators.
  const signature =
    bases || decorators
      ? `<pre class="py-signature" tabindex="0"><code>${decorators}<span class="tok-keyword">class</span> ${escapeHtml(c.name)}${bases}</code></pre>`
      : "";
  const methods = c.methods
    .map((f) => functionHtml(site.searchDocs, f, 4, `${c.name}.${f.name}`, c.name, link, module.name, url))
    .join("");
  return (
    `<section class="py-class">${headingHtml(3, c.name, `<span class="py-kind">class</span> <code>${escapeHtml(c.name)}</code>`)}` +
    `${signature}${docstringHtml(rest, link)}${members}${methods}</section>`
  );
}
