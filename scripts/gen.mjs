// Generates code from proto/: copies the google/api and google/rpc protos out of the
// google-proto-files package (never vendored in git), runs buf generate, and writes a
// descriptor image with comments (source info) for the edge and the docs site.
import { cpSync, mkdirSync, rmSync, existsSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(join(root, "package.json"));
const protoFiles = dirname(require.resolve("google-proto-files/package.json"));
const deps = join(root, ".proto-deps");

const wanted = [
  "google/api/annotations.proto",
  "google/api/client.proto",
  "google/api/field_behavior.proto",
  "google/api/http.proto",
  "google/api/httpbody.proto",
  "google/api/launch_stage.proto",
  "google/api/resource.proto",
  "google/rpc/code.proto",
  "google/rpc/error_details.proto",
  "google/rpc/status.proto",
];
rmSync(deps, { recursive: true, force: true });
for (const file of wanted) {
  const from = join(protoFiles, file);
  if (!existsSync(from)) throw new Error(`google-proto-files has no ${file}`);
  mkdirSync(dirname(join(deps, file)), { recursive: true });
  cpSync(from, join(deps, file));
}

const buf = join(dirname(require.resolve("@bufbuild/buf/package.json")), "bin", "buf");
const bin = join(root, "node_modules", ".bin");
const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` };
const run = (...args) => execFileSync(buf, args, { cwd: root, stdio: "inherit", env });

rmSync(join(root, "proto", "gen"), { recursive: true, force: true });
run("generate");
run("build", "-o", "proto/gen/image.binpb");
