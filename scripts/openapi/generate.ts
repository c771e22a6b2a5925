// `npm run gen` (and so `npm ci`) runs this after buf generate: protoc-gen-openapiv2 writes one
// Swagger 2.0 document for the public services, shapeOpenApi adds what it cannot know, and the
// result lands in proto/gen/openapi/ as JSON and YAML for the edge and the docs site.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { stringify } from "yaml";
import { ensureOpenApiPlugin } from "./plugin.js";
import { shapeOpenApi } from "./shape.js";

// The services behind the REST API; the agent and event protos are internal.
const PUBLIC_PROTOS = ["proto/enginemanager/v1", "proto/enginemanager/sandbox/v1"];

function main(): void {
  const root = resolve(import.meta.dirname, "..", "..");
  const require = createRequire(join(root, "package.json"));
  const buf = join(dirname(require.resolve("@bufbuild/buf/package.json")), "bin", "buf");
  const plugin = ensureOpenApiPlugin(root);

  const scratch = mkdtempSync(join(tmpdir(), "aiem-openapi-"));
  try {
    // buf needs a Go package for every file before the plugin runs; it only names the output.
    const template = {
      version: "v2",
      managed: {
        enabled: true,
        override: [{ file_option: "go_package_prefix", value: "aiem.invalid/gen" }],
        disable: [{ path: "google" }, { path: "grpc" }],
      },
      plugins: [
        {
          local: plugin,
          out: scratch,
          strategy: "all",
          opt: [
            "allow_merge=true",
            "merge_file_name=aiem",
            "output_format=json",
            "openapi_naming_strategy=fqn",
            "expand_slashed_path_patterns=true",
            // Our server fills no update_mask from the body, as the gateway can: it is a query
            // parameter that PATCH must carry, so the document must show it.
            "allow_patch_feature=false",
          ],
        },
      ],
    };
    const args = ["generate", "--template", JSON.stringify(template), ...PUBLIC_PROTOS.flatMap((p) => ["--path", p])];
    execFileSync(buf, args, { cwd: root, stdio: "inherit" });
    const generated = JSON.parse(readFileSync(join(scratch, "aiem.swagger.json"), "utf8"));
    const image = fromBinary(FileDescriptorSetSchema, readFileSync(join(root, "proto", "gen", "image.binpb")));
    const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
    const doc = shapeOpenApi(generated, { registry: createFileRegistry(image), version });

    const out = join(root, "proto", "gen", "openapi");
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, "openapi.json"), `${JSON.stringify(doc, null, 2)}\n`);
    writeFileSync(join(out, "openapi.yaml"), stringify(doc, { lineWidth: 0 }));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main();
