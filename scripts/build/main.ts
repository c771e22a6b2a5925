// `npm run build`: the services and the edge compiled to JavaScript in `dist/`, a tree shaped
// like the repository (each workspace package with its package.json, the code tsc emits, and the
// files the code reads beside itself), so that the compiled processes find everything where the
// sources do. `dist/` holds the root package.json and lock: `npm ci --omit=dev` in it (the
// Dockerfile's runtime stage) installs the production dependencies, and
// `node dist/edge/src/main.js` runs the product. For a run from the checkout, `dist/node_modules`
// links the workspace packages and the rest resolves from the repository's node_modules.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..", "..");

/** The workspace packages that production runs, with what each needs besides compiled code. */
const PACKAGES: ReadonlyArray<{ dir: string; assets: RegExp; extra?: readonly string[] }> = [
  { dir: "proto", assets: /^$/, extra: ["gen"] },
  { dir: "services/kit", assets: /^$/ },
  { dir: "services/catalogue", assets: /\.(ya?ml|json)$/ },
  // The engine's helper programs run as plain scripts; the sandbox's launcher helpers are C and
  // its agent Go, built at first use or ahead of time (runtime/prepare-cli.ts).
  { dir: "services/engine", assets: /\.(mjs|c)$/ },
  { dir: "services/sandbox", assets: /\.(mjs|c)$/, extra: ["go-agent"] },
  { dir: "edge", assets: /^$/ },
  { dir: "web", assets: /^$/, extra: ["dist"] },
];

export function build(out: string): void {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  execFileSync(
    process.execPath,
    [join(root, "node_modules/typescript/bin/tsc"), "-p", join(root, "tsconfig.build.json"), "--outDir", out],
    { stdio: "inherit", cwd: root },
  );
  for (const pkg of PACKAGES) {
    const from = join(root, pkg.dir);
    const to = join(out, pkg.dir);
    mkdirSync(to, { recursive: true });
    const manifest = JSON.parse(readFileSync(join(from, "package.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(join(to, "package.json"), `${JSON.stringify(compiledManifest(manifest), null, 2)}\n`);
    for (const file of walk(join(from, "src"))) {
      const rel = relative(from, file);
      if (pkg.assets.test(`/${rel}`) && !/\.(test|suite)\.ts$/.test(rel)) cpSync(file, join(to, rel));
    }
    for (const extra of pkg.extra ?? []) {
      if (!existsSync(join(from, extra)))
        throw new Error(`${pkg.dir}/${extra} is missing: run npm install (it generates and builds it)`);
      cpSync(join(from, extra), join(to, extra), { recursive: true });
    }
  }
  const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, unknown>;
  // The same dependencies as the lock says (npm ci insists), and scripts that run the build.
  rootManifest.scripts = {
    start: "node edge/src/main.js",
    "start:service": "node edge/src/start-service.js",
    token: "node services/kit/src/identity/token-cli.js",
  };
  writeFileSync(join(out, "package.json"), `${JSON.stringify(rootManifest, null, 2)}\n`);
  cpSync(join(root, "package-lock.json"), join(out, "package-lock.json"));
}

/** Exports that name `.ts` sources name the compiled `.js` instead. */
function compiledManifest(manifest: Record<string, unknown>): Record<string, unknown> {
  const exports = manifest.exports as Record<string, string> | undefined;
  const { devDependencies: _dev, scripts: _scripts, ...rest } = manifest;
  if (!exports) return rest;
  return {
    ...rest,
    exports: Object.fromEntries(Object.entries(exports).map(([k, v]) => [k, v.replace(/\.ts$/, ".js")])),
  };
}

function* walk(dir: string): Generator<string> {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

/**
 * For a run from the checkout: `dist/node_modules/@aiem/*` are the compiled packages (the
 * repository's own link to the sources), and `.venv` (the H2O-3 jar) is the repository's.
 */
export function linkForCheckout(out: string): void {
  const scope = join(out, "node_modules", "@aiem");
  mkdirSync(scope, { recursive: true });
  for (const pkg of PACKAGES) {
    const name = (JSON.parse(readFileSync(join(out, pkg.dir, "package.json"), "utf8")) as { name: string }).name;
    const link = join(out, "node_modules", name);
    rmSync(link, { force: true, recursive: true });
    symlinkSync(relative(dirname(link), join(out, pkg.dir)), link);
    // What npm installed for this package alone (a version the others do not share).
    const own = join(root, pkg.dir, "node_modules");
    const ownLink = join(out, pkg.dir, "node_modules");
    rmSync(ownLink, { force: true, recursive: true });
    if (existsSync(own)) symlinkSync(own, ownLink);
  }
  if (existsSync(join(root, ".venv")) && !existsSync(join(out, ".venv")))
    symlinkSync(join(root, ".venv"), join(out, ".venv"));
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const out = resolve(root, process.argv[2] ?? "dist");
  const started = performance.now();
  build(out);
  if (out === resolve(root, "dist")) linkForCheckout(out);
  console.log(`build: ${relative(root, out) || "."} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
