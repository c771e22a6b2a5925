// The API reference's comments: a small Markdown subset in which a name in backticks that
// identifies exactly one documented item links to it.
import { Marked } from "marked";
import type { DescEnum, DescMessage, DescService } from "@bufbuild/protobuf";
import { escapeHtml } from "./html.js";

export type SymbolTable = Map<string, string>;

// Names in backticks that identify exactly one documented item become links to it.
export function symbolTable(services: DescService[], messages: DescMessage[], enums: DescEnum[]): SymbolTable {
  const counts = new Map<string, string[]>();
  const add = (short: string, id: string) => counts.set(short, [...(counts.get(short) ?? []), id]);
  for (const s of services) {
    add(s.name, s.typeName);
    for (const m of s.methods) add(m.name, `${s.typeName}.${m.name}`);
  }
  const walk = (m: DescMessage) => {
    add(m.name, m.typeName);
    m.nestedMessages.forEach(walk);
    for (const e of m.nestedEnums) add(`${m.name}.${e.name}`, e.typeName);
  };
  messages.forEach(walk);
  for (const e of enums) add(e.name, e.typeName);
  const table: SymbolTable = new Map();
  for (const [short, targets] of counts) if (targets.length === 1) table.set(short, targets[0]!);
  return table;
}

const commentMarked = new Marked({ gfm: true });

/** Comments are a small Markdown subset: paragraphs, lists and `code`, which links when it names an item. */
export function commentHtml(text: string, symbols: SymbolTable = new Map()): string {
  if (!text) return "";
  // Angle brackets outside code spans are prose (`<workspace>` placeholders), never markup.
  const safe = text
    .split("`")
    .map((part, i) => (i % 2 === 0 ? part.replace(/</g, "&lt;").replace(/>/g, "&gt;") : part))
    .join("`");
  const html = commentMarked.parse(safe, { async: false });
  return html.replace(/<code>([^<]+)<\/code>/g, (whole, name: string) => {
    const target = symbols.get(name);
    return target ? `<a href="#${escapeHtml(target)}">${whole}</a>` : whole;
  });
}
