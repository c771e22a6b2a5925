// Renders Python docstrings (Google style, with the common reST inline roles) to HTML.
import { escapeHtml } from "./html.js";
import { codeBlockHtml } from "./markdown.js";

/** Resolves a Python name (`login`, `DAIEngineClient.create_engine`) to a site URL, if documented. */
export type PyLinker = (name: string) => string | undefined;

const sectionNames: Record<string, "params" | "returns" | "raises" | "example" | "note"> = {
  args: "params",
  arguments: "params",
  parameters: "params",
  params: "params",
  "keyword args": "params",
  "keyword arguments": "params",
  attributes: "params",
  returns: "returns",
  return: "returns",
  yields: "returns",
  raises: "raises",
  example: "example",
  examples: "example",
  note: "note",
  notes: "note",
  warning: "note",
  "see also": "note",
};

const sectionTitles: Record<string, string> = {
  args: "Parameters",
  arguments: "Parameters",
  parameters: "Parameters",
  params: "Parameters",
  "keyword args": "Keyword parameters",
  "keyword arguments": "Keyword parameters",
  attributes: "Attributes",
  returns: "Returns",
  return: "Returns",
  yields: "Yields",
  raises: "Raises",
  example: "Example",
  examples: "Examples",
  note: "Note",
  notes: "Note",
  warning: "Warning",
  "see also": "See also",
};

export function inlineHtml(text: string, link: PyLinker): string {
  // ``literal``, `literal`, :role:`target` and *emphasis*; everything else is escaped text.
  const pattern =
    /:(?:py:)?(?:func|class|meth|mod|attr|exc|data|obj):`(~?[^`]+)`|``([^`]+)``|`([^`]+)`|\*([^*\s][^*]*)\*/g;
  let out = "";
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    out += escapeHtml(text.slice(last, m.index));
    if (m[1] !== undefined) {
      // A leading ~ shows only the last part of a dotted name, as Sphinx does.
      const short = m[1].startsWith("~");
      const target = m[1].replace(/^~/, "").replace(/\(\)$/, "");
      const url = link(target);
      const label = `<code>${escapeHtml(short ? target.split(".").pop()! : target)}</code>`;
      out += url ? `<a href="${escapeHtml(url)}">${label}</a>` : label;
    } else if (m[2] !== undefined || m[3] !== undefined) {
      const code = (m[2] ?? m[3])!;
      const url = /^[A-Za-z_][\w.]*$/.test(code) ? link(code.replace(/\(\)$/, "")) : undefined;
      out += url
        ? `<a href="${escapeHtml(url)}"><code>${escapeHtml(code)}</code></a>`
        : `<code>${escapeHtml(code)}</code>`;
    } else {
      out += `<em>${escapeHtml(m[4]!)}</em>`;
    }
    last = m.index + m[0].length;
  }
  return out + escapeHtml(text.slice(last));
}

function dedent(lines: string[]): string[] {
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
  return Number.isFinite(indent) ? lines.map((l) => l.slice(indent)) : lines;
}

// Free text: paragraphs, "::" literal blocks, >>> examples and fenced code.
function proseHtml(lines: string[], link: PyLinker): string {
  const out: string[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) out.push(`<p>${inlineHtml(para.join(" ").trim(), link)}</p>`);
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.trim()) {
      flush();
      continue;
    }
    const fence = /^\s*```(\w*)/.exec(line);
    if (fence) {
      flush();
      const code: string[] = [];
      for (i++; i < lines.length && !/^\s*```/.test(lines[i]!); i++) code.push(lines[i]!);
      out.push(codeBlockHtml(dedent(code).join("\n"), fence[1] || "python"));
      continue;
    }
    if (/^\s*>>>/.test(line)) {
      flush();
      const code: string[] = [];
      for (; i < lines.length && lines[i]!.trim(); i++) code.push(lines[i]!);
      i--;
      out.push(codeBlockHtml(dedent(code).join("\n"), "python"));
      continue;
    }
    if (line.trimEnd().endsWith("::")) {
      para.push(line.trimEnd().replace(/::$/, line.trimEnd().endsWith(" ::") ? "" : ":"));
      flush();
      const base = /^ */.exec(line)![0].length;
      const code: string[] = [];
      for (i++; i < lines.length && (!lines[i]!.trim() || /^ */.exec(lines[i]!)![0].length > base); i++)
        code.push(lines[i]!);
      i--;
      out.push(
        codeBlockHtml(
          dedent(code)
            .join("\n")
            .replace(/^\n+|\n+$/g, ""),
          "python",
        ),
      );
      continue;
    }
    para.push(line.trim());
  }
  flush();
  return out.join("");
}

interface Item {
  name: string;
  type?: string;
  text: string[];
}

// "name (type): text" items with indented continuation lines.
function parseItems(lines: string[], withNames: boolean): Item[] {
  const items: Item[] = [];
  const body = dedent(lines);
  for (const line of body) {
    if (!line.trim()) {
      items.at(-1)?.text.push("");
      continue;
    }
    if (/^\S/.test(line) || items.length === 0) {
      const m = withNames
        ? /^(\*{0,2}[\w.]+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$/.exec(line)
        : /^([\w.[\], ]+?)\s*:\s*(.*)$/.exec(line);
      if (m && withNames) items.push({ name: m[1]!, type: m[2], text: [m[3]!] });
      else if (m) items.push({ name: m[1]!, text: [m[2]!] });
      else items.push({ name: "", text: [line] });
    } else {
      items.at(-1)!.text.push(line);
    }
  }
  return items;
}

export interface DocumentedAttribute {
  type?: string;
  html: string;
}

/**
 * Takes the "Attributes:" section out of a class docstring, so the class's attribute table can
 * show each attribute once, with the docstring's description.
 */
export function splitAttributes(
  docstring: string | null | undefined,
  link: PyLinker,
): { rest: string; attributes: Map<string, DocumentedAttribute> } {
  const attributes = new Map<string, DocumentedAttribute>();
  if (!docstring) return { rest: "", attributes };
  const lines = docstring.split("\n");
  const start = lines.findIndex((l) => /^Attributes:\s*$/.test(l));
  if (start < 0) return { rest: docstring, attributes };
  let end = lines.findIndex(
    (l, i) =>
      i > start &&
      /^[A-Za-z][A-Za-z ]*:\s*$/.test(l) &&
      sectionNames[l.trim().slice(0, -1).toLowerCase()] !== undefined,
  );
  if (end < 0) end = lines.length;
  for (const item of parseItems(lines.slice(start + 1, end), true)) {
    if (item.name) attributes.set(item.name, { type: item.type, html: proseHtml(item.text, link) });
  }
  return { rest: [...lines.slice(0, start), ...lines.slice(end)].join("\n"), attributes };
}

export function docstringHtml(docstring: string | null | undefined, link: PyLinker): string {
  if (!docstring) return "";
  const lines = docstring.split("\n");
  const blocks: { section?: string; lines: string[] }[] = [{ lines: [] }];
  for (const line of lines) {
    const header = /^([A-Za-z][A-Za-z ]*):\s*$/.exec(line);
    const key = header?.[1]?.toLowerCase();
    if (key && sectionNames[key]) blocks.push({ section: key, lines: [] });
    else blocks.at(-1)!.lines.push(line);
  }
  return blocks
    .map(({ section, lines: body }) => {
      if (!section) return proseHtml(body, link);
      const kind = sectionNames[section]!;
      const title = `<p class="doc-section-title">${sectionTitles[section]}</p>`;
      if (kind === "params" || kind === "raises") {
        const items = parseItems(body, kind === "params");
        const rows = items
          .map((item) => {
            const text = proseHtml(item.text, link);
            if (kind === "raises") {
              const url = item.name ? link(item.name) : undefined;
              const name = item.name ? `<code>${escapeHtml(item.name)}</code>` : "";
              return `<dt>${url ? `<a href="${escapeHtml(url)}">${name}</a>` : name}</dt><dd>${text}</dd>`;
            }
            const type = item.type ? ` <span class="doc-type">(${inlineHtml(item.type, link)})</span>` : "";
            return `<dt><code>${escapeHtml(item.name)}</code>${type}</dt><dd>${text}</dd>`;
          })
          .join("");
        return `<div class="doc-section doc-${kind}">${title}<dl>${rows}</dl></div>`;
      }
      if (kind === "returns") {
        const text = dedent(body);
        const typed = /^([\w.[\], "']+):\s+(.*)$/.exec(text[0] ?? "");
        const inner = typed
          ? `<p><span class="doc-type">${inlineHtml(typed[1]!, link)}</span>: ${inlineHtml([typed[2]!, ...text.slice(1)].join(" ").trim(), link)}</p>`
          : proseHtml(text, link);
        return `<div class="doc-section doc-returns">${title}${inner}</div>`;
      }
      if (kind === "example") {
        const text = dedent(body);
        const isCode =
          text.some((l) => /^\s*>>>/.test(l)) || !text.some((l) => /^\S/.test(l) && /[.:]$/.test(l.trim()));
        const inner =
          isCode && !text.some((l) => /^\s*```/.test(l))
            ? codeBlockHtml(text.join("\n").replace(/^\n+|\n+$/g, ""), "python")
            : proseHtml(text, link);
        return `<div class="doc-section doc-example">${title}${inner}</div>`;
      }
      return `<div class="doc-section doc-note">${title}${proseHtml(dedent(body), link)}</div>`;
    })
    .join("");
}

/** The first sentence of a docstring, as plain text, for summaries. */
export function summaryOf(docstring: string | null | undefined): string {
  if (!docstring) return "";
  const first = docstring
    .split(/\n\s*\n/)[0]!
    .replace(/\s+/g, " ")
    .trim();
  return first.replace(/:(?:py:)?\w+:`~?([^`]+)`/g, "$1").replace(/``?([^`]+)``?/g, "$1");
}
