// Turns protoc-gen-openapiv2's document into the one the edge serves. The generator knows the
// protos but not our wire format, so what it cannot say is added here from the descriptors and
// the server's own rules: unset Timestamp/Duration fields are sent as `null`
// (edge/src/transcoder/unpopulated.ts), path ids follow the services' id rules, 64-bit integers
// and durations are strings of a fixed form, the server-streaming methods answer
// newline-delimited JSON, errors get the edge's HTTP statuses, and every call needs a token.
import { getOption, type DescMessage, type DescMethod, type Registry } from "@bufbuild/protobuf";
import { http } from "@aiem/proto/google/api/annotations_pb.js";
import { Code } from "@connectrpc/connect";
import { ID_PATTERNS } from "@aiem/kit/aip";
import { httpStatusOf } from "../../edge/src/transcoder/status.js";
import { emitsNullWhenUnset } from "../../edge/src/transcoder/unpopulated.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export interface ShapeOptions {
  readonly registry: Registry;
  readonly version: string;
}

export const NDJSON = "application/x-ndjson";

/** A shaped copy of the generated Swagger 2.0 document; the input is left as it was. */
export function shapeOpenApi(generated: JsonObject, options: ShapeOptions): JsonObject {
  const doc = structuredClone(generated);
  doc.info = {
    title: "AI Engine Manager",
    version: options.version,
    description:
      "The REST API of AI Engine Manager, generated from its protos. JSON bodies follow the protobuf " +
      "JSON mapping: camelCase names, enums by name, 64-bit integers as strings, unset timestamps and " +
      "durations as null. Errors are google.rpc.Status objects; the HTTP status follows the gRPC code.",
  };
  doc.securityDefinitions = {
    bearer: {
      type: "apiKey",
      in: "header",
      name: "Authorization",
      description:
        "`Bearer <token>`: an access token from the identity provider (or `npm run -s token` in embedded mode).",
    },
  };
  doc.security = [{ bearer: [] }];
  describeWellKnownFields(objectAt(doc, "definitions"), options.registry);
  describeBodies(objectAt(doc, "paths"), objectAt(doc, "definitions"), options.registry);
  constrainPathIds(objectAt(doc, "paths"));
  constrainStrings(doc);
  markStreaming(objectAt(doc, "paths"), options.registry);
  describeErrors(objectAt(doc, "paths"));
  return doc;
}

// Definitions are named by full proto name (openapi_naming_strategy=fqn), so each one maps back
// to its message without guessing.
function describeWellKnownFields(definitions: JsonObject, registry: Registry): void {
  for (const [name, schema] of Object.entries(definitions)) {
    const message = registry.getMessage(name);
    if (message && isObject(schema)) describeMessageSchema(schema, message);
  }
}

// Request bodies are the one place the generator writes a message's fields into a schema of its
// own (inline, or a `...Body` definition without the path fields): found through the method's
// HTTP rule.
function describeBodies(paths: JsonObject, definitions: JsonObject, registry: Registry): void {
  const methods = new Map<string, DescMethod>();
  for (const type of registry) {
    if (type.kind !== "service") continue;
    for (const method of type.methods) methods.set(`${type.name}_${method.name}`, method);
  }
  for (const operation of operations(paths)) {
    const method = methods.get(String(operation.operationId));
    const parameters = operation.parameters;
    if (!method || !Array.isArray(parameters)) continue;
    const body = getOption(method, http).body;
    const message = body === "*" ? method.input : method.input.fields.find((f) => f.name === body)?.message;
    for (const parameter of parameters) {
      if (!message || !isObject(parameter) || parameter.in !== "body" || !isObject(parameter.schema)) continue;
      const ref = parameter.schema.$ref;
      const schema = typeof ref === "string" ? definitions[ref.replace("#/definitions/", "")] : parameter.schema;
      if (isObject(schema)) describeMessageSchema(schema, message);
    }
  }
}

function describeMessageSchema(schema: JsonObject, message: DescMessage): void {
  const properties = schema.properties;
  if (!isObject(properties)) return;
  for (const field of message.fields) {
    const property = properties[field.jsonName];
    if (!isObject(property)) continue;
    if (emitsNullWhenUnset(field)) property["x-nullable"] = true;
    if (field.fieldKind === "message" && field.message.typeName === "google.protobuf.Duration")
      property.pattern = DURATION;
  }
}

function markStreaming(paths: JsonObject, registry: Registry): void {
  const streaming = new Set<string>();
  for (const type of registry) {
    if (type.kind !== "service") continue;
    for (const method of type.methods) {
      if (method.methodKind === "server_streaming") streaming.add(`${type.name}_${method.name}`);
    }
  }
  for (const operation of operations(paths)) {
    if (!streaming.has(String(operation.operationId))) continue;
    // A call that fails before its first message is answered with a plain JSON status.
    operation.produces = [NDJSON, "application/json"];
    const ok = objectAt(objectAt(operation, "responses"), "200");
    ok.description =
      'One JSON object per line: `{"result": ...}` for each message, `{"error": ...}` if the stream fails after it started.';
  }
}

function describeErrors(paths: JsonObject): void {
  const description = `An error, as a google.rpc.Status. The HTTP status follows its gRPC code: ${codeStatuses()}.`;
  for (const operation of operations(paths)) {
    const fallback = objectAt(operation, "responses").default;
    if (isObject(fallback)) fallback.description = description;
  }
}

// From the table the edge answers with, so the document cannot drift from it.
function codeStatuses(): string {
  const codes = Object.values(Code).filter((c): c is Code => typeof c === "number");
  return codes.map((c) => `${upperSnake(Code[c])} ${httpStatusOf(c)}`).join(", ");
}

function upperSnake(name: string): string {
  return name.replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

// The generator knows a path parameter only as a string; the services take ids by the rules of
// services/kit/src/aip/ids.ts, chosen here by the collection the id follows.
const idPatternOfCollection: Record<string, RegExp | string> = {
  daiEngineVersions: versionOrAlias(),
  h2oEngineVersions: versionOrAlias(),
  versions: `^(latest|${ID_PATTERNS.secretVersion.source.slice(1, -1)})$`,
  processes: ID_PATTERNS.process,
  ports: ID_PATTERNS.port,
  workspaces: ID_PATTERNS.workspace,
};

function versionOrAlias(): string {
  return `^(${ID_PATTERNS.version.source.slice(1, -1)}|${ID_PATTERNS.resource.source.slice(1, -1)})$`;
}

function constrainPathIds(paths: JsonObject): void {
  for (const [template, item] of Object.entries(paths)) {
    const segments = template.split(/[/:]/);
    if (!isObject(item)) continue;
    for (const operation of operationsOf(item)) {
      const parameters = operation.parameters;
      if (!Array.isArray(parameters)) continue;
      for (const parameter of parameters) {
        if (!isObject(parameter) || parameter.in !== "path") continue;
        const at = segments.indexOf(`{${String(parameter.name)}}`);
        const pattern = idPatternOfCollection[segments[at - 1] ?? ""] ?? ID_PATTERNS.resource;
        parameter.pattern = typeof pattern === "string" ? pattern : pattern.source;
      }
    }
  }
}

// protobuf JSON writes 64-bit integers and durations as strings of a fixed form; the generator
// says only "string" (durations are matched in describeWellKnownFields, where the field types are known).
const INT64 = "^-?[0-9]+$";
const UINT64 = "^[0-9]+$";
const DURATION = "^-?[0-9]+(\\.[0-9]{1,9})?s$";

function constrainStrings(node: Json): void {
  if (Array.isArray(node)) {
    for (const item of node) constrainStrings(item);
    return;
  }
  if (!isObject(node)) return;
  if (node.type === "string" && node.pattern === undefined) {
    if (node.format === "int64") node.pattern = INT64;
    else if (node.format === "uint64") node.pattern = UINT64;
  }
  for (const value of Object.values(node)) constrainStrings(value);
}

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"];

function* operations(paths: JsonObject): Generator<JsonObject> {
  for (const item of Object.values(paths)) {
    if (isObject(item)) yield* operationsOf(item);
  }
}

function* operationsOf(item: JsonObject): Generator<JsonObject> {
  for (const method of METHODS) {
    const operation = item[method];
    if (isObject(operation)) yield operation;
  }
}

function objectAt(parent: JsonObject, key: string): JsonObject {
  const value = parent[key];
  if (isObject(value)) return value;
  const created: JsonObject = {};
  parent[key] = created;
  return created;
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
