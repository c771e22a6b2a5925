// The files the runtime needs for every sandbox: the agent bundled into one script and a V8
// startup snapshot of it, the spawn helper compiled from C, and, on the host side, the launcher,
// the user-namespace entry program and the seccomp filter (all from C; the filter is the output
// of seccomp-policy.c, built with libseccomp). All are built on first use, named by a hash of their
// source and kept in a cache directory, so a sandbox start never waits for a build and sandboxes
// started from different builds of the service never see each other's agent.
import { execFile, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { buildGoAgent } from "./go-agent-build.js";

const execFileAsync = promisify(execFile);

const agentSourceDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "agent");
const runtimeSourceDir = path.dirname(fileURLToPath(import.meta.url));

export interface AgentArtifacts {
  /** The bundled agent, one self-contained script (run as CommonJS). */
  readonly bundlePath: string;
  /**
   * A V8 startup snapshot of the bundle with every module evaluated, for the node binary it was
   * built with (`node --snapshot-blob`); undefined when it could not be built.
   */
  readonly snapshotPath?: string | undefined;
  readonly snapshotUnavailableReason?: string | undefined;
  /** The compiled spawn helper; undefined when no C compiler was found. */
  readonly helperPath: string | undefined;
  /** Why there is no helper, when there is none. */
  readonly helperUnavailableReason: string | undefined;
  /** The agent version reported by Health. */
  readonly version: string;
  /**
   * sandbox-launch (see sandbox-launch.c), the host-side steps of a start in one process;
   * undefined when it could not be compiled (the runtime then runs them from a shell).
   */
  readonly launchPath?: string | undefined;
  readonly launchUnavailableReason?: string | undefined;
  /** sandbox-enter (see sandbox-enter.c); undefined when it could not be compiled. */
  readonly enterPath?: string | undefined;
  readonly enterUnavailableReason?: string | undefined;
  /**
   * agent-guard.so (see agent/agent-guard.c), preloaded into the agent: not dumpable, its
   * descriptors close-on-exec. Confined sandboxes do not start without it.
   */
  readonly guardPath?: string | undefined;
  readonly guardUnavailableReason?: string | undefined;
  /**
   * The Node-API addon that reads a unix socket's peer credentials (peer-credentials.c), with
   * which the service checks every connection to an agent. Sandboxes do not start without it.
   */
  readonly peerCredentialsPath?: string | undefined;
  readonly peerCredentialsUnavailableReason?: string | undefined;
  /** The native agent (go-agent-build.ts), copied into the cache; undefined when it could not be built. */
  readonly nativeAgentPath?: string | undefined;
  readonly nativeAgentUnavailableReason?: string | undefined;
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

/**
 * Built-in modules whose load creates native state a startup snapshot cannot hold (Node 20 aborts
 * building one that loaded them): the bundle gets stand-ins that load the real module on first
 * use, which in the agent is always after the snapshot was taken. child_process is listed as
 * Node marks it not verified in snapshots. Their export names come from this process's Node.
 */
const DEFERRED_BUILTINS = ["http", "https", "http2", "tls", "child_process"];

function deferredBuiltins(): import("esbuild").Plugin {
  const require = createRequire(import.meta.url);
  const filter = new RegExp(`^(node:)?(${DEFERRED_BUILTINS.join("|")})$`);
  return {
    name: "aiem-deferred-builtins",
    setup(build) {
      build.onResolve({ filter }, (args) =>
        args.namespace === "aiem-deferred"
          ? { path: args.path, external: true }
          : { path: args.path.replace(/^node:/, ""), namespace: "aiem-deferred" },
      );
      build.onLoad({ filter: /.*/, namespace: "aiem-deferred" }, (args) => {
        const names = Object.getOwnPropertyNames(require(`node:${args.path}`) as object).filter((n) => n !== "default");
        const getters = names.map((n) => `${JSON.stringify(n)}:{enumerable:true,get:()=>load()[${JSON.stringify(n)}]}`);
        return {
          loader: "js",
          contents: `let m;const load=()=>m??=require(${JSON.stringify(`node:${args.path}`)});module.exports=Object.defineProperties({},{${getters.join(",")}});`,
        };
      });
    },
  };
}

async function bundleAgent(cacheDir: string, version: string): Promise<string> {
  const { build } = await import("esbuild");
  const result = await build({
    entryPoints: [path.join(agentSourceDir, "main.ts")],
    bundle: true,
    platform: "node",
    // A script, not an ES module: Node 20 builds a startup snapshot from one script only.
    format: "iife",
    target: "node20",
    write: false,
    minify: true,
    legalComments: "none",
    logLevel: "silent",
    define: { AIEM_AGENT_VERSION: JSON.stringify(version) },
    plugins: [deferredBuiltins()],
  });
  const code = result.outputFiles[0]!.contents;
  const file = path.join(cacheDir, `agent-${hash(code)}.cjs`);
  writeOnce(file, code, 0o644);
  return file;
}

/** What identifies a node binary well enough for its snapshots: a blob runs only on its builder. */
function binaryIdentity(nodePath: string): string {
  const stat = fs.statSync(nodePath);
  return `${fs.realpathSync(nodePath)}:${stat.size}:${stat.mtimeMs}`;
}

/**
 * Builds the startup snapshot of the bundle with `nodePath`. The blob records the command line
 * that built it, so that names no host path: the script is read from standard input, and the
 * output is named relative to the cache directory.
 */
async function buildSnapshot(
  cacheDir: string,
  bundlePath: string,
  nodePath: string,
): Promise<{ path?: string; reason?: string }> {
  let file: string;
  try {
    file = `${bundlePath.replace(/\.cjs$/, "")}-${hash(binaryIdentity(nodePath))}.blob`;
  } catch (error) {
    return { reason: `the node binary ${nodePath} cannot be read: ${String(error)}` };
  }
  if (fs.existsSync(file)) return { path: file };
  const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  const input = fs.openSync(bundlePath, "r");
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(nodePath, ["--snapshot-blob", path.basename(temp), "--build-snapshot", "/dev/stdin"], {
        cwd: cacheDir,
        stdio: [input, "ignore", "pipe"],
        env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin" },
        timeout: 60_000,
      });
      let text = "";
      child.stderr!.on("data", (chunk: Buffer) => (text = (text + chunk.toString("utf8")).slice(-4000)));
      child.once("error", reject);
      child.once("close", (code, signal) =>
        code === 0
          ? resolve()
          : reject(new Error(`${signal ?? `exit code ${code}`}: ${text.trim().split("\n").slice(-3).join(" ")}`)),
      );
    });
    fs.renameSync(temp, file);
    return { path: file };
  } catch (error) {
    fs.rmSync(temp, { force: true });
    return {
      reason: `the agent's startup snapshot could not be built with ${nodePath}: ${error instanceof Error ? error.message : String(error)}`,
    };
  } finally {
    fs.closeSync(input);
  }
}

async function compile(
  cacheDir: string,
  name: string,
  sourcePath: string,
  libraries: readonly string[] = [],
  shared?: { readonly suffix: string },
): Promise<{ path?: string; reason?: string }> {
  const source = fs.readFileSync(sourcePath);
  const file = path.join(cacheDir, `${name}-${hash(source)}${shared?.suffix ?? ""}`);
  if (fs.existsSync(file)) return { path: file };
  const compiler = process.env["CC"] || "cc";
  const sourceCopy = path.join(cacheDir, `${name}-${randomBytes(4).toString("hex")}.c`);
  const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  fs.writeFileSync(sourceCopy, source);
  try {
    const kind = shared ? ["-shared", "-fPIC"] : [];
    await execFileAsync(compiler, ["-O2", ...kind, "-o", temp, sourceCopy, ...libraries], { timeout: 60_000 });
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
  const program = await compile(cacheDir, "seccomp-policy", path.join(runtimeSourceDir, "seccomp-policy.c"), [
    "-lseccomp",
  ]);
  if (!program.path) return { reason: `${program.reason} (the Debian package libseccomp-dev provides libseccomp)` };
  const file = `${program.path}.bpf`;
  if (fs.existsSync(file)) return { path: file };
  try {
    const { stdout } = await execFileAsync(program.path, [], { encoding: "buffer", timeout: 10_000 });
    writeOnce(file, stdout, 0o644);
    return { path: file };
  } catch (error) {
    return {
      reason: `the seccomp policy could not be compiled: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
    };
  }
}

const peerAddons = new Map<string, Promise<{ path?: string; reason?: string }>>();

/**
 * The peer-credentials addon alone (see AgentArtifacts.peerCredentialsPath), for adopting
 * sandboxes without building the rest first; memoised per directory.
 */
export function preparePeerCredentials(cacheDir: string): Promise<{ path?: string; reason?: string }> {
  const dir = path.resolve(cacheDir);
  let promise = peerAddons.get(dir);
  if (promise === undefined) {
    promise = (async () => {
      fs.mkdirSync(dir, { recursive: true });
      return compile(dir, "peer-credentials", path.join(runtimeSourceDir, "peer-credentials.c"), [], {
        suffix: ".node",
      });
    })();
    peerAddons.set(dir, promise);
    promise.catch(() => peerAddons.delete(dir));
  }
  return promise;
}

const prepared = new Map<string, Promise<AgentArtifacts>>();

/**
 * Builds (or finds in `cacheDir`) the agent bundle, its startup snapshot for `nodePath` and the
 * helpers; memoised per directory and node binary.
 */
export function prepareAgentArtifacts(cacheDir: string, nodePath: string = process.execPath): Promise<AgentArtifacts> {
  const key = `${path.resolve(cacheDir)}\0${nodePath}`;
  let promise = prepared.get(key);
  if (promise === undefined) {
    promise = (async () => {
      const dir = path.resolve(cacheDir);
      fs.mkdirSync(dir, { recursive: true });
      const version = readVersion();
      const [bundle, helper, launch, enter, seccomp, guard, peer, native] = await Promise.all([
        bundleAgent(dir, version).then(async (bundlePath) => ({
          bundlePath,
          snapshot: await buildSnapshot(dir, bundlePath, nodePath),
        })),
        compile(dir, "spawn-helper", path.join(agentSourceDir, "spawn-helper.c")),
        compile(dir, "sandbox-launch", path.join(runtimeSourceDir, "sandbox-launch.c")),
        compile(dir, "sandbox-enter", path.join(runtimeSourceDir, "sandbox-enter.c")),
        buildSeccompFilter(dir),
        compile(dir, "agent-guard", path.join(agentSourceDir, "agent-guard.c"), [], { suffix: ".so" }),
        preparePeerCredentials(dir),
        buildGoAgent(version).then((built) => {
          if (built.path === undefined) return built;
          const file = path.join(dir, `native-${path.basename(built.path)}`);
          writeOnce(file, fs.readFileSync(built.path), 0o755);
          return { path: file };
        }),
      ]);
      return {
        bundlePath: bundle.bundlePath,
        snapshotPath: bundle.snapshot.path,
        snapshotUnavailableReason: bundle.snapshot.reason,
        helperPath: helper.path,
        helperUnavailableReason: helper.reason,
        version,
        launchPath: launch.path,
        launchUnavailableReason: launch.reason,
        enterPath: enter.path,
        enterUnavailableReason: enter.reason,
        seccompFilterPath: seccomp.path,
        seccompUnavailableReason: seccomp.reason,
        guardPath: guard.path,
        guardUnavailableReason: guard.reason,
        peerCredentialsPath: peer.path,
        peerCredentialsUnavailableReason: peer.reason,
        nativeAgentPath: native.path,
        nativeAgentUnavailableReason: native.reason,
      };
    })();
    prepared.set(key, promise);
    promise.catch(() => prepared.delete(key));
  }
  return promise;
}
