// Agents published for every sandbox to bind (SHARED_AGENT_DIR, one file per build of the agent)
// pile up as the service is upgraded: each build publishes a file of its own, about 6.5 MiB. At
// its start the service removes those no process on the host runs, after it adopted the sandboxes
// left running. A file is in use when a process's executable is that very file (the agent runs
// as /.aiem/agent in its sandbox, but its /proc/<pid>/exe still leads to the published inode).
// Files published lately are kept: another service on the host may be about to start a sandbox
// with one. Only the agents' own names are touched (and the leftovers of an interrupted publish).
import * as fs from "node:fs";
import * as path from "node:path";

/** How old a published agent must be before it may be removed. */
export const OLD_AGENT_GRACE_MS = 10 * 60_000;

const AGENT_FILE = /^native-aiem-agent-[0-9a-f]+$/;
const STAGING_FILE = /^\.native-aiem-agent-[0-9a-f]+\.\d+\.\d+$/;

/** The files (device and inode) that processes of the host run, as far as /proc shows them. */
async function executablesInUse(): Promise<Set<string>> {
  const inUse = new Set<string>();
  let pids: string[];
  try {
    pids = (await fs.promises.readdir("/proc")).filter((name) => /^\d+$/.test(name));
  } catch {
    return inUse;
  }
  for (const pid of pids) {
    try {
      const st = await fs.promises.stat(`/proc/${pid}/exe`, { bigint: true });
      inUse.add(`${st.dev}:${st.ino}`);
    } catch {
      // ended meanwhile, a kernel thread, or not ours to see
    }
  }
  return inUse;
}

/**
 * Removes the published agents in `dir` that no process runs and that are older than
 * `graceMs`; returns the names removed. Failures (not root, no such directory) remove nothing.
 */
export async function removeUnusedAgents(dir: string, graceMs = OLD_AGENT_GRACE_MS): Promise<string[]> {
  let names: string[];
  try {
    names = (await fs.promises.readdir(dir)).filter((n) => AGENT_FILE.test(n) || STAGING_FILE.test(n));
  } catch {
    return [];
  }
  if (names.length === 0) return [];
  const inUse = await executablesInUse();
  const removed: string[] = [];
  const before = Date.now() - graceMs;
  for (const name of names) {
    const file = path.join(dir, name);
    try {
      const st = await fs.promises.lstat(file, { bigint: true });
      if (!st.isFile() || Number(st.mtimeMs) > before || inUse.has(`${st.dev}:${st.ino}`)) continue;
      await fs.promises.unlink(file);
      removed.push(name);
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return removed;
}
