// The field tables of the API reference's messages: each field's names, its type linked to where
// it is documented, its behaviours, and what it refers to.
import type { DescEnum, DescField, DescMessage } from "@bufbuild/protobuf";
import type { SymbolTable } from "./api-comment-html.js";
import type { TypeRenderContext } from "./api-type-html.js";
import { escapeHtml } from "./html.js";
import {
  behaviorsOf,
  commentOf,
  jsonNoteOf,
  resourceReferenceOf,
  scalarName,
  type Behavior,
} from "./proto-descriptors.js";

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

/** A message's fields as a table: names, types, behaviours and descriptions. */
export function fieldTableHtml(context: TypeRenderContext, message: DescMessage): string {
  if (message.fields.length === 0) return `<p class="api-empty">No fields.</p>`;
  const rows = message.fields.map((field) => fieldRowHtml(context, message, field));
  return (
    `<div class="table-wrapper" tabindex="0"><table class="field-table"><thead><tr><th scope="col">Field</th><th scope="col">Type</th>` +
    `<th scope="col">Behaviour</th><th scope="col">Description</th></tr></thead><tbody>${rows.join("")}</tbody></table></div>`
  );
}

function fieldRowHtml(context: TypeRenderContext, message: DescMessage, field: DescField): string {
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
    `<td>${typeHtml(context, field)}</td><td class="field-behavior">${badges}</td>` +
    `<td>${context.comment(commentOf(field))}${oneof}${refHtml}</td></tr>`
  );
}

function typeHtml(context: TypeRenderContext, field: DescField): string {
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
