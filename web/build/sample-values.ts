// The values of example requests: resource names made from the descriptors' resource patterns (so
// they always have the right shape), and a plausible value for each scalar field.
import { ScalarType, type DescField, type DescMessage, type FileRegistry } from "@bufbuild/protobuf";
import { resourcePatternOf, resourceReferenceOf } from "./proto-descriptors.js";

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface SampleNames {
  /** A sample name of a resource type, from its first pattern. */
  nameOf(type: string): string | undefined;
  /** A sample parent of a resource type's children. */
  parentOf(childType: string): string | undefined;
}

const catalogueVariable = /_(profile|image|template)$|^(dai|h2o)_engine_version$/;

function sampleId(variable: string): string {
  if (variable === "dai_engine_version") return "1.11.3";
  if (variable === "h2o_engine_version") return "3.46.0.6";
  if (/_(profile|image|template)$/.test(variable)) return "default";
  if (variable === "port") return "8080";
  if (variable === "version") return "latest";
  if (variable === "workspace") return "default";
  return `my-${variable.replace(/_/g, "-")}`;
}

export function createSampleNames(registry: FileRegistry): SampleNames {
  const patterns = new Map<string, string>();
  for (const file of registry.files) {
    const walk = (m: DescMessage) => {
      const res = resourcePatternOf(m);
      if (res?.patterns[0]) patterns.set(res.type, res.patterns[0]);
      m.nestedMessages.forEach(walk);
    };
    file.messages.forEach(walk);
  }

  const nameOf = (type: string): string | undefined => {
    const pattern = patterns.get(type);
    if (!pattern) return undefined;
    const catalogue = [...pattern.matchAll(/\{(\w+)\}/g)].some((m) => catalogueVariable.test(m[1]!));
    return pattern.replace(/\{(\w+)\}/g, (_, v: string) => (v === "workspace" && catalogue ? "global" : sampleId(v)));
  };
  const parentOf = (childType: string): string | undefined => {
    const name = nameOf(childType);
    return name?.split("/").slice(0, -2).join("/");
  };
  return { nameOf, parentOf };
}

/** A plausible value of a scalar field, by its name and type. */
export function scalarSample(field: DescField, type: ScalarType, names: SampleNames): Json {
  const name = field.name;
  switch (type) {
    case ScalarType.BOOL:
      return true;
    case ScalarType.STRING: {
      const ref = resourceReferenceOf(field);
      // Engines usually name a version by its alias, which the server resolves.
      if (/^(new_)?(dai|h2o)_engine_version$/.test(name)) {
        return `workspaces/global/${name.includes("dai") ? "dai" : "h2o"}EngineVersions/latest`;
      }
      if (ref?.type) return names.nameOf(ref.type) ?? "example";
      if (ref?.childType) return names.parentOf(ref.childType) ?? "workspaces/default";
      if (name.endsWith("_id")) return sampleId(name.slice(0, -3));
      const known: Record<string, string> = {
        new_creator: "users/bob",
        workspace: "workspaces/default",
        path: "/workspace/hello.txt",
        source_path: "/workspace/hello.txt",
        destination_path: "/workspace/archive/hello.txt",
        local_path: "/workspace/data/train.csv",
        remote_path: "datasets/train.csv",
        command: "python3",
        secret_version: "workspaces/default/secrets/api-key/versions/latest",
        image: "registry.example.com/engines/image:1.0",
        display_name: "Example",
      };
      return known[name] ?? "example";
    }
    case ScalarType.BYTES:
      return "aGVsbG8K";
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      if (name.includes("bytes")) return "10737418240";
      if (name === "rows_count") return "1000000";
      if (name === "columns_count") return "20";
      return "1";
    default:
      if (name === "signal") return 15;
      return 1;
  }
}
