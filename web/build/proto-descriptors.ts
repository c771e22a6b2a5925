// Reads the descriptor image with comments (proto/gen/image.binpb) and answers the questions the
// API reference asks of it: comments, field behaviours, HTTP bindings, resource patterns.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import {
  createFileRegistry,
  fromBinary,
  getOption,
  ScalarType,
  type DescEnum,
  type DescEnumValue,
  type DescField,
  type DescFile,
  type DescMessage,
  type DescMethod,
  type DescService,
  type FileRegistry,
} from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { http } from "@aiem/proto/google/api/annotations_pb.js";
import { field_behavior, FieldBehavior } from "@aiem/proto/google/api/field_behavior_pb.js";
import type { HttpRule } from "@aiem/proto/google/api/http_pb.js";
import { resource, resource_reference } from "@aiem/proto/google/api/resource_pb.js";

const require = createRequire(import.meta.url);

export function descriptorImagePath(): string {
  return require.resolve("@aiem/proto/image.binpb");
}

export function loadDescriptorRegistry(path = descriptorImagePath()): FileRegistry {
  return createFileRegistry(fromBinary(FileDescriptorSetSchema, readFileSync(path)));
}

export type Documented = DescService | DescMethod | DescMessage | DescField | DescEnum | DescEnumValue;

// Source locations are addressed by paths of field numbers and indexes in FileDescriptorProto:
// 4 message_type, 5 enum_type, 6 service; inside a message 2 field, 3 nested_type, 4 enum_type;
// inside an enum 2 value; inside a service 2 method.
function locationPath(desc: Documented): number[] {
  switch (desc.kind) {
    case "service":
      return [6, desc.file.proto.service.indexOf(desc.proto)];
    case "rpc":
      return [...locationPath(desc.parent), 2, desc.parent.proto.method.indexOf(desc.proto)];
    case "message":
      return desc.parent
        ? [...locationPath(desc.parent), 3, desc.parent.proto.nestedType.indexOf(desc.proto)]
        : [4, desc.file.proto.messageType.indexOf(desc.proto)];
    case "enum":
      return desc.parent
        ? [...locationPath(desc.parent), 4, desc.parent.proto.enumType.indexOf(desc.proto)]
        : [5, desc.file.proto.enumType.indexOf(desc.proto)];
    case "field":
      return [...locationPath(desc.parent), 2, desc.parent.proto.field.indexOf(desc.proto)];
    case "enum_value":
      return [...locationPath(desc.parent), 2, desc.parent.proto.value.indexOf(desc.proto)];
  }
}

const commentIndex = new WeakMap<DescFile, Map<string, string>>();

/** The leading comment of a declaration, with the comment markers' indentation removed. */
export function commentOf(desc: Documented): string {
  const file =
    desc.kind === "field" || desc.kind === "enum_value" || desc.kind === "rpc" ? desc.parent.file : desc.file;
  let index = commentIndex.get(file);
  if (!index) {
    index = new Map();
    for (const loc of file.proto.sourceCodeInfo?.location ?? []) {
      if (loc.leadingComments) index.set(loc.path.join("."), loc.leadingComments);
    }
    commentIndex.set(file, index);
  }
  const raw = index.get(locationPath(desc).join(".")) ?? "";
  return raw
    .split("\n")
    .map((l) => l.replace(/^ /, "").trimEnd())
    .join("\n")
    .trim();
}

export type Behavior =
  | "REQUIRED"
  | "OUTPUT_ONLY"
  | "INPUT_ONLY"
  | "IMMUTABLE"
  | "OPTIONAL"
  | "IDENTIFIER"
  | "UNORDERED_LIST"
  | "NON_EMPTY_DEFAULT";

export function behaviorsOf(field: DescField): Behavior[] {
  return getOption(field, field_behavior)
    .filter((b) => b !== FieldBehavior.FIELD_BEHAVIOR_UNSPECIFIED)
    .map((b) => FieldBehavior[b] as Behavior);
}

export interface HttpBinding {
  verb: "GET" | "POST" | "PATCH" | "PUT" | "DELETE" | string;
  path: string;
  body: string;
}

export function bindingsOf(method: DescMethod): HttpBinding[] {
  const flatten = (rule: HttpRule): HttpBinding[] => {
    const { case: verb, value } = rule.pattern;
    const own: HttpBinding[] =
      verb === undefined
        ? []
        : [
            verb === "custom"
              ? { verb: value.kind.toUpperCase(), path: value.path, body: rule.body }
              : { verb: verb.toUpperCase(), path: value, body: rule.body },
          ];
    return [...own, ...rule.additionalBindings.flatMap(flatten)];
  };
  return flatten(getOption(method, http));
}

export function resourcePatternOf(message: DescMessage): { type: string; patterns: string[] } | undefined {
  const res = getOption(message, resource);
  return res.type ? { type: res.type, patterns: res.pattern } : undefined;
}

export function resourceReferenceOf(field: DescField): { type: string; childType: string } | undefined {
  const ref = getOption(field, resource_reference);
  return ref.type || ref.childType ? { type: ref.type, childType: ref.childType } : undefined;
}

const scalarNames: Record<number, string> = {
  [ScalarType.DOUBLE]: "double",
  [ScalarType.FLOAT]: "float",
  [ScalarType.INT64]: "int64",
  [ScalarType.UINT64]: "uint64",
  [ScalarType.INT32]: "int32",
  [ScalarType.FIXED64]: "fixed64",
  [ScalarType.FIXED32]: "fixed32",
  [ScalarType.BOOL]: "bool",
  [ScalarType.STRING]: "string",
  [ScalarType.BYTES]: "bytes",
  [ScalarType.UINT32]: "uint32",
  [ScalarType.SFIXED32]: "sfixed32",
  [ScalarType.SFIXED64]: "sfixed64",
  [ScalarType.SINT32]: "sint32",
  [ScalarType.SINT64]: "sint64",
};

export function scalarName(type: ScalarType): string {
  return scalarNames[type] ?? "unknown";
}

/** 64-bit integers travel as strings in JSON; bytes as base64. */
export function jsonNoteOf(type: ScalarType): string | undefined {
  if (
    [ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64].includes(type)
  ) {
    return "string in JSON";
  }
  if (type === ScalarType.BYTES) return "base64 in JSON";
  return undefined;
}
