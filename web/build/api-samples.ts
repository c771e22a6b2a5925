// Builds a plausible example request for every method: the JSON the "Try it" panel starts from
// (Connect JSON, the whole request message) and a curl command for the REST binding. Values come
// from the resource patterns in the descriptors, so names always have the right shape.
import type { DescField, DescMessage, DescMethod, FileRegistry } from "@bufbuild/protobuf";
import { behaviorsOf, bindingsOf, resourcePatternOf } from "./proto-descriptors.js";
import { createSampleNames, scalarSample, type Json, type JsonObject } from "./sample-values.js";

export interface MethodSample {
  /** The request message as Connect JSON. */
  connectJson: JsonObject;
  /** A curl command for the method's first HTTP binding, or "" when it has none. */
  curl: string;
}

export function createSampler(registry: FileRegistry): (method: DescMethod) => MethodSample {
  const names = createSampleNames(registry);
  const { nameOf } = names;

  const fieldSample = (field: DescField, depth: number): Json => {
    const one = (): Json => {
      if (field.fieldKind === "scalar" || (field.fieldKind === "list" && field.listKind === "scalar")) {
        return scalarSample(field, field.scalar!, names);
      }
      const e =
        field.fieldKind === "enum"
          ? field.enum
          : field.fieldKind === "list" && field.listKind === "enum"
            ? field.enum
            : undefined;
      if (e) return e.values.find((v) => v.number !== 0)?.name ?? e.values[0]!.name;
      const m =
        field.fieldKind === "message"
          ? field.message
          : field.fieldKind === "list" && field.listKind === "message"
            ? field.message
            : undefined;
      if (m) return messageSample(m, depth + 1);
      return null;
    };
    if (field.fieldKind === "map") return { key: "value" };
    if (field.fieldKind === "list") return [one()];
    return one();
  };

  const messageSample = (
    message: DescMessage,
    depth: number,
    extra: (f: DescField) => boolean = () => false,
  ): JsonObject => {
    switch (message.typeName) {
      case "google.protobuf.Duration":
        return "3600s" as unknown as JsonObject;
      case "google.protobuf.Timestamp":
        return "2026-01-01T00:00:00Z" as unknown as JsonObject;
      case "google.protobuf.FieldMask":
        return "displayName" as unknown as JsonObject;
    }
    const out: JsonObject = {};
    if (depth > 3) return out;
    for (const field of message.fields) {
      const behaviors = behaviorsOf(field);
      const required = behaviors.includes("REQUIRED") && !behaviors.includes("OUTPUT_ONLY");
      if (required || extra(field)) out[field.jsonName] = fieldSample(field, depth);
    }
    return out;
  };

  return (method) => {
    const isUpdate = /^Update/.test(method.name);
    // An update names the resource and changes its display name, the one field every updatable
    // resource has.
    const connectJson = messageSample(method.input, 0);
    if (isUpdate) {
      const resourceField = method.input.fields.find((f) => f.fieldKind === "message" && resourcePatternOf(f.message));
      if (resourceField?.fieldKind === "message") {
        const res = resourcePatternOf(resourceField.message)!;
        const body: JsonObject = { name: nameOf(res.type) ?? "" };
        if (resourceField.message.fields.some((f) => f.name === "display_name")) body.displayName = "Renamed";
        connectJson[resourceField.jsonName] = body;
        connectJson.updateMask = "displayName";
      }
    }
    return { connectJson, curl: curlFor(method, connectJson) };
  };
}

function jsonNameOf(message: DescMessage, protoName: string): { json: string; field: DescField } | undefined {
  const field = message.fields.find((f) => f.name === protoName);
  return field ? { json: field.jsonName, field } : undefined;
}

function curlFor(method: DescMethod, request: JsonObject): string {
  const binding = bindingsOf(method)[0];
  if (!binding) return "";
  const remaining: JsonObject = { ...request };
  let unresolved = false;
  const path = binding.path.replace(/\{([\w.]+)(?:=[^}]*)?\}/g, (_, fieldPath: string) => {
    let message: DescMessage = method.input;
    let value: Json | undefined = request;
    const segments = fieldPath.split(".");
    segments.forEach((segment, i) => {
      const found = jsonNameOf(message, segment);
      if (!found || typeof value !== "object" || value === null || Array.isArray(value)) {
        value = undefined;
        return;
      }
      const next: Json | undefined = (value as JsonObject)[found.json];
      if (i === 0 && segments.length === 1) delete remaining[found.json];
      if (found.field.fieldKind === "message") message = found.field.message;
      value = next;
    });
    if (typeof value !== "string") {
      unresolved = true;
      return `{${fieldPath}}`;
    }
    return value;
  });
  if (unresolved) return "";

  let body: Json | undefined;
  if (binding.body === "*") {
    body = remaining;
  } else if (binding.body) {
    const found = jsonNameOf(method.input, binding.body);
    if (found) {
      body = remaining[found.json];
      delete remaining[found.json];
    }
  }
  const query =
    binding.body === "*"
      ? ""
      : Object.entries(remaining)
          .filter(([, v]) => typeof v !== "object" || v === null)
          .map(([k, v]) => {
            // Over REST a field mask is snake_case paths, as the architecture's update rule says.
            const value = k === "updateMask" ? String(v).replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : String(v);
            return `${k}=${encodeURIComponent(value).replace(/%2C/g, ",")}`;
          })
          .join("&");
  const url = `$AIEM_URL${path}${query ? `?${query}` : ""}`;
  const lines = [
    `curl${binding.verb === "GET" ? "" : ` -X ${binding.verb}`} "${url}"`,
    `  -H "Authorization: Bearer $TOKEN"`,
  ];
  if (body !== undefined) {
    lines.push(
      `  -H "Content-Type: application/json"`,
      `  -d '${JSON.stringify(body, null, 2).replace(/\n/g, "\n  ")}'`,
    );
  }
  return lines.join(" \\\n");
}
