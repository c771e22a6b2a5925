// Request-body JSON helpers around protobuf-es fromJson:
// - FieldMask values are taken out of the JSON before parsing and put back verbatim afterwards,
//   because the JSON mapping would camelCase-convert them and rejects the snake_case paths the
//   API documents;
// - when fromJson fails, the body is walked once more to name the offending field by its full
//   path as the caller wrote it.
import type { DescField, DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";
import { createFieldPlan } from "./field-plan.js";
import { fieldMaskPaths } from "./field-values.js";

const FIELD_MASK = "google.protobuf.FieldMask";

/** Step from a message to a value inside it: a field, then an index or map key if repeated. */
interface Step {
  readonly field: DescField;
  readonly key: string | number | undefined;
}

export interface ExtractedMask {
  readonly steps: readonly Step[];
  readonly paths: string[];
}

/** Fields of a message type that are, or can contain, a FieldMask. */
const maskFields = createFieldPlan<DescField>((field, planOf) => {
  const message = field.message;
  return message && (message.typeName === FIELD_MASK || planOf(message).length > 0) ? field : undefined;
});

export function containsFieldMask(desc: DescMessage): boolean {
  return maskFields(desc).length > 0;
}

function jsonKeyOf(obj: JsonObject, field: DescField): string | undefined {
  if (field.jsonName in obj) return field.jsonName;
  if (field.name in obj) return field.name;
  return undefined;
}

/**
 * Takes every FieldMask string out of `json` (replacing it with "", which parses to an empty
 * mask) and returns where each was with its paths exactly as sent.
 */
export function extractFieldMasks(desc: DescMessage, json: JsonValue, prefix: readonly Step[] = []): ExtractedMask[] {
  const out: ExtractedMask[] = [];
  walkMasks(desc, json, [...prefix], out);
  return out;
}

function walkMasks(desc: DescMessage, json: JsonValue, steps: Step[], out: ExtractedMask[]): void {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return;
  for (const field of maskFields(desc)) {
    const key = jsonKeyOf(json, field);
    if (key === undefined) continue;
    const value = json[key];
    const message = field.message!;
    const visit = (v: JsonValue | undefined, k: string | number | undefined, set: (v: JsonValue) => void) => {
      if (v === undefined) return;
      const here = [...steps, { field, key: k }];
      if (message.typeName === FIELD_MASK) {
        if (typeof v === "string") {
          out.push({ steps: here, paths: fieldMaskPaths(v) });
          set("");
        }
      } else {
        walkMasks(message, v, here, out);
      }
    };
    if (field.fieldKind === "list") {
      if (Array.isArray(value)) {
        for (const [i, v] of value.entries()) {
          visit(v, i, (nv) => {
            value[i] = nv;
          });
        }
      }
    } else if (field.fieldKind === "map") {
      if (value !== null && typeof value === "object" && !Array.isArray(value)) {
        for (const k of Object.keys(value)) visit(value[k], k, (nv) => (value[k] = nv));
      }
    } else {
      visit(value, undefined, (nv) => (json[key] = nv));
    }
  }
}

/** Puts extracted masks back into the parsed message. */
export function restoreFieldMasks(message: object, masks: readonly ExtractedMask[]): void {
  for (const mask of masks) {
    let target: unknown = message;
    for (const { field, key } of mask.steps) {
      const holder = target as Record<string, unknown>;
      target = field.oneof ? (holder[field.oneof.localName] as { value: unknown }).value : holder[field.localName];
      if (key !== undefined) target = (target as Record<string | number, unknown>)[key];
    }
    if (target && typeof target === "object") (target as { paths: string[] }).paths = mask.paths;
  }
}

// Types whose JSON form is not an object of their fields; their content is left to fromJson.
const opaqueJson = new Set([
  "google.protobuf.Any",
  "google.protobuf.Struct",
  "google.protobuf.Value",
  "google.protobuf.ListValue",
]);

/** The dotted JSON path of the first key in `json` that `desc` has no field for, if any. */
export function findUnknownField(desc: DescMessage, json: JsonValue, prefix = ""): string | undefined {
  if (json === null || typeof json !== "object" || Array.isArray(json) || opaqueJson.has(desc.typeName)) {
    return undefined;
  }
  for (const key of Object.keys(json)) {
    const field = desc.fields.find((f) => f.jsonName === key || f.name === key);
    const path = prefix ? `${prefix}.${key}` : key;
    if (!field) return path;
    const message = field.message;
    if (!message || message.typeName.startsWith("google.protobuf.")) continue;
    const value = json[key];
    if (field.fieldKind === "list" && Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const found = findUnknownField(message, value[i] ?? null, `${path}[${i}]`);
        if (found) return found;
      }
    } else if (field.fieldKind === "map" && value && typeof value === "object" && !Array.isArray(value)) {
      for (const k of Object.keys(value)) {
        const found = findUnknownField(message, value[k] ?? null, `${path}[${JSON.stringify(k)}]`);
        if (found) return found;
      }
    } else if (field.fieldKind === "message") {
      const found = findUnknownField(message, value ?? null, path);
      if (found) return found;
    }
  }
  return undefined;
}
