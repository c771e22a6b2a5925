// Converts the text of a path variable or query parameter into the value of a request field:
// scalars, enums (by name or number), and the well-known message types whose JSON form is a
// string (Timestamp, Duration, FieldMask, wrappers).
import { create, fromJson, ScalarType, type DescEnum, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { FieldMaskSchema } from "@bufbuild/protobuf/wkt";

/** Throws ValueError with a description of what is wrong with the text. */
export type ValueParser = (text: string) => unknown;

export class ValueError extends Error {}

const int32Pattern = /^-?\d+$/;
const base64Pattern = /^[A-Za-z0-9+/\-_]*={0,2}$/;

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const UINT32_MAX = 2 ** 32 - 1;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

function integer(text: string, min: number, max: number, what: string): number {
  if (!int32Pattern.test(text)) throw new ValueError(`"${text}" is not ${what}`);
  const n = Number(text);
  if (n < min || n > max) throw new ValueError(`"${text}" is out of range for ${what}`);
  return n;
}

function long(text: string, min: bigint, max: bigint, what: string, asString: boolean): bigint | string {
  if (!int32Pattern.test(text)) throw new ValueError(`"${text}" is not ${what}`);
  const n = BigInt(text);
  if (n < min || n > max) throw new ValueError(`"${text}" is out of range for ${what}`);
  return asString ? n.toString() : n;
}

function float(text: string, single: boolean): number {
  if (text === "NaN") return NaN;
  if (text === "Infinity") return Infinity;
  if (text === "-Infinity") return -Infinity;
  const n = text.trim() === "" ? NaN : Number(text);
  if (!Number.isFinite(n)) throw new ValueError(`"${text}" is not a number`);
  if (single && Math.abs(n) > 3.4028234663852886e38) throw new ValueError(`"${text}" is out of range for float`);
  return n;
}

export function scalarParser(scalar: ScalarType, longAsString: boolean): ValueParser {
  switch (scalar) {
    case ScalarType.STRING:
      return (text) => text;
    case ScalarType.BOOL:
      return (text) => {
        const t = text.toLowerCase();
        if (t === "true" || t === "1") return true;
        if (t === "false" || t === "0") return false;
        throw new ValueError(`"${text}" is not a boolean (true or false)`);
      };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return (text) => integer(text, INT32_MIN, INT32_MAX, "an int32");
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return (text) => integer(text, 0, UINT32_MAX, "a uint32");
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return (text) => long(text, INT64_MIN, INT64_MAX, "an int64", longAsString);
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return (text) => long(text, 0n, UINT64_MAX, "a uint64", longAsString);
    case ScalarType.DOUBLE:
      return (text) => float(text, false);
    case ScalarType.FLOAT:
      return (text) => float(text, true);
    case ScalarType.BYTES:
      return (text) => {
        if (!base64Pattern.test(text)) throw new ValueError(`"${text}" is not base64`);
        return base64Decode(text);
      };
  }
}

export function enumParser(desc: DescEnum): ValueParser {
  const byName = new Map<string, number>();
  const numbers = new Set<number>();
  for (const v of desc.values) {
    byName.set(v.name, v.number);
    numbers.add(v.number);
  }
  return (text) => {
    const named = byName.get(text);
    if (named !== undefined) return named;
    if (int32Pattern.test(text) && numbers.has(Number(text))) return Number(text);
    throw new ValueError(`"${text}" is not a value of ${desc.typeName}`);
  };
}

const wrapperScalars: Record<string, ScalarType> = {
  "google.protobuf.DoubleValue": ScalarType.DOUBLE,
  "google.protobuf.FloatValue": ScalarType.FLOAT,
  "google.protobuf.Int64Value": ScalarType.INT64,
  "google.protobuf.UInt64Value": ScalarType.UINT64,
  "google.protobuf.Int32Value": ScalarType.INT32,
  "google.protobuf.UInt32Value": ScalarType.UINT32,
  "google.protobuf.BoolValue": ScalarType.BOOL,
  "google.protobuf.StringValue": ScalarType.STRING,
  "google.protobuf.BytesValue": ScalarType.BYTES,
};

/** The parser of a message type that has a string form, or undefined when it has none. */
export function messageParser(desc: DescMessage): ValueParser | undefined {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
    case "google.protobuf.Duration":
      return (text) => {
        try {
          return fromJson(desc, text);
        } catch {
          const form = desc.typeName.endsWith("Timestamp") ? "an RFC 3339 time" : 'a duration like "3600s"';
          throw new ValueError(`"${text}" is not ${form}`);
        }
      };
    case "google.protobuf.FieldMask":
      // Paths stay exactly as sent (snake_case, case-sensitive): the services judge them.
      return (text) => create(FieldMaskSchema, { paths: fieldMaskPaths(text) });
  }
  const wrapped = wrapperScalars[desc.typeName];
  if (wrapped === undefined) return undefined;
  const inner = scalarParser(wrapped, false);
  return (text) => create(desc, { value: inner(text) } as never);
}

export function fieldMaskPaths(text: string): string[] {
  return text === "" ? [] : text.split(",");
}

/** The parser of a singular or repeated field's element, or undefined when it takes no text. */
export function fieldParser(field: DescField): ValueParser | undefined {
  switch (field.fieldKind) {
    case "scalar":
      return scalarParser(field.scalar, field.longAsString);
    case "enum":
      return enumParser(field.enum);
    case "message": {
      // protobuf-es holds singular wrapper fields unboxed, as the plain scalar.
      const wrapped = wrapperScalars[field.message.typeName];
      return wrapped === undefined ? messageParser(field.message) : scalarParser(wrapped, false);
    }
    case "list":
      if (field.listKind === "scalar") return scalarParser(field.scalar, field.longAsString);
      if (field.listKind === "enum") return enumParser(field.enum);
      return messageParser(field.message);
    case "map":
      return undefined;
  }
}
