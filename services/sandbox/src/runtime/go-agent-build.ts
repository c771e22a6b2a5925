// The native sandbox agent (services/sandbox/go-agent): one static Go binary, built by
// `npm install`/`npm run setup` and on a runtime's first use when missing. Builds are named by a
// hash of the agent's sources and the version they report, and kept in the git-ignored
// `.tools/go-agent/`, so a source change builds a new binary and an unchanged one is reused.
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

const runtimeDir = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.join(runtimeDir, "..", "..", "..", "..");

/** The agent's Go module. */
export const GO_AGENT_SOURCE_DIR = path.join(repoRoot, "services", "sandbox", "go-agent");
/** Where builds are kept. */
export const GO_AGENT_BUILD_DIR = path.join(repoRoot, ".tools", "go-agent");

/** The `go` command: on PATH, or where the official archive puts it. */
export function findGo(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = [...(env.PATH ?? "").split(path.delimiter).filter(Boolean), "/usr/local/go/bin"];
  for (const dir of dirs) {
    const file = path.join(dir, "go");
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

/** The hash naming a build: every non-test source file of the module, and the version. */
export function goAgentSourceHash(version: string): string {
  const hash = createHash("sha256").update(version).update("\0");
  const names = fs
    .readdirSync(GO_AGENT_SOURCE_DIR)
    .filter((n) => (n.endsWith(".go") && !n.endsWith("_test.go")) || n === "go.mod")
    .sort();
  for (const name of names) {
    hash
      .update(name)
      .update("\0")
      .update(fs.readFileSync(path.join(GO_AGENT_SOURCE_DIR, name)))
      .update("\0");
  }
  return hash.digest("hex").slice(0, 16);
}

export function readSandboxVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(runtimeDir, "..", "..", "package.json"), "utf8")) as {
      version?: string;
    };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

const builds = new Map<string, Promise<{ path?: string; reason?: string }>>();

/**
 * Builds the agent (statically linked, no cgo) unless a build of these sources exists; resolves
 * with its path, or why there is none. `arch` (a GOARCH) builds it for Linux on that architecture
 * instead of this machine's.
 */
export function buildGoAgent(
  version: string = readSandboxVersion(),
  outDir: string = GO_AGENT_BUILD_DIR,
  arch?: string,
): Promise<{ path?: string; reason?: string }> {
  // A compiled tree (`npm run build`) carries no Go sources: there is nothing to build from.
  if (!fs.existsSync(GO_AGENT_SOURCE_DIR))
    return Promise.resolve({ reason: `the native agent's sources are not in this tree (${GO_AGENT_SOURCE_DIR})` });
  const file = path.join(outDir, `aiem-agent-${goAgentSourceHash(version)}${arch ? `-linux-${arch}` : ""}`);
  let promise = builds.get(file);
  if (promise === undefined) {
    promise = (async () => {
      if (fs.existsSync(file)) return { path: file };
      const go = findGo();
      if (go === undefined) {
        return { reason: "no `go` on PATH nor in /usr/local/go/bin (install Go 1.24 or later)" };
      }
      fs.mkdirSync(outDir, { recursive: true });
      const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
      try {
        await execFileAsync(
          go,
          ["build", "-trimpath", "-buildvcs=false", "-ldflags", `-s -w -X main.version=${version}`, "-o", temp, "."],
          {
            cwd: GO_AGENT_SOURCE_DIR,
            env: {
              ...process.env,
              CGO_ENABLED: "0",
              GOFLAGS: "-mod=mod",
              ...(arch ? { GOOS: "linux", GOARCH: arch } : {}),
            },
            timeout: 300_000,
          },
        );
        fs.chmodSync(temp, 0o755);
        fs.renameSync(temp, file);
        return { path: file };
      } catch (error) {
        fs.rmSync(temp, { force: true });
        const message = error instanceof Error ? error.message.split("\n").slice(0, 4).join(" ") : String(error);
        return { reason: `the sandbox agent could not be built with ${go}: ${message}` };
      }
    })();
    builds.set(file, promise);
    promise.then(
      (r) => r.path === undefined && builds.delete(file),
      () => builds.delete(file),
    );
  }
  return promise;
}
