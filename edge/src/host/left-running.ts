// What a stopped server leaves running in its data directory (sandboxes and engines outlive it,
// so that a restart adopts them: docs/adr/0076), and `npm run stop -- --all`, which ends them.
import path from "node:path";
import { acquireDirectoryLock, DirectoryLockedError, type DirectoryLock } from "@aiem/kit/db";
import { silentLogger } from "@aiem/kit/logger";
import { runningEngines, stopEngines } from "@aiem/engine";
import { runningSandboxes, stopLeftSandboxes } from "@aiem/sandbox/runtime";

export interface LeftRunning {
  readonly sandboxes: number;
  readonly engines: number;
}

export async function leftRunning(dataDir: string): Promise<LeftRunning> {
  return {
    sandboxes: runningSandboxes(dataDir).length,
    engines: (await runningEngines(path.join(dataDir, "engines"))).length,
  };
}

export const count = (n: number, word: "sandbox" | "engine") =>
  `${n} ${n === 1 ? word : word === "sandbox" ? "sandboxes" : "engines"}`;

/** The line `npm start` prints as it ends; undefined when nothing keeps running. */
export function leftRunningLine(left: LeftRunning, dataDirFromEnv: boolean): string | undefined {
  if (left.sandboxes === 0 && left.engines === 0) return undefined;
  const env = dataDirFromEnv ? " (with the same AIEM_DATA_DIR)" : "";
  return (
    `${count(left.sandboxes, "sandbox")} and ${count(left.engines, "engine")} keep running for the next start; ` +
    `to end them: npm run stop -- --all${env}`
  );
}

/** Nothing was stopped because a server holds the data directory. */
export class ServerRunningError extends Error {
  override readonly name = "ServerRunningError";
}

/**
 * Ends every sandbox and engine of the data directory, keeping their files. It takes the locks a
 * sandbox and an engine service hold on the directory, so it refuses while a server (all-in-one
 * or a part) runs there, whose reconcilers would start them again; and no server starts meanwhile.
 */
export async function stopAll(dataDir: string): Promise<{ sandboxes: string[]; engines: string[] }> {
  const locks: DirectoryLock[] = [];
  try {
    for (const [dir, what] of [
      ["sandboxes", "the sandboxes of this directory"],
      ["engines", "the engines of this directory"],
    ] as const) {
      try {
        locks.push(acquireDirectoryLock(path.join(dataDir, dir), what));
      } catch (err) {
        if (err instanceof DirectoryLockedError) {
          throw new ServerRunningError(
            `a server is running on ${dataDir}: ${err.message.replace(/;.*$/, "")}. ` +
              "Stop it first (Ctrl-C, or SIGTERM to that process), then run this again",
          );
        }
        throw err;
      }
    }
    const sandboxes = await stopLeftSandboxes(dataDir);
    const engines = await stopEngines(path.join(dataDir, "engines"), silentLogger);
    return { sandboxes, engines };
  } finally {
    for (const lock of locks) lock.release();
  }
}
