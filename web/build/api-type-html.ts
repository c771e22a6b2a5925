// The HTML of the API reference's types: messages with their field tables (api-field-html.ts)
// and nested types, and enums with their values.
import type { DescEnum, DescMessage } from "@bufbuild/protobuf";
import type { SymbolTable } from "./api-comment-html.js";
import { fieldTableHtml } from "./api-field-html.js";
import { escapeHtml, headingHtml } from "./html.js";
import { commentOf, resourcePatternOf } from "./proto-descriptors.js";

/** What the page being built shares with its type renderers. */
export interface TypeRenderContext {
  /** Every anchor the page holds. */
  readonly ids: Set<string>;
  readonly symbols: SymbolTable;
  readonly pageTitle: string;
  comment(text: string): string;
  addDoc(id: string, title: string, page: string, text: string): void;
  /** Called with each type a field refers to (the page lists the well-known ones it uses). */
  noteType(typeName: string): void;
}

/** The renderers of one page, bound to what it shares with them. */
export function createTypeRenderer(context: TypeRenderContext) {
  return {
    fieldTable: (message: DescMessage) => fieldTableHtml(context, message),
    enumHtml: (e: DescEnum, level: number) => enumHtml(context, e, level),
    messageHtml: (message: DescMessage, level: number, pageLabel: string) =>
      messageHtml(context, message, level, pageLabel),
  };
}

export function enumHtml(context: TypeRenderContext, e: DescEnum, level: number): string {
  context.ids.add(e.typeName);
  context.addDoc(
    e.typeName,
    e.name,
    `${context.pageTitle} · ${e.parent ? e.parent.name : e.file.proto.package}`,
    `${e.typeName} ${commentOf(e)} ${e.values.map((v) => v.name).join(" ")}`,
  );
  const rows = e.values
    .map((v) => {
      const id = `${e.typeName}.${v.name}`;
      context.ids.add(id);
      const deprecated = v.deprecated ? ` <span class="badge badge-deprecated">Deprecated</span>` : "";
      return (
        `<tr id="${escapeHtml(id)}"><td><code>${escapeHtml(v.name)}</code>` +
        `<a class="hash-link" href="#${escapeHtml(id)}" aria-label="Direct link to ${escapeHtml(v.name)}">#</a></td>` +
        `<td>${v.number}</td><td>${deprecated}${context.comment(commentOf(v))}</td></tr>`
      );
    })
    .join("");
  return (
    `<section class="api-enum">${headingHtml(level, e.typeName, `<span class="api-kind">enum</span> ${escapeHtml(e.name)}`)}` +
    `<p class="api-fullname"><code>${escapeHtml(e.typeName)}</code></p>${context.comment(commentOf(e))}` +
    `<div class="table-wrapper" tabindex="0"><table class="enum-table"><thead><tr><th scope="col">Value</th><th scope="col">Number</th>` +
    `<th scope="col">Description</th></tr></thead><tbody>${rows}</tbody></table></div></section>`
  );
}

export function messageHtml(
  context: TypeRenderContext,
  message: DescMessage,
  level: number,
  pageLabel: string,
): string {
  context.ids.add(message.typeName);
  const res = resourcePatternOf(message);
  const resHtml = res
    ? `<p class="api-resource">Resource <code>${escapeHtml(res.type)}</code>, name ${res.patterns
        .map((p) => `<code>${escapeHtml(p)}</code>`)
        .join(" or ")}</p>`
    : "";
  context.addDoc(
    message.typeName,
    message.name,
    pageLabel,
    `${message.typeName} ${commentOf(message)} ${message.fields.map((f) => `${f.name} ${f.jsonName}`).join(" ")}`,
  );
  const nestedLevel = Math.min(level + 1, 6);
  const nested =
    message.nestedEnums.map((e) => enumHtml(context, e, nestedLevel)).join("") +
    message.nestedMessages
      .filter((m) => !m.proto.options?.mapEntry)
      .map((m) => messageHtml(context, m, nestedLevel, pageLabel))
      .join("");
  return (
    `<section class="api-message">${headingHtml(level, message.typeName, `<span class="api-kind">message</span> ${escapeHtml(message.name)}`)}` +
    `<p class="api-fullname"><code>${escapeHtml(message.typeName)}</code></p>${resHtml}${context.comment(commentOf(message))}` +
    `${fieldTableHtml(context, message)}${nested}</section>`
  );
}
