// Builds the request message of one HTTP rule from the body, the path variables and the query
// string. Everything that depends only on the rule (field lookups, value parsers, which fields
// the path and body take) is worked out once in createRequestPlan; buildRequest only applies it.
import {
  create,
  type DescField,
  type DescMessage,
  type DescMethod,
  type JsonValue,
  type Registry,
} from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import { messageFromJson } from "./bytes-json.js";
import { ValueError, enumParser, fieldParser, messageParser, scalarParser, type ValueParser } from "./field-values.js";
import {
  containsFieldMask,
  extractFieldMasks,
  findUnknownField,
  restoreFieldMasks,
  type ExtractedMask,
} from "./json-body.js";
import type { PathTemplate } from "./path-template.js";
import { badRequest, badRequests, type Violation } from "./status.js";

type Message = Record<string, unknown>;

export type BodyPlan =
  | { readonly kind: "none" }
  | { readonly kind: "all"; readonly masks: boolean }
  | { readonly kind: "field"; readonly field: DescField; readonly masks: boolean };

interface PathSetter {
  readonly name: string;
  readonly fields: readonly DescField[];
  readonly parse: ValueParser;
  readonly start: number;
  /** Index one past the variable's last URL segment; -1 when it runs to the end (`**`). */
  readonly end: number;
  readonly multiSegment: boolean;
}

interface QueryTarget {
  readonly canonical: string;
  readonly fields: readonly DescField[];
  readonly leaf: DescField;
  readonly parse: ValueParser;
  readonly keyParse: ValueParser | undefined;
}

type Resolution = { readonly target: QueryTarget; readonly key: string | undefined } | { readonly error: string };

export interface RequestPlan {
  readonly input: DescMessage;
  readonly body: BodyPlan;
  readonly pathSetters: readonly PathSetter[];
  /** Undefined when the body takes the whole request and no query parameter is allowed. */
  readonly resolveQuery: ((name: string) => Resolution) | undefined;
}

const fieldIndexCache = new WeakMap<DescMessage, Map<string, DescField>>();

/** A message's fields by proto name and by JSON name; query names may use either. */
function fieldIndex(desc: DescMessage): Map<string, DescField> {
  let index = fieldIndexCache.get(desc);
  if (!index) {
    index = new Map();
    for (const f of desc.fields) {
      index.set(f.name, f);
      index.set(f.jsonName, f);
    }
    fieldIndexCache.set(desc, index);
  }
  return index;
}

function resolveProtoPath(input: DescMessage, path: readonly string[], what: string): DescField[] {
  const fields: DescField[] = [];
  let desc: DescMessage | undefined = input;
  for (const name of path) {
    const field: DescField | undefined = desc?.fields.find((f) => f.name === name);
    if (!field) throw new Error(`${what}: ${input.typeName} has no field ${path.join(".")}`);
    fields.push(field);
    desc = field.fieldKind === "message" ? field.message : undefined;
  }
  return fields;
}

export function createRequestPlan(method: DescMethod, template: PathTemplate, bodySpec: string): RequestPlan {
  const input = method.input;
  const where = `${method.parent.typeName}.${method.name} (${template.source})`;

  let body: BodyPlan;
  if (bodySpec === "") body = { kind: "none" };
  else if (bodySpec === "*") body = { kind: "all", masks: containsFieldMask(input) };
  else {
    const field = input.fields.find((f) => f.name === bodySpec);
    if (!field) throw new Error(`${where}: body field "${bodySpec}" does not exist`);
    const masks =
      field.fieldKind === "message" &&
      (field.message.typeName === "google.protobuf.FieldMask" || containsFieldMask(field.message));
    body = { kind: "field", field, masks };
  }

  const pathSetters: PathSetter[] = template.variables.map((v) => {
    const fields = resolveProtoPath(input, v.fieldPath, where);
    const leaf = fields[fields.length - 1]!;
    const parse = leaf.fieldKind === "list" || leaf.fieldKind === "map" ? undefined : fieldParser(leaf);
    if (!parse) throw new Error(`${where}: path field ${v.fieldPath.join(".")} cannot take a path segment`);
    const runsToEnd = template.segments[v.end - 1]?.kind === "dstar";
    return {
      name: v.fieldPath.join("."),
      fields,
      parse,
      start: v.start,
      end: runsToEnd ? -1 : v.end,
      multiSegment: v.multiSegment,
    };
  });

  const bound = pathSetters.map((p) => p.name);
  if (body.kind === "field") bound.push(body.field.name);
  const resolveQuery = body.kind === "all" ? undefined : createQueryResolver(input, bound);
  return { input, body, pathSetters, resolveQuery };
}

const MEMO_LIMIT = 512;

function createQueryResolver(input: DescMessage, bound: readonly string[]): (name: string) => Resolution {
  const memo = new Map<string, Resolution>();
  return (name) => {
    const hit = memo.get(name);
    if (hit) return hit;
    const resolved = resolveQueryName(input, bound, name);
    // Only remember good names: junk names must not grow the memo.
    if (!("error" in resolved) && memo.size < MEMO_LIMIT) memo.set(name, resolved);
    return resolved;
  };
}

function resolveQueryName(input: DescMessage, bound: readonly string[], name: string): Resolution {
  let path = name;
  let key: string | undefined;
  const bracket = name.indexOf("[");
  if (bracket >= 0) {
    if (!name.endsWith("]")) return { error: "unknown query parameter" };
    key = name.slice(bracket + 1, -1);
    path = name.slice(0, bracket);
  }
  const fields: DescField[] = [];
  let desc: DescMessage = input;
  const parts = path.split(".");
  for (let i = 0; i < parts.length; i++) {
    const field = fieldIndex(desc).get(parts[i]!);
    if (!field) return { error: "unknown query parameter" };
    fields.push(field);
    if (i < parts.length - 1) {
      // Only plain singular messages can be walked into; well-known types are leaves.
      if (field.fieldKind !== "message" || field.message.typeName.startsWith("google.protobuf.")) {
        return { error: "unknown query parameter" };
      }
      desc = field.message;
    }
  }
  const leaf = fields[fields.length - 1]!;
  const canonical = fields.map((f) => f.name).join(".");
  for (const b of bound) {
    if (canonical === b || canonical.startsWith(`${b}.`)) {
      return { error: "is set by the URL path or the request body and cannot be a query parameter" };
    }
  }
  if (leaf.fieldKind === "map") {
    if (key === undefined) return { error: `is a map; set an entry as ${path}[key]=value` };
    const parse =
      leaf.mapKind === "scalar"
        ? scalarParser(leaf.scalar, false)
        : leaf.mapKind === "enum"
          ? enumParser(leaf.enum)
          : messageParser(leaf.message);
    if (!parse) return { error: "cannot be set from a query parameter" };
    return { target: { canonical, fields, leaf, parse, keyParse: scalarParser(leaf.mapKey, false) }, key };
  }
  if (key !== undefined) return { error: "is not a map" };
  const parse = fieldParser(leaf);
  if (!parse) return { error: "cannot be set from a query parameter" };
  return { target: { canonical, fields, leaf, parse, keyParse: undefined }, key: undefined };
}

/** Walks to (creating as needed) the message holding the last field of `fields`. */
function parentOf(message: Message, fields: readonly DescField[]): Message {
  let m = message;
  for (let i = 0; i < fields.length - 1; i++) {
    const f = fields[i]!;
    if (f.oneof) {
      const slot = m[f.oneof.localName] as { case: string | undefined; value?: Message };
      if (slot.case !== f.localName) m[f.oneof.localName] = { case: f.localName, value: create(f.message!) };
      m = (m[f.oneof.localName] as { value: Message }).value;
    } else {
      let next = m[f.localName] as Message | undefined;
      if (next === undefined) m[f.localName] = next = create(f.message!) as Message;
      m = next;
    }
  }
  return m;
}

/** Sets a singular field; false when another field of the same oneof is already set. */
function setSingular(parent: Message, field: DescField, value: unknown): boolean {
  if (field.oneof) {
    const slot = parent[field.oneof.localName] as { case: string | undefined };
    if (slot.case !== undefined && slot.case !== field.localName) return false;
    parent[field.oneof.localName] = { case: field.localName, value };
  } else {
    parent[field.localName] = value;
  }
  return true;
}

function decodeComponent(raw: string): string {
  return raw.includes("%") ? decodeURIComponent(raw) : raw;
}

// http.proto: a multi-segment variable is decoded except for %2F, which stays as sent.
function decodeKeepingSlash(raw: string): string {
  if (!raw.includes("%")) return raw;
  const parts = raw.split(/(%2[fF])/);
  for (let i = 0; i < parts.length; i += 2) parts[i] = decodeURIComponent(parts[i]!);
  return parts.join("");
}

function decodeForm(raw: string): string {
  const spaced = raw.includes("+") ? raw.replaceAll("+", " ") : raw;
  return decodeComponent(spaced);
}

function parseBodyJson(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch (e) {
    throw badRequest("", `malformed JSON in the request body: ${(e as Error).message}`);
  }
}

function parseMessage(
  desc: DescMessage,
  json: JsonValue,
  bodyDesc: DescMessage | undefined,
  bodyJson: JsonValue,
  registry: Registry | undefined,
): Message {
  try {
    return messageFromJson(desc, json, { registry });
  } catch (e) {
    const unknown = bodyDesc ? findUnknownField(bodyDesc, bodyJson) : undefined;
    if (unknown) throw badRequest(unknown, "unknown field in the request body");
    throw badRequest("", `invalid request body: ${(e as Error).message}`);
  }
}

function isBlank(text: string): boolean {
  return text.trim() === "";
}

/**
 * The request message of one call. `segments` are the matched raw URL path segments (verb
 * removed), `query` the raw query string without "?", `bodyText` the request body.
 */
export function buildRequest(
  plan: RequestPlan,
  segments: readonly string[],
  query: string,
  bodyText: string,
  registry: Registry | undefined,
): Message {
  let message: Message;
  const body = plan.body;
  if (body.kind === "none") {
    const trimmed = bodyText.trim();
    if (trimmed !== "" && trimmed !== "{}") throw badRequest("", "this method takes no request body");
    message = create(plan.input) as Message;
  } else if (isBlank(bodyText)) {
    message = create(plan.input) as Message;
  } else {
    const json = parseBodyJson(bodyText);
    let masks: ExtractedMask[] = [];
    if (body.kind === "all") {
      if (json === null || typeof json !== "object" || Array.isArray(json)) {
        throw badRequest("", "the request body must be a JSON object");
      }
      if (body.masks) masks = extractFieldMasks(plan.input, json);
      message = parseMessage(plan.input, json, plan.input, json, registry);
    } else {
      const field = body.field;
      const bodyDesc = field.fieldKind === "message" ? field.message : undefined;
      if (bodyDesc && (json === null || typeof json !== "object" || Array.isArray(json))) {
        // A FieldMask body field has a string form; every other message body is an object.
        if (bodyDesc.typeName !== "google.protobuf.FieldMask" || typeof json !== "string") {
          throw badRequest("", "the request body must be a JSON object");
        }
      }
      const wrapped = { [field.jsonName]: json };
      if (body.masks) masks = extractFieldMasks(plan.input, wrapped);
      message = parseMessage(plan.input, wrapped, bodyDesc, json, registry);
    }
    if (masks.length > 0) restoreFieldMasks(message, masks);
  }

  for (const setter of plan.pathSetters) {
    const end = setter.end < 0 ? segments.length : setter.end;
    let value: string;
    try {
      value = setter.multiSegment
        ? decodeKeepingSlash(segments.slice(setter.start, end).join("/"))
        : decodeComponent(segments[setter.start]!);
    } catch {
      throw badRequest(setter.name, "malformed percent-encoding in the URL path");
    }
    let parsed: unknown;
    try {
      parsed = setter.parse(value);
    } catch (e) {
      throw badRequest(setter.name, (e as Error).message);
    }
    setSingular(parentOf(message, setter.fields), setter.fields[setter.fields.length - 1]!, parsed);
  }

  if (query !== "") applyQuery(plan, message, query);
  return message;
}

function applyQuery(plan: RequestPlan, message: Message, query: string): void {
  const violations: Violation[] = [];
  const seen = new Set<string>();
  for (const pair of query.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    let name: string;
    let text: string;
    try {
      name = decodeForm(eq < 0 ? pair : pair.slice(0, eq));
      text = eq < 0 ? "" : decodeForm(pair.slice(eq + 1));
    } catch {
      violations.push({
        field: pair.slice(0, eq < 0 ? undefined : eq),
        description: "malformed percent-encoding in the query string",
      });
      continue;
    }
    if (!plan.resolveQuery) {
      violations.push({
        field: name,
        description: "unknown query parameter: this method takes the whole request in the body",
      });
      continue;
    }
    const resolved = plan.resolveQuery(name);
    if ("error" in resolved) {
      violations.push({ field: name, description: resolved.error });
      continue;
    }
    const problem = applyQueryValue(message, resolved.target, resolved.key, text, seen);
    if (problem) violations.push({ field: name, description: problem });
  }
  if (violations.length > 0) throw badRequests(violations) satisfies ConnectError;
}

function applyQueryValue(
  message: Message,
  target: QueryTarget,
  key: string | undefined,
  text: string,
  seen: Set<string>,
): string | undefined {
  let value: unknown;
  try {
    value = target.parse(text);
  } catch (e) {
    if (e instanceof ValueError) return e.message;
    throw e;
  }
  const parent = parentOf(message, target.fields);
  const leaf = target.leaf;
  if (leaf.fieldKind === "list") {
    (parent[leaf.localName] as unknown[]).push(value);
    return undefined;
  }
  if (leaf.fieldKind === "map") {
    let mapKey: string;
    try {
      mapKey = String(target.keyParse!(key!));
    } catch (e) {
      if (e instanceof ValueError) return `map key ${e.message}`;
      throw e;
    }
    const map = parent[leaf.localName] as Record<string, unknown>;
    if (Object.hasOwn(map, mapKey)) return "map key given more than once";
    map[mapKey] = value;
    return undefined;
  }
  if (seen.has(target.canonical)) return "given more than once";
  seen.add(target.canonical);
  if (!setSingular(parent, leaf, value)) return `another field of the oneof "${leaf.oneof!.name}" is already set`;
  return undefined;
}
