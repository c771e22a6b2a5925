// Turns a guide page written in Markdown into the HTML, title and table of contents the site
// renders. Runs at build time only, so the browser never downloads a Markdown parser.
import { Marked, type Tokens } from "marked";
import type { TocItem } from "../src/site-types.js";
import { createSlugger, escapeHtml, headingHtml, htmlToText } from "./html.js";
import { highlight } from "./highlight.js";

export interface MarkdownPage {
  title: string;
  description: string;
  html: string;
  toc: TocItem[];
  /** Internal links, relative to the base path, for the build's link check. */
  links: string[];
}

export interface MarkdownOptions {
  /** The site's base path, for example "/ai-engine-manager/". */
  base: string;
  /** Reads a file that a code block includes with file=..., relative to the content folder. */
  readInclude: (file: string) => string;
}

const admonitionTypes = new Set(["note", "tip", "info", "warning", "danger"]);

export function parseFrontmatter(source: string): { data: Record<string, string>; body: string } {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(source);
  if (!match) return { data: {}, body: source };
  const data: Record<string, string> = {};
  for (const line of match[1]!.split("\n")) {
    const kv = /^(\w[\w-]*):\s*(.*)$/.exec(line);
    if (kv) data[kv[1]!] = kv[2]!.replace(/^"(.*)"$/, "$1");
  }
  return { data, body: source.slice(match[0].length) };
}

// ":::note Title" ... ":::" becomes a styled block; code fences are left alone.
function expandAdmonitions(body: string): string {
  const out: string[] = [];
  let inFence = false;
  for (const line of body.split("\n")) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    const open = !inFence && /^:::(\w+)(?:\s+(.*))?$/.exec(line);
    if (open && admonitionTypes.has(open[1]!)) {
      const kind = open[1]!;
      const title = open[2]?.trim() || kind[0]!.toUpperCase() + kind.slice(1);
      out.push(
        `<div class="admonition admonition-${kind}">`,
        `<p class="admonition-title">${escapeHtml(title)}</p>`,
        "",
      );
      continue;
    }
    if (!inFence && line.trim() === ":::") {
      out.push("", "</div>");
      continue;
    }
    out.push(line);
  }
  return out.join("\n");
}

/** Cuts the lines between "# [START name]" and "# [END name]" out of a file; marker lines never show. */
export function extractRegion(text: string, region: string | undefined): string {
  const marker = /^\s*(?:#|\/\/)\s*\[(START|END) ([\w-]+)\]\s*$/;
  const lines = text.split("\n");
  let picked: string[];
  if (region === undefined) {
    picked = lines.filter((l) => !marker.test(l));
  } else {
    const start = lines.findIndex((l) => marker.exec(l)?.[1] === "START" && marker.exec(l)?.[2] === region);
    const end = lines.findIndex((l, i) => i > start && marker.exec(l)?.[1] === "END" && marker.exec(l)?.[2] === region);
    if (start < 0 || end < 0) throw new Error(`region ${region} not found`);
    picked = lines.slice(start + 1, end).filter((l) => !marker.test(l));
  }
  const indent = Math.min(...picked.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
  return picked
    .map((l) => l.slice(Number.isFinite(indent) ? indent : 0))
    .join("\n")
    .replace(/^\n+|\n+$/g, "");
}

function parseInfo(info: string): { lang: string; attrs: Record<string, string> } {
  const [lang = "", ...rest] = info.trim().split(/\s+/);
  const attrs: Record<string, string> = {};
  for (const m of rest.join(" ").matchAll(/(\w+)=(?:"([^"]*)"|(\S+))/g)) attrs[m[1]!] = m[2] ?? m[3]!;
  return { lang, attrs };
}

export function codeBlockHtml(code: string, lang: string, title?: string): string {
  const label = title ? `<div class="code-title">${escapeHtml(title)}</div>` : "";
  return (
    `<div class="code-block">${label}<pre tabindex="0"><code class="language-${escapeHtml(lang || "text")}">` +
    `${highlight(code, lang)}</code></pre>` +
    `<button type="button" class="copy-button" aria-label="Copy code to clipboard">Copy</button></div>`
  );
}

export function createMarkdownRenderer(options: MarkdownOptions): (source: string, file: string) => MarkdownPage {
  const base = options.base;
  return (source, file) => {
    const { data, body } = parseFrontmatter(source);
    const slug = createSlugger();
    const toc: TocItem[] = [];
    const links: string[] = [];
    let h1: string | undefined;

    const marked = new Marked({
      gfm: true,
      renderer: {
        heading(this: { parser: { parseInline(t: Tokens.Generic[]): string } }, token: Tokens.Heading) {
          let inner = this.parser.parseInline(token.tokens);
          let id: string;
          const explicit = /\s*\{#([\w-]+)\}$/.exec(inner);
          if (explicit) {
            inner = inner.slice(0, explicit.index);
            id = explicit[1]!;
          } else {
            id = slug(htmlToText(inner));
          }
          if (token.depth === 1) {
            h1 = htmlToText(inner);
            return `<h1>${inner}</h1>\n`;
          }
          if (token.depth === 2 || token.depth === 3) toc.push({ id, text: htmlToText(inner), level: token.depth });
          return `${headingHtml(token.depth, id, inner)}\n`;
        },
        code(token: Tokens.Code) {
          const { lang, attrs } = parseInfo(token.lang ?? "");
          let code = token.text;
          if (attrs.file) {
            const [path, region] = attrs.file.split("#");
            code = extractRegion(options.readInclude(path!), region);
          }
          return `${codeBlockHtml(code, lang, attrs.title)}\n`;
        },
        link(this: { parser: { parseInline(t: Tokens.Generic[]): string } }, token: Tokens.Link) {
          const inner = this.parser.parseInline(token.tokens);
          const href = token.href;
          const title = token.title ? ` title="${escapeHtml(token.title)}"` : "";
          if (href.startsWith("/") && !href.startsWith("//")) {
            // Made relative to the base path below, together with links in raw HTML.
            return `<a href="${escapeHtml(href)}"${title}>${inner}</a>`;
          }
          if (href.startsWith("#")) {
            links.push(`${file}${href}`);
            return `<a href="${escapeHtml(href)}"${title}>${inner}</a>`;
          }
          if (/^(https?:|mailto:)/.test(href)) {
            return `<a href="${escapeHtml(href)}"${title} rel="noopener noreferrer" target="_blank">${inner}</a>`;
          }
          throw new Error(`${file}: links must be absolute within the site (/py/login) or external, got ${href}`);
        },
        table(this: { parser: { parseInline(t: Tokens.Generic[]): string } }, token: Tokens.Table) {
          const cell = (c: Tokens.TableCell, tag: "th" | "td") => {
            const align = c.align ? ` style="text-align:${c.align}"` : "";
            return `<${tag}${align}>${this.parser.parseInline(c.tokens)}</${tag}>`;
          };
          const head = `<tr>${token.header.map((c) => cell(c, "th")).join("")}</tr>`;
          const rows = token.rows.map((r) => `<tr>${r.map((c) => cell(c, "td")).join("")}</tr>`).join("");
          return `<div class="table-wrapper" tabindex="0"><table><thead>${head}</thead><tbody>${rows}</tbody></table></div>\n`;
        },
      },
    });

    // Site-absolute links, from Markdown or raw HTML, are written without the base path.
    let html = marked
      .parse(expandAdmonitions(body), { async: false })
      .replace(/(<a\b[^>]*\bhref=")\/(?!\/)([^"]*)"/g, (_, start: string, target: string) => {
        links.push(target.replace(/&amp;/g, "&"));
        return `${start}${base}${target}"`;
      });
    const title = data.title ?? h1;
    if (!title) throw new Error(`${file}: no title (front matter title or a # heading)`);
    if (h1 === undefined && !/<h1[\s>]/.test(html)) html = `<h1>${escapeHtml(title)}</h1>\n${html}`;
    return { title, description: data.description ?? "", html, toc, links };
  };
}
