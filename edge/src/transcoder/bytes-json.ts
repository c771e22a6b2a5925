// protobuf-es converts `bytes` fields to and from base64 one byte at a time in JavaScript, which
// makes a file read or a stream of process output through REST run at a few MB/s. Here the
// bytes fields of a message are taken out around toJson/fromJson and converted with Node's own
// base64 (native code), giving exactly the JSON protobuf-es would: standard alphabet, padded.
// Decoding takes the fast path only for the canonical form (what toJson itself writes); anything
// else (base64url, no padding, white space, invalid characters) is left to fromJson, so its
// acceptance rules and its error messages stay as they are.
import { randomUUID } from "node:crypto";
import {
  ScalarType,
  fromJson,
  toJson,
  type DescField,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type JsonReadOptions,
  type JsonWriteOptions,
} from "@bufbuild/protobuf";
import { createFieldPlan } from "./field-plan.js";

type Message = Record<string, unknown>;
type Key = string | number;

/** A bytes field, or a message field that can contain one, of one message type. */
interface BytesField {
  readonly field: DescField;
  /** Set when the field holds messages (singular, list or map values) to walk into. */
  readonly message: DescMessage | undefined;
}

function isBytes(field: DescField): boolean {
  return (field.fieldKind === "scalar" || field.fieldKind === "list") && field.scalar === ScalarType.BYTES;
}

// Well-known types have JSON forms of their own (BytesValue is a bare string, Any embeds
// another message): they are left to protobuf-es.
function walkable(field: DescField): DescMessage | undefined {
  const message =
    field.fieldKind === "message" || field.fieldKind === "list" || field.fieldKind === "map"
      ? field.message
      : undefined;
  return message && !message.typeName.startsWith("google.protobuf.") ? message : undefined;
}

/** The fields of a message type that are bytes or lead to bytes. */
const bytesPlan = createFieldPlan<BytesField>((field, planOf) => {
  if (isBytes(field)) return { field, message: undefined };
  const message = walkable(field);
  return message && planOf(message).length > 0 ? { field, message } : undefined;
});

export function hasBytesFields(desc: DescMessage): boolean {
  return bytesPlan(desc).length > 0;
}

// Stands in for a value during toJson: one byte, so that it is written even where empty values
// are left out, and cheap to encode.
const PLACEHOLDER = new Uint8Array(1);

/** Standard padded base64, as protobuf-es writes it, by Node's encoder. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

// Bytes per base64 text written to a response: a multiple of 3, so the texts join into one
// base64 value, and small enough (64 KiB of text) for V8 to allocate in the young generation,
// where a dead string costs nothing. Texts of MiBs go to its large-object space, and a 64 MiB
// file read as 3 MiB texts spent as much CPU in mark-compact collections as in everything else.
const BASE64_TEXT_BYTES = 48 << 10;

/**
 * `bytes` as base64 texts of a bounded size (see above), to be written one after another with the
 * "latin1" encoding: base64 is ASCII, so the socket takes the text as it is, with no UTF-8 pass.
 */
export function* base64Texts(bytes: Uint8Array): Generator<string> {
  for (let at = 0; at < bytes.length; at += BASE64_TEXT_BYTES)
    yield encodeBase64(bytes.subarray(at, at + BASE64_TEXT_BYTES));
}

/**
 * Decodes canonical base64 (standard alphabet, padded, nothing else); undefined for any other
 * text, which protobuf-es's decoder then handles (or rejects) by its own rules.
 */
export function decodeCanonicalBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0) return undefined;
  const decoded = Buffer.from(text, "base64");
  // Node skips what it cannot read; only a string that is exactly the encoding of the result
  // was canonical.
  if (decoded.toString("base64") !== text) return undefined;
  // Small results share Node's buffer pool; a message keeps bytes of its own.
  return decoded.length < 4096
    ? new Uint8Array(decoded)
    : new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.length);
}

/** Where a value is in the message, and where its JSON goes. */
interface Swap {
  readonly holder: Record<Key, unknown>;
  readonly key: Key;
  readonly original: unknown;
  readonly jsonPath: readonly Key[];
}

/**
 * Bytes values of a JSON text that are written in pieces rather than made into one string: each
 * stands in the JSON as `marker(i)` (inside its quotes) until `jsonPieces` puts it back.
 */
export interface LargeBytes {
  readonly values: Uint8Array[];
  readonly marker: (index: number) => string;
  readonly pattern: RegExp;
}

/** Values from this size on are left out of the JSON string, for `jsonPieces`. */
export const LARGE_BYTES = 64 << 10;

export function largeBytes(): LargeBytes {
  // Random per response, so no string value of the message can pass for one.
  const token = `aiem-bytes-${randomUUID()}`;
  return { values: [], marker: (i) => `@${token}:${i}@`, pattern: new RegExp(`@${token}:(\\d+)@`, "g") };
}

/** A JSON text in order: text, and bytes to be written there as base64 (inside their quotes). */
export type JsonPiece = string | Uint8Array;

/** Splits a JSON text written with `large` at its markers. */
export function jsonPieces(text: string, large: LargeBytes): JsonPiece[] {
  if (large.values.length === 0) return [text];
  const pieces: JsonPiece[] = [];
  let last = 0;
  for (const m of text.matchAll(large.pattern)) {
    pieces.push(text.slice(last, m.index), large.values[Number(m[1])]!);
    last = m.index + m[0].length;
  }
  pieces.push(text.slice(last));
  return pieces;
}

/** The length of a JSON piece as written: UTF-8 text, or the padded base64 of the bytes. */
export function pieceLength(piece: JsonPiece): number {
  return typeof piece === "string" ? Buffer.byteLength(piece) : 4 * Math.ceil(piece.length / 3);
}

/**
 * toJson, with the bytes fields encoded by Node. The message is left as it was. With `large`,
 * single values of at least LARGE_BYTES are left as markers for `jsonPieces`.
 */
export function messageToJson(
  desc: DescMessage,
  message: unknown,
  options?: Partial<JsonWriteOptions>,
  large?: LargeBytes,
): JsonValue {
  if (bytesPlan(desc).length === 0) return toJson(desc, message as never, options);
  const swaps: Swap[] = [];
  collect(desc, message as Message, [], swaps);
  let json: JsonValue;
  try {
    json = toJson(desc, message as never, options);
  } finally {
    for (const s of swaps) s.holder[s.key] = s.original;
  }
  for (const s of swaps) {
    const parent = at(json, s.jsonPath.slice(0, -1));
    const key = s.jsonPath[s.jsonPath.length - 1]!;
    // Absent when toJson left the field out (an unset optional, or implicit values not emitted).
    if (parent === undefined || !(key in parent)) continue;
    const value = s.original;
    (parent as Record<Key, JsonValue>)[key] = Array.isArray(value)
      ? value.map((b: Uint8Array) => encodeBase64(b))
      : large && (value as Uint8Array).length >= LARGE_BYTES
        ? large.marker(large.values.push(value as Uint8Array) - 1)
        : encodeBase64(value as Uint8Array);
  }
  return json;
}

function at(json: JsonValue, path: readonly Key[]): object | undefined {
  let v: unknown = json;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<Key, unknown>)[k];
  }
  return v !== null && typeof v === "object" ? v : undefined;
}

/** Where a field's value lives: in the message, or in the oneof slot when it is a member of one. */
function slotOf(message: Message, field: DescField): { holder: Record<Key, unknown>; key: Key } | undefined {
  if (!field.oneof) return { holder: message, key: field.localName };
  const slot = message[field.oneof.localName] as { case: string | undefined; value?: unknown } | undefined;
  return slot?.case === field.localName ? { holder: slot as Record<Key, unknown>, key: "value" } : undefined;
}

function collect(desc: DescMessage, message: Message, path: readonly Key[], swaps: Swap[]): void {
  for (const { field, message: nested } of bytesPlan(desc)) {
    const slot = slotOf(message, field);
    if (!slot) continue;
    const value = slot.holder[slot.key];
    if (value === undefined || value === null) continue;
    const here = [...path, field.jsonName];
    if (!nested) {
      // Empty values are cheap as they are; the others are swapped for placeholders.
      if (field.fieldKind === "list" ? (value as unknown[]).length === 0 : (value as Uint8Array).length === 0) continue;
      swaps.push({ holder: slot.holder, key: slot.key, original: value, jsonPath: here });
      slot.holder[slot.key] = field.fieldKind === "list" ? (value as unknown[]).map(() => PLACEHOLDER) : PLACEHOLDER;
    } else if (field.fieldKind === "list") {
      for (const [i, m] of (value as Message[]).entries()) collect(nested, m, [...here, i], swaps);
    } else if (field.fieldKind === "map") {
      for (const [k, m] of Object.entries(value as Record<string, Message>)) collect(nested, m, [...here, k], swaps);
    } else {
      collect(nested, value as Message, here, swaps);
    }
  }
}

/** A decoded bytes value and where it goes once fromJson has built the message. */
interface Decoded {
  readonly steps: readonly { readonly field: DescField; readonly key: Key | undefined }[];
  readonly value: Uint8Array | Uint8Array[];
}

/**
 * fromJson, with canonical base64 in bytes fields decoded by Node. Values are taken out of the
 * JSON (replaced by "") before fromJson and put into the message afterwards; `json` is changed.
 */
export function messageFromJson(desc: DescMessage, json: JsonValue, options?: Partial<JsonReadOptions>): Message {
  const decoded: Decoded[] = [];
  if (bytesPlan(desc).length > 0) take(desc, json, [], decoded);
  const message = fromJson(desc, json, options) as Message;
  for (const d of decoded) put(message, d);
  return message;
}

function keyOf(obj: JsonObject, field: DescField): string | undefined {
  if (field.jsonName in obj) return field.jsonName;
  if (field.name in obj) return field.name;
  return undefined;
}

function take(desc: DescMessage, json: JsonValue, steps: Decoded["steps"], out: Decoded[]): void {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return;
  for (const { field, message: nested } of bytesPlan(desc)) {
    const key = keyOf(json, field);
    if (key === undefined) continue;
    const value = json[key];
    if (!nested) {
      if (field.fieldKind === "list") {
        if (!Array.isArray(value) || value.length === 0) continue;
        const all = value.map((v) => (typeof v === "string" ? decodeCanonicalBase64(v) : undefined));
        // All or none: a list with one odd element is left whole to fromJson.
        if (all.some((b) => b === undefined)) continue;
        out.push({ steps: [...steps, { field, key: undefined }], value: all as Uint8Array[] });
        json[key] = [];
      } else if (typeof value === "string" && value !== "") {
        const bytes = decodeCanonicalBase64(value);
        if (!bytes) continue;
        out.push({ steps: [...steps, { field, key: undefined }], value: bytes });
        json[key] = "";
      }
    } else if (field.fieldKind === "list") {
      if (Array.isArray(value))
        for (const [i, v] of value.entries()) take(nested, v, [...steps, { field, key: i }], out);
    } else if (field.fieldKind === "map") {
      if (value !== null && typeof value === "object" && !Array.isArray(value)) {
        for (const k of Object.keys(value)) take(nested, value[k] ?? null, [...steps, { field, key: k }], out);
      }
    } else if (value !== undefined) {
      take(nested, value, [...steps, { field, key: undefined }], out);
    }
  }
}

function put(message: Message, decoded: Decoded): void {
  let target: unknown = message;
  const last = decoded.steps.length - 1;
  for (let i = 0; i <= last; i++) {
    const { field, key } = decoded.steps[i]!;
    const slot = slotOf(target as Message, field);
    if (!slot) return;
    if (i === last) {
      slot.holder[slot.key] = decoded.value;
      return;
    }
    target = slot.holder[slot.key];
    if (key !== undefined) target = (target as Record<Key, unknown>)[key];
    if (target === undefined || target === null) return;
  }
}
