// Small HTML helpers shared by the build-time page generators.

const entities: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => entities[c] ?? c);
}

/** Strips tags and decodes the few entities our generators emit, for search text and titles. */
export function htmlToText(html: string): string {
  return html
    .replace(/<[^>]+>/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
}

export function slugify(text: string): string {
  const slug = text
    .toLowerCase()
    .replace(/[`'"“”‘’]/g, "")
    .replace(/[^a-z0-9_.\- ]+/g, " ")
    .trim()
    .replace(/[\s.]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/^-|-$/g, "");
  return slug || "section";
}

/** Hands out unique ids within one page: a repeated heading gets -1, -2 and so on. */
export function createSlugger(): (text: string) => string {
  const seen = new Map<string, number>();
  return (text) => {
    const base = slugify(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return count === 0 ? base : `${base}-${count}`;
  };
}

/** A heading with a "direct link" anchor, the same markup on every generated page. */
export function headingHtml(level: number, id: string, innerHtml: string, extraClass = ""): string {
  const label = htmlToText(innerHtml);
  const cls = extraClass ? ` class="${extraClass}"` : "";
  return (
    `<h${level} id="${escapeHtml(id)}"${cls}>${innerHtml}` +
    `<a class="hash-link" href="#${escapeHtml(id)}" aria-label="Direct link to ${escapeHtml(label)}">#</a>` +
    `</h${level}>`
  );
}
