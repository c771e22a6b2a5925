// The files the runtime needs for every sandbox: the agent bundled into one ES module, the spawn
// helper compiled from C, and, on the host side, the user-namespace entry program and the seccomp
// filter (both from C; the filter is the output of seccomp-policy.c, built with libseccomp). All
// are built on first use, named by a hash of their source and kept in a cache directory, so a
// sandbox start never waits for a build and sandboxes started from different builds of the
// service never see each other's agent.
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

const agentSourceDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "agent");
const runtimeSourceDir = path.dirname(fileURLToPath(import.meta.url));

export interface AgentArtifacts {
  /** The bundled agent, one self-contained ES module. */
  readonly bundlePath: string;
  /** The compiled spawn helper; undefined when no C compiler was found. */
  readonly helperPath: string | undefined;
  /** Why there is no helper, when there is none. */
  readonly helperUnavailableReason: string | undefined;
  /** The agent version reported by Health. */
  readonly version: string;
  /** sandbox-enter (see sandbox-enter.c); undefined when it could not be compiled. */
  readonly enterPath?: string | undefined;
  readonly enterUnavailableReason?: string | undefined;
  /** The compiled seccomp filter (BPF); undefined when libseccomp or a compiler is missing. */
  readonly seccompFilterPath?: string | undefined;
  readonly seccompUnavailableReason?: string | undefined;
}

function hash(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex").slice(0, 16);
}

/** Writes `data` to `file` unless it exists, atomically, so concurrent runtimes can share the cache. */
function writeOnce(file: string, data: string | Uint8Array, mode: number): void {
  if (fs.existsSync(file)) return;
  const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  fs.writeFileSync(temp, data, { mode });
  fs.renameSync(temp, file);
}

function readVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(agentSourceDir, "..", "..", "package.json"), "utf8")) as {
      version?: string;
    };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

async function bundleAgent(cacheDir: string, version: string): Promise<string> {
  const { build } = await import("esbuild");
  const result = await build({
    entryPoints: [path.join(agentSourceDir, "main.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    minify: true,
    legalComments: "none",
    logLevel: "silent",
    define: { AIEM_AGENT_VERSION: JSON.stringify(version) },
    // Some dependencies call require(); give the ES module bundle one.
    banner: { js: 'import{createRequire as __aiemCreateRequire}from"node:module";const require=__aiemCreateRequire(import.meta.url);' },
  });
  const code = result.outputFiles[0]!.contents;
  const file = path.join(cacheDir, `agent-${hash(code)}.mjs`);
  writeOnce(file, code, 0o644);
  return file;
}

async function compile(
  cacheDir: string,
  name: string,
  sourcePath: string,
  libraries: readonly string[] = [],
): Promise<{ path?: string; reason?: string }> {
  const source = fs.readFileSync(sourcePath);
  const file = path.join(cacheDir, `${name}-${hash(source)}`);
  if (fs.existsSync(file)) return { path: file };
  const compiler = process.env["CC"] || "cc";
  const sourceCopy = path.join(cacheDir, `${name}-${randomBytes(4).toString("hex")}.c`);
  const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  fs.writeFileSync(sourceCopy, source);
  try {
    await execFileAsync(compiler, ["-O2", "-o", temp, sourceCopy, ...libraries], { timeout: 60_000 });
    fs.chmodSync(temp, 0o755);
    fs.renameSync(temp, file);
    return { path: file };
  } catch (error) {
    fs.rmSync(temp, { force: true });
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    return { reason: `${name} could not be compiled with ${compiler}: ${message}` };
  } finally {
    fs.rmSync(sourceCopy, { force: true });
  }
}

/** Builds the policy program and keeps its output, the filter, beside it. */
async function buildSeccompFilter(cacheDir: string): Promise<{ path?: string; reason?: string }> {
  const program = await compile(cacheDir, "seccomp-policy", path.join(runtimeSourceDir, "seccomp-policy.c"), ["-lseccomp"]);
  if (!program.path) return { reason: `${program.reason} (the Debian package libseccomp-dev provides libseccomp)` };
  const file = `${program.path}.bpf`;
  if (fs.existsSync(file)) return { path: file };
  try {
    const { stdout } = await execFileAsync(program.path, [], { encoding: "buffer", timeout: 10_000 });
    writeOnce(file, stdout, 0o644);
    return { path: file };
  } catch (error) {
    return { reason: `the seccomp policy could not be compiled: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}` };
  }
}

const prepared = new Map<string, Promise<AgentArtifacts>>();

/** Builds (or finds in `cacheDir`) the agent bundle and spawn helper; memoised per directory. */
export function prepareAgentArtifacts(cacheDir: string): Promise<AgentArtifacts> {
  const key = path.resolve(cacheDir);
  let promise = prepared.get(key);
  if (promise === undefined) {
    promise = (async () => {
      fs.mkdirSync(key, { recursive: true });
      const version = readVersion();
      const [bundlePath, helper, enter, seccomp] = await Promise.all([
        bundleAgent(key, version),
        compile(key, "spawn-helper", path.join(agentSourceDir, "spawn-helper.c")),
        compile(key, "sandbox-enter", path.join(runtimeSourceDir, "sandbox-enter.c")),
        buildSeccompFilter(key),
      ]);
      return {
        bundlePath,
        helperPath: helper.path,
        helperUnavailableReason: helper.reason,
        version,
        enterPath: enter.path,
        enterUnavailableReason: enter.reason,
        seccompFilterPath: seccomp.path,
        seccompUnavailableReason: seccomp.reason,
      };
    })();
    prepared.set(key, promise);
    promise.catch(() => prepared.delete(key));
  }
  return promise;
}
