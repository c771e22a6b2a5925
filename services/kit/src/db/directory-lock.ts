// One process at a time per embedded database directory. PGlite has no lock of its own, and two
// processes writing one data directory corrupt it; the second must stop with a clear error.
import { readFileSync, unlinkSync, writeFileSync } from "node:fs";

export class DirectoryLockedError extends Error {
  override readonly name = "DirectoryLockedError";
}

export interface DirectoryLock {
  release(): void;
}

interface Holder {
  readonly pid: number;
  /** The holder's start time as the kernel counts it, so a reused pid is not taken for it. */
  readonly started: string | undefined;
}

/**
 * Takes `<dir>.lock`, recording this process. A lock left by a process that is gone is taken
 * over; one held by a live process throws DirectoryLockedError naming it.
 */
export function acquireDirectoryLock(dir: string, what = "the embedded database"): DirectoryLock {
  const file = `${dir}.lock`;
  const me: Holder = { pid: process.pid, started: startTime(process.pid) };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, JSON.stringify(me), { flag: "wx" });
      return { release: () => releaseIfMine(file) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = readHolder(file);
    if (holder && holder.pid !== process.pid && alive(holder)) {
      throw new DirectoryLockedError(
        `${what} in ${dir} is in use by process ${holder.pid}; stop that process or give this one another AIEM_DATA_DIR`,
      );
    }
    // Stale (or our own from before): remove it and try again; another process racing for it
    // makes `wx` fail again and the loop read its record.
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
  }
  throw new DirectoryLockedError(`could not take the lock ${file}`);
}

function releaseIfMine(file: string): void {
  const holder = readHolder(file);
  if (holder?.pid !== process.pid) return;
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

function readHolder(file: string): Holder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as Partial<Holder>;
    return typeof parsed.pid === "number" ? { pid: parsed.pid, started: parsed.started } : undefined;
  } catch {
    return undefined; // unreadable or half-written: treated as stale
  }
}

function alive(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const stat = procStat(holder.pid);
  // A killed holder its parent has not reaped yet still answers kill(0), as a zombie.
  if (stat?.state === "Z") return false;
  return holder.started === undefined || stat === undefined || stat.started === holder.started;
}

function startTime(pid: number): string | undefined {
  return procStat(pid)?.started;
}

/** State (field 3) and start time (field 22) of /proc/<pid>/stat on Linux; undefined elsewhere. */
function procStat(pid: number): { state: string | undefined; started: string | undefined } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses; count from its closing one.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0], started: fields[19] };
  } catch {
    return undefined;
  }
}
