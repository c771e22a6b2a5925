// Waiting for a launched agent: its "ready" line, or the launcher's or agent's exit and why.
import { childrenOf } from "./adopted-sandboxes.js";
import type { SpawnedProcess } from "./spawner.js";

/** What sandbox-launch's exit codes (and the shell fallback's) mean. */
const LAUNCHER_EXITS: Record<number, string> = {
  90: "could not make the launcher's mount namespace",
  91: "could not join the sandbox's cgroup",
  92: "could not mount the sandbox's storage image",
  93: "sandbox-enter was called wrongly",
  94: "could not give the sandbox's files to its uid range",
  95: "could not set up the sandbox's user namespace",
  96: "could not prepare the sandbox's stage (agent files, /etc)",
};

/**
 * Resolves once the agent printed "ready" (it listens), with undefined; or with why it will not:
 * the launcher or the agent exited, `command` could not run, or no word within `timeoutMs`.
 */
export function agentReady(child: SpawnedProcess, command: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise<string | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
    child.once("ready", () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    child.once("exit", (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      resolve(LAUNCHER_EXITS[code ?? -1] ?? `the agent exited (${signal ?? `code ${code}`})`);
    });
    child.once("error", (error: Error) => {
      clearTimeout(timer);
      resolve(error.message.startsWith("cannot") ? error.message : `cannot run ${command}: ${error.message}`);
    });
  });
}

/**
 * The host pid `depth` generations under `pid` when each generation has one child (bwrap, its
 * namespace's init, the agent), else undefined.
 */
export function onlyChild(pid: number, depth: number): number | undefined {
  let current = pid;
  for (let i = 0; i < depth; i++) {
    const children = childrenOf(current);
    if (children.length !== 1) return undefined;
    current = children[0]!;
  }
  return current;
}
