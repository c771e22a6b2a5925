// The HTML of the API reference's types: messages with their field tables, enums, and the type
// of each field linked to where it is documented.
import type { DescEnum, DescField, DescMessage } from "@bufbuild/protobuf";
import type { SymbolTable } from "./api-reference.js";
import { escapeHtml, headingHtml } from "./html.js";
import {
  behaviorsOf,
  commentOf,
  jsonNoteOf,
  resourcePatternOf,
  resourceReferenceOf,
  scalarName,
  type Behavior,
} from "./proto-descriptors.js";

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

const behaviorLabels: Record<Behavior, string> = {
  REQUIRED: "Required",
  OUTPUT_ONLY: "Output only",
  INPUT_ONLY: "Input only",
  IMMUTABLE: "Immutable",
  OPTIONAL: "Optional",
  IDENTIFIER: "Identifier",
  UNORDERED_LIST: "Unordered",
  NON_EMPTY_DEFAULT: "Non-empty default",
};

export function createTypeRenderer(context: TypeRenderContext) {
  const typeHtml = (field: DescField): string => {
    const named = (desc: DescMessage | DescEnum) => {
      context.noteType(desc.typeName);
      return `<a href="#${escapeHtml(desc.typeName)}"><code>${escapeHtml(desc.name)}</code></a>`;
    };
    const scalar = (t: Parameters<typeof scalarName>[0]) => {
      const note = jsonNoteOf(t);
      return `<code>${scalarName(t)}</code>${note ? ` <span class="type-note">(${note})</span>` : ""}`;
    };
    switch (field.fieldKind) {
      case "scalar":
        return (field.proto.proto3Optional ? "<code>optional</code> " : "") + scalar(field.scalar);
      case "enum":
        return named(field.enum);
      case "message":
        return named(field.message);
      case "list":
        return `<code>repeated</code> ${
          field.listKind === "scalar"
            ? scalar(field.scalar)
            : named(field.listKind === "enum" ? field.enum : field.message)
        }`;
      case "map": {
        const value =
          field.mapKind === "scalar"
            ? `<code>${scalarName(field.scalar)}</code>`
            : named(field.mapKind === "enum" ? field.enum : field.message);
        return `<code>map&lt;${scalarName(field.mapKey)},</code> ${value}<code>&gt;</code>`;
      }
    }
  };

  const fieldTable = (message: DescMessage): string => {
    if (message.fields.length === 0) return `<p class="api-empty">No fields.</p>`;
    const rows = message.fields.map((field) => {
      const id = `${message.typeName}.${field.name}`;
      context.ids.add(id);
      const behaviors = behaviorsOf(field);
      const badges = [
        ...behaviors.map(
          (b) => `<span class="badge badge-${b.toLowerCase().replace(/_/g, "-")}">${behaviorLabels[b]}</span>`,
        ),
        ...(field.deprecated ? [`<span class="badge badge-deprecated">Deprecated</span>`] : []),
      ].join(" ");
      const ref = resourceReferenceOf(field);
      const refHtml = ref ? referenceHtml(ref, context.symbols) : "";
      const oneof = field.oneof
        ? `<p class="field-oneof">One of <code>${escapeHtml(field.oneof.name)}</code>: set at most one of its fields.</p>`
        : "";
      const names =
        field.jsonName !== field.name
          ? `<code class="field-json">${escapeHtml(field.jsonName)}</code><br><code class="field-proto">${escapeHtml(field.name)}</code>`
          : `<code class="field-json">${escapeHtml(field.name)}</code>`;
      return (
        `<tr id="${escapeHtml(id)}"><td class="field-name">${names}` +
        `<a class="hash-link" href="#${escapeHtml(id)}" aria-label="Direct link to ${escapeHtml(message.name)}.${escapeHtml(field.name)}">#</a></td>` +
        `<td>${typeHtml(field)}</td><td class="field-behavior">${badges}</td>` +
        `<td>${context.comment(commentOf(field))}${oneof}${refHtml}</td></tr>`
      );
    });
    return (
      `<div class="table-wrapper" tabindex="0"><table class="field-table"><thead><tr><th scope="col">Field</th><th scope="col">Type</th>` +
      `<th scope="col">Behaviour</th><th scope="col">Description</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>`
    );
  };

  const enumHtml = (e: DescEnum, level: number): string => {
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
  };

  const messageHtml = (message: DescMessage, level: number, pageLabel: string): string => {
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
      message.nestedEnums.map((e) => enumHtml(e, nestedLevel)).join("") +
      message.nestedMessages
        .filter((m) => !m.proto.options?.mapEntry)
        .map((m) => messageHtml(m, nestedLevel, pageLabel))
        .join("");
    return (
      `<section class="api-message">${headingHtml(level, message.typeName, `<span class="api-kind">message</span> ${escapeHtml(message.name)}`)}` +
      `<p class="api-fullname"><code>${escapeHtml(message.typeName)}</code></p>${resHtml}${context.comment(commentOf(message))}` +
      `${fieldTable(message)}${nested}</section>`
    );
  };

  return { fieldTable, enumHtml, messageHtml };
}

function referenceHtml(ref: { type: string; childType: string }, symbols: SymbolTable): string {
  const kind = (ref.type || ref.childType).split("/").pop()!;
  const target = symbols.get(kind);
  const name = target
    ? `<a href="#${escapeHtml(target)}"><code>${escapeHtml(kind)}</code></a>`
    : `<code>${escapeHtml(kind)}</code>`;
  return ref.type
    ? `<p class="field-ref">The name of a ${name}.</p>`
    : `<p class="field-ref">The parent of a ${name}.</p>`;
}
