// Loads the descriptor image that scripts/gen.mjs builds (with comments), the same input the
// edge and the docs site read, so these tests check what ships.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createFileRegistry, fromBinary, getOption, type FileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { http } from "@aiem/proto/google/api/annotations_pb.js";
import type { HttpRule } from "@aiem/proto/google/api/http_pb.js";
import type { DescMethod, DescService } from "@bufbuild/protobuf";

const require = createRequire(import.meta.url);

export const ourPackages = [
  "enginemanager.v1",
  "enginemanager.sandbox.v1",
  "enginemanager.events.v1",
  "enginemanager.agent.v1",
  "enginemanager.internal.v1",
];

/** Packages only our own services call: no HTTP routes, no place in the reference. */
export const internalPackages: readonly string[] = ["enginemanager.agent.v1", "enginemanager.internal.v1"];

export function loadRegistry(): FileRegistry {
  const bytes = readFileSync(require.resolve("@aiem/proto/image.binpb"));
  return createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
}

export function ourServices(registry: FileRegistry): DescService[] {
  const services: DescService[] = [];
  for (const file of registry.files) {
    if (ourPackages.includes(file.proto.package)) services.push(...file.services);
  }
  return services;
}

export interface Route {
  verb: string;
  path: string;
  body: string;
  method: string;
}

// Flattens a method's http rule and its additional_bindings into routes.
export function routesOf(method: DescMethod): Route[] {
  const rule = getOption(method, http);
  const flatten = (r: HttpRule): Route[] => {
    const { case: verb, value } = r.pattern;
    const own: Route[] =
      verb === undefined
        ? []
        : [
            {
              verb: verb === "custom" ? value.kind.toUpperCase() : verb.toUpperCase(),
              path: verb === "custom" ? value.path : value,
              body: r.body,
              method: `${method.parent.typeName}.${method.name}`,
            },
          ];
    return [...own, ...r.additionalBindings.flatMap(flatten)];
  };
  return flatten(rule);
}
