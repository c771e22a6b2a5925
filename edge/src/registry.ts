// The descriptor image that `npm run gen` builds (imports and comments included).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createFileRegistry, fromBinary, type FileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

const require = createRequire(import.meta.url);

export function loadImageRegistry(): FileRegistry {
  const bytes = readFileSync(require.resolve("@aiem/proto/image.binpb"));
  return createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
}
