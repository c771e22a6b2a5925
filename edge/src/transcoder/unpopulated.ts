// REST responses name every field the way the official Python client reads them. Fields without
// presence are written with their zero values (protobuf-es's `alwaysEmitImplicit`, as protojson's
// EmitUnpopulated does for the real product's gateway). Of the unset fields with presence, only
// well-known types (Timestamp, Duration, ...) are written, as `null`, which the client takes as
// None. A proto3 `optional` scalar stays absent, as protojson leaves the members of its synthetic
// oneof out; so does any other message, for which the client's models accept no `null` (an
// `ApiTypeError`) while an absent key reads as None.
import type { DescField, DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";

/** Adds `null` for every unset well-known-type field, in place, through nested messages. */
export function fillUnpopulated(desc: DescMessage, json: JsonObject): JsonObject {
  for (const field of desc.fields) {
    const value = json[field.jsonName];
    if (value === undefined) {
      if (emitsNullWhenUnset(field)) json[field.jsonName] = null;
      continue;
    }
    const nested = nestedMessage(field);
    if (!nested) continue;
    if (field.fieldKind === "list" && Array.isArray(value)) {
      for (const item of value) fillObject(nested, item);
    } else if (field.fieldKind === "map" && isObject(value)) {
      for (const item of Object.values(value)) fillObject(nested, item);
    } else {
      fillObject(nested, value);
    }
  }
  return json;
}

function fillObject(desc: DescMessage, value: JsonValue | undefined): void {
  if (isObject(value)) fillUnpopulated(desc, value);
}

// A member of a real oneof stays absent too: naming the unset members would make the JSON ambiguous.
// The OpenAPI document marks the same fields nullable (scripts/openapi/shape.ts).
export function emitsNullWhenUnset(field: DescField): boolean {
  if (field.fieldKind !== "message" || field.oneof || field.proto.proto3Optional) return false;
  return field.message.typeName.startsWith("google.protobuf.");
}

// Well-known types have JSON forms of their own (strings, arbitrary values); no fields to fill.
function nestedMessage(field: DescField): DescMessage | undefined {
  const message =
    field.fieldKind === "message" || field.fieldKind === "list" || field.fieldKind === "map"
      ? field.message
      : undefined;
  if (!message || message.typeName.startsWith("google.protobuf.")) return undefined;
  return message;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
