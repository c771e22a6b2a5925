import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, readFileSync, readdirSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { kubernetesCacheDir, missingKubernetesArtifacts } from "../../services/kit/src/testing/kubernetes-binaries.js";
import type { Dependency, Facts } from "./plan.js";

export interface Paths {
  readonly venvDir: string;
  readonly requirements: string;
}

/** The file in the virtual environment that records which requirements it was built from. */
export function venvStamp(paths: Paths): string {
  return join(paths.venvDir, ".requirements-sha256");
}

export function requirementsDigest(paths: Paths): string {
  return createHash("sha256").update(readFileSync(paths.requirements)).digest("hex");
}

export async function probeFacts(
  deps: readonly Dependency[],
  paths: Paths,
  services: boolean,
  kubernetes = false,
): Promise<Facts> {
  const present = new Set(deps.filter((d) => d.probes.some(probeMatches)).map((d) => d.debianPackage));
  return {
    present,
    root: process.getuid?.() === 0,
    aptGet: findCommand("apt-get") !== undefined,
    pythonVenv: spawnSync("python3", ["-c", "import venv, ensurepip"], { stdio: "ignore" }).status === 0,
    venv: venvState(paths),
    ...(services ? { postgresUp: await portOpen(5432), natsUp: await portOpen(4222) } : {}),
    ...(kubernetes ? { kubernetesMissing: missingKubernetesArtifacts(kubernetesCacheDir()) } : {}),
  };
}

function venvState(paths: Paths): Facts["venv"] {
  if (!existsSync(join(paths.venvDir, "bin", "python"))) return "missing";
  const stamp = existsSync(venvStamp(paths)) ? readFileSync(venvStamp(paths), "utf8").trim() : "";
  return stamp === requirementsDigest(paths) ? "current" : "stale";
}

function probeMatches(probe: string): boolean {
  if (!probe.startsWith("/")) return findCommand(probe) !== undefined;
  if (!probe.includes("*")) return existsSync(probe);
  return expandGlob(probe).length > 0;
}

/** Paths matching `probe`, whose one `*` stands for a whole directory entry name. */
export function expandGlob(probe: string): string[] {
  const segments = probe.split("/");
  const star = segments.indexOf("*");
  if (star < 0) return existsSync(probe) ? [probe] : [];
  const parent = segments.slice(0, star).join("/") || "/";
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return [];
  }
  return entries
    .sort()
    .map((entry) => [...segments.slice(0, star), entry, ...segments.slice(star + 1)].join("/"))
    .filter((candidate) => existsSync(candidate));
}

/** An executable on PATH, or in the sbin folders a non-login root shell may leave out. */
export function findCommand(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/sbin"].filter(Boolean);
  for (const dir of dirs) {
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

export function portOpen(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}
