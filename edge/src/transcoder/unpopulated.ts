// REST responses name every field, as the real product's gateway does (protojson with
// EmitUnpopulated): protobuf-es's `alwaysEmitImplicit` covers fields without presence, and this
// adds `null` for unset fields with presence (messages and proto3 `optional` scalars), which
// `toJson` leaves out. The official Python client builds its models from every key.
import type { DescField, DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";

/** Adds `null` for every unset field with presence, in place, through nested messages. */
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

// A member of a real oneof stays absent: naming the unset members would make the JSON ambiguous.
function emitsNullWhenUnset(field: DescField): boolean {
  if (field.fieldKind === "list" || field.fieldKind === "map" || field.oneof) return false;
  return field.fieldKind === "message" || field.presence === FeatureSet_FieldPresence.EXPLICIT;
}

// Well-known types have JSON forms of their own (strings, arbitrary values); no fields to fill.
function nestedMessage(field: DescField): DescMessage | undefined {
  const message =
    field.fieldKind === "message" || field.fieldKind === "list" || field.fieldKind === "map" ? field.message : undefined;
  if (!message || message.typeName.startsWith("google.protobuf.")) return undefined;
  return message;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
