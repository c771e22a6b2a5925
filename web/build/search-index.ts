// Builds the local search index at build time. The browser fetches it, as one hashed JSON file,
// only when search is first opened.
import MiniSearch from "minisearch";
import type { SearchDoc } from "../src/site-types.js";
import { SEARCH_TAG } from "../src/site-types.js";
import { indexOptions } from "../src/search/index-options.js";
import { htmlToText } from "./html.js";

/** Splits a rendered page at its h2 and h3 headings into searchable sections. */
export function sectionDocs(route: string, pageTitle: string, html: string): SearchDoc[] {
  const docs: SearchDoc[] = [];
  const heading = /<h([23]) id="([^"]+)"[^>]*>([\s\S]*?)<\/h\1>/g;
  let last = 0;
  let current = { id: "", title: pageTitle };
  const push = (end: number) => {
    const text = htmlToText(html.slice(last, end).replace(/<h1>[\s\S]*?<\/h1>/, ""));
    if (!text && current.id) return;
    docs.push({
      id: `page:${route}#${current.id}`,
      title: current.title,
      page: pageTitle,
      url: current.id ? `${route}#${current.id}` : route,
      text,
      kind: current.id ? "section" : "page",
      tags: [SEARCH_TAG],
    });
  };
  for (const m of html.matchAll(heading)) {
    push(m.index);
    current = { id: m[2]!, title: htmlToText(m[3]!.replace(/<a class="hash-link"[\s\S]*?<\/a>/, "")) };
    last = m.index + m[0].length;
  }
  push(html.length);
  return docs;
}

export function excerptOf(text: string, length = 160): string {
  if (text.length <= length) return text;
  const cut = text.slice(0, length);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(" "), length - 20))}…`;
}

export function buildSearchIndex(docs: SearchDoc[]): string {
  const index = new MiniSearch<SearchDoc & { excerpt: string }>(indexOptions);
  const seen = new Set<string>();
  index.addAll(
    docs.filter((d) => !seen.has(d.id) && seen.add(d.id)).map((d) => ({ ...d, excerpt: excerptOf(d.text) })),
  );
  return JSON.stringify(index);
}
