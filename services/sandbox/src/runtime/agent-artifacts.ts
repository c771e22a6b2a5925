// The files the runtime needs for every sandbox: the agent (services/sandbox/go-agent, one static
// binary) and, on the host side, the launcher, the user-namespace entry program, the peer
// credentials addon and the seccomp filter (all from C; the filter is the output of
// seccomp-policy.c, built with libseccomp). All are built on first use, named by a hash of their
// source and kept in a cache directory, so a sandbox start never waits for a build and sandboxes
// started from different builds of the service never see each other's agent.
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { GO_AGENT_SOURCE_DIR, buildGoAgent, goAgentSourceHash, readSandboxVersion } from "./go-agent-build.js";

const execFileAsync = promisify(execFile);

const runtimeSourceDir = path.dirname(fileURLToPath(import.meta.url));

export interface AgentArtifacts {
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
   * The Node-API addon that reads a unix socket's peer credentials (peer-credentials.c), with
   * which the service checks every connection to an agent. Sandboxes do not start without it.
   */
  readonly peerCredentialsPath?: string | undefined;
  readonly peerCredentialsUnavailableReason?: string | undefined;
  /** The agent (go-agent-build.ts), copied into the cache; undefined when it could not be built. */
  readonly agentPath?: string | undefined;
  readonly agentUnavailableReason?: string | undefined;
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
  const compiler = process.env.CC || "cc";
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

/**
 * The agent in the cache, built there from its sources unless a build of them is there already
 * (an image's cache, prepared where Go was, serves where it is not).
 */
async function cachedAgent(dir: string, version: string): Promise<{ path?: string; reason?: string }> {
  if (fs.existsSync(GO_AGENT_SOURCE_DIR)) {
    const file = path.join(dir, `native-aiem-agent-${goAgentSourceHash(version)}`);
    if (fs.existsSync(file)) return { path: file };
  }
  const built = await buildGoAgent(version);
  if (built.path === undefined) return built;
  const file = path.join(dir, `native-${path.basename(built.path)}`);
  writeOnce(file, fs.readFileSync(built.path), 0o755);
  return { path: file };
}

const prepared = new Map<string, Promise<AgentArtifacts>>();

/** Builds (or finds in `cacheDir`) the agent and the helpers; memoised per directory. */
export function prepareAgentArtifacts(cacheDir: string): Promise<AgentArtifacts> {
  const key = path.resolve(cacheDir);
  let promise = prepared.get(key);
  if (promise === undefined) {
    promise = (async () => {
      const dir = path.resolve(cacheDir);
      fs.mkdirSync(dir, { recursive: true });
      const version = readSandboxVersion();
      const [launch, enter, seccomp, peer, agent] = await Promise.all([
        compile(dir, "sandbox-launch", path.join(runtimeSourceDir, "sandbox-launch.c")),
        compile(dir, "sandbox-enter", path.join(runtimeSourceDir, "sandbox-enter.c")),
        buildSeccompFilter(dir),
        preparePeerCredentials(dir),
        cachedAgent(dir, version),
      ]);
      return {
        version,
        launchPath: launch.path,
        launchUnavailableReason: launch.reason,
        enterPath: enter.path,
        enterUnavailableReason: enter.reason,
        seccompFilterPath: seccomp.path,
        seccompUnavailableReason: seccomp.reason,
        peerCredentialsPath: peer.path,
        peerCredentialsUnavailableReason: peer.reason,
        agentPath: agent.path,
        agentUnavailableReason: agent.reason,
      };
    })();
    prepared.set(key, promise);
    promise.catch(() => prepared.delete(key));
  }
  return promise;
}
