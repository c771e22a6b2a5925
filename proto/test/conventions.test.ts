// ARCHITECTURE.md's "API conventions", checked on every message and method of our packages.
import { describe, expect, it } from "vitest";
import { getOption, type DescMessage, type DescMethod } from "@bufbuild/protobuf";
import type { DescriptorProto, EnumDescriptorProto } from "@bufbuild/protobuf/wkt";
import { resource } from "@aiem/proto/google/api/resource_pb.js";
import { field_behavior as fieldBehavior } from "@aiem/proto/google/api/field_behavior_pb.js";
import { internalPackages, loadRegistry, ourPackages, ourServices, routesOf } from "./descriptors.js";

const registry = loadRegistry();
const files = [...registry.files].filter((f) => ourPackages.includes(f.proto.package));
const services = ourServices(registry);
const publicMethods = services
  .filter((s) => !internalPackages.includes(s.file.proto.package))
  .flatMap((s) => s.methods);

// Paths into FileDescriptorProto (descriptor.proto field numbers) of every element that the
// API reference shows, with a readable label.
function elements(file: (typeof files)[number]): [number[], string][] {
  const out: [number[], string][] = [];
  const enumEls = (e: EnumDescriptorProto, path: number[], scope: string) => {
    out.push([path, `${scope}.${e.name}`]);
    for (const [i, v] of e.value.entries()) out.push([[...path, 2, i], `${scope}.${e.name}.${v.name}`]);
  };
  const messageEls = (m: DescriptorProto, path: number[], scope: string) => {
    if (m.options?.mapEntry) return;
    const name = `${scope}.${m.name}`;
    out.push([path, name]);
    for (const [i, f] of m.field.entries()) out.push([[...path, 2, i], `${name}.${f.name}`]);
    for (const [i, n] of m.nestedType.entries()) messageEls(n, [...path, 3, i], name);
    for (const [i, e] of m.enumType.entries()) enumEls(e, [...path, 4, i], name);
  };
  const pkg = file.proto.package;
  for (const [i, m] of file.proto.messageType.entries()) messageEls(m, [4, i], pkg);
  for (const [i, e] of file.proto.enumType.entries()) enumEls(e, [5, i], pkg);
  file.proto.service.forEach((s, i) => {
    out.push([[6, i], `${pkg}.${s.name}`]);
    for (const [j, m] of s.method.entries()) out.push([[6, i, 2, j], `${pkg}.${s.name}.${m.name}`]);
  });
  return out;
}

describe("comments", () => {
  it("documents every service, method, message, field and enum value", () => {
    const missing: string[] = [];
    for (const file of files) {
      const comments = new Map<string, string>();
      for (const loc of file.proto.sourceCodeInfo?.location ?? []) {
        comments.set(loc.path.join("."), loc.leadingComments.trim());
      }
      for (const [path, label] of elements(file)) {
        if (!comments.get(path.join("."))) missing.push(label);
      }
    }
    expect(missing).toEqual([]);
  });
});

function resourceField(m: DescMessage) {
  return m.fields.find((f) => f.message && getOption(f.message, resource).type !== "");
}

const plain = (m: DescMethod) => m.methodKind === "unary";

// Standard methods (AIP-131..135) act on a resource kind; filesystem calls such as
// CreateDirectory or ListDirectory share the verbs but not the shape.
const resourceKinds = new Set(
  files
    .flatMap((f) => f.messages)
    .filter((m) => getOption(m, resource).type !== "")
    .map((m) => m.name),
);
const standard = (verb: string) =>
  publicMethods.filter((m) => {
    if (!m.name.startsWith(verb) || !plain(m)) return false;
    const kind = m.name.slice(verb.length);
    return resourceKinds.has(kind) || resourceKinds.has(kind.replace(/e?s$/, ""));
  });

describe("request and response shapes", () => {
  it("gives every method its own request and response message", () => {
    for (const m of publicMethods) {
      expect(m.input.name, m.name).toBe(`${m.name}Request`);
      expect(m.output.name, m.name).toBe(`${m.name}Response`);
    }
  });

  it("wraps the resource of create, get and update in a field named after it", () => {
    for (const m of [...standard("Create"), ...standard("Get"), ...standard("Update")]) {
      const kind = m.name.replace(/^(Create|Get|Update)/, "");
      const field = m.output.fields.find((f) => f.message?.name === kind);
      expect(field, `${m.name} response`).toBeDefined();
      expect(field!.jsonName.toLowerCase(), m.name).toBe(kind.toLowerCase());
    }
  });

  it("lists the plural with nextPageToken, and engine lists with totalSize", () => {
    const engines = ["ListDAIEngines", "ListH2OEngines", "ListNotebookEngines", "ListSandboxEngines", "ListEngines"];
    for (const m of standard("List")) {
      const json = m.output.fields.map((f) => f.jsonName);
      expect(json, m.name).toContain("nextPageToken");
      expect(
        m.output.fields.some((f) => f.fieldKind === "list" && f.listKind === "message"),
        m.name,
      ).toBe(true);
      expect(json.includes("totalSize"), m.name).toBe(engines.includes(m.name));
      const input = m.input.fields.map((f) => f.jsonName);
      expect(input, m.name).toEqual(expect.arrayContaining(["pageSize", "pageToken"]));
    }
  });

  it("takes the id of a created resource as a query parameter", () => {
    for (const m of standard("Create")) {
      const route = routesOf(m)[0]!;
      const resourceInBody = m.input.fields.find((f) => f.name === route.body);
      expect(resourceInBody?.message, m.name).toBeDefined();
      const id = m.input.fields.find((f) => f.name.endsWith("_id"));
      expect(id, `${m.name} has an id field`).toBeDefined();
      expect(route.path.includes(`{${id!.name}`), m.name).toBe(false);
    }
  });

  it("gives every resource message a name field and a resource pattern", () => {
    for (const file of files) {
      for (const m of file.messages) {
        const res = getOption(m, resource);
        if (res.type === "") continue;
        expect(m.fields[0]?.name, m.typeName).toBe("name");
        expect(res.pattern.length, m.typeName).toBeGreaterThan(0);
        expect(res.type, m.typeName).toBe(`enginemanager.ai/${m.name}`);
      }
    }
  });

  it("gives every field of a resource, and every request field, a field behaviour", () => {
    const missing: string[] = [];
    const requests = publicMethods.map((m) => m.input);
    const resources = files.flatMap((f) => f.messages).filter((m) => getOption(m, resource).type !== "");
    for (const m of [...resources, ...requests]) {
      for (const f of m.fields) {
        if (getOption(f, fieldBehavior).length === 0) missing.push(`${m.typeName}.${f.name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("names a resource in update requests", () => {
    for (const m of standard("Update")) {
      expect(resourceField(m.input), m.name).toBeDefined();
      expect(
        m.input.fields.some((f) => f.name === "update_mask"),
        m.name,
      ).toBe(true);
    }
  });
});
