// Links of the Python client reference: where each public name is documented, and a linker per
// module that resolves names as that module sees them (its own, the package's, what it imports).
import type { PyLinker } from "./docstring.js";
import { escapeHtml } from "./html.js";
import type { PyModule } from "./py-reference.js";

/** `pageOf(module)` is the URL of a module's page. */
export function createPyLinks(modules: readonly PyModule[], packageName: string, pageOf: (module: string) => string) {
  // Where each public name is defined, so docstrings and signatures can link to it.
  const definitions = new Map<string, string>();
  const shortNames = new Map<string, string[]>();
  const define = (qualified: string, url: string, short: string) => {
    definitions.set(qualified, url);
    shortNames.set(short, [...(shortNames.get(short) ?? []), url]);
  };
  for (const m of modules) {
    const page = pageOf(m.name);
    for (const c of m.classes) {
      define(`${m.name}.${c.name}`, `${page}#${c.name}`, c.name);
      for (const f of c.methods) definitions.set(`${m.name}.${c.name}.${f.name}`, `${page}#${c.name}.${f.name}`);
      for (const f of c.methods) shortNames.set(`${c.name}.${f.name}`, [`${page}#${c.name}.${f.name}`]);
    }
    for (const f of m.functions) define(`${m.name}.${f.name}`, `${page}#${f.name}`, f.name);
    for (const v of m.variables) definitions.set(`${m.name}.${v.name}`, `${page}#${v.name}`);
    definitions.set(m.name, page);
  }
  const linkerFor =
    (module: PyModule): PyLinker =>
    (name) => {
      if (definitions.has(name)) return definitions.get(name);
      if (definitions.has(`${module.name}.${name}`)) return definitions.get(`${module.name}.${name}`);
      if (definitions.has(`${packageName}.${name}`)) return definitions.get(`${packageName}.${name}`);
      const re = module.imports.find((i) => i.name === name);
      if (re) return definitions.get(`${re.module}.${re.target}`) ?? definitions.get(re.module);
      const candidates = shortNames.get(name);
      return candidates?.length === 1 ? candidates[0] : undefined;
    };
  return { definitions, linkerFor };
}

// Identifiers inside signatures and annotations link to the classes they name.
export const codeWithLinks = (code: string, link: PyLinker): string =>
  code
    .split(/([A-Za-z_][\w.]*)/)
    .map((part, i) => {
      if (i % 2 === 0) return escapeHtml(part);
      const url = /^[A-Z]/.test(part.split(".").pop()!) ? link(part) : undefined;
      return url ? `<a href="${escapeHtml(url)}">${escapeHtml(part)}</a>` : escapeHtml(part);
    })
    .join("");
