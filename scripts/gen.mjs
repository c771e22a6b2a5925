// Generates code from proto/: copies the google/api and google/rpc protos out of the
// google-proto-files package and the gRPC server reflection protos out of @grpc/reflection
// (never vendored in git), runs buf generate, and writes a descriptor image with comments
// (source info) for the edge and the docs site.
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
  "google/type/date.proto",
];
// The edge serves gRPC server reflection (both versions clients still ask for) from its own
// generated code, so the protos come from the package that grpc-js publishes them in.
const reflectionProtos = join(dirname(require.resolve("@grpc/reflection/package.json")), "build", "proto");
const wantedReflection = ["grpc/reflection/v1/reflection.proto", "grpc/reflection/v1alpha/reflection.proto"];

rmSync(deps, { recursive: true, force: true });
const copy = (fromDir, file, source) => {
  const from = join(fromDir, file);
  if (!existsSync(from)) throw new Error(`${source} has no ${file}`);
  mkdirSync(dirname(join(deps, file)), { recursive: true });
  cpSync(from, join(deps, file));
};
for (const file of wanted) copy(protoFiles, file, "google-proto-files");
for (const file of wantedReflection) copy(reflectionProtos, file, "@grpc/reflection");

const buf = join(dirname(require.resolve("@bufbuild/buf/package.json")), "bin", "buf");
const bin = join(root, "node_modules", ".bin");
const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` };
const run = (...args) => execFileSync(buf, args, { cwd: root, stdio: "inherit", env });

rmSync(join(root, "proto", "gen"), { recursive: true, force: true });
run("generate");
run("build", "-o", "proto/gen/image.binpb");
// The OpenAPI document, from the image just built (scripts/openapi/generate.ts).
execFileSync(join(bin, "tsx"), [join(root, "scripts", "openapi", "generate.ts")], { cwd: root, stdio: "inherit", env });
