// What lets a runtime adopt the sandboxes an earlier one left running: the record kept beside
// each, and the processes' identities and ends read from /proc.
import { EventEmitter } from "node:events";
import * as fs from "node:fs";
import * as path from "node:path";
import type { AgentIdentity } from "./agent-peer.js";
import type { AppliedLimits, SandboxLimits } from "./limits.js";
import type { SandboxHandle } from "./runtime-types.js";
import type { SpawnedProcess } from "./spawner.js";

/** What a runtime that keeps sandboxes running records of each, for the next one to adopt it. */
export interface SandboxRecord {
  readonly pid: number;
  /** The process's start time in clock ticks (/proc/<pid>/stat field 22): a reused pid differs. */
  readonly startTime: string;
  readonly limits: SandboxLimits;
  readonly applied: AppliedLimits;
  readonly layers: SandboxHandle["layers"];
  readonly hostUid: number;
  /** The init of the sandbox's PID namespace (bwrap's child), by pid and start time. */
  readonly init?: { readonly pid: number; readonly startTime: string } | undefined;
  /**
   * The agent, as every connection to its socket is checked against (agent-peer.ts). Records
   * of sandboxes whose socket lay in the sandbox's reach (earlier versions) have none.
   */
  readonly agent?: AgentIdentity | undefined;
}

/** The init of the PID namespace under a confined sandbox's bwrap. */
export function namespaceInit(bwrapPid: number): SandboxRecord["init"] {
  const [pid] = childrenOf(bwrapPid);
  const startTime = pid === undefined ? undefined : processStartTime(pid);
  return pid === undefined || startTime === undefined ? undefined : { pid, startTime };
}

/**
 * Ends what is left of a sandbox whose bwrap ended: without --die-with-parent its namespace's
 * init outlives bwrap, and the kernel ends every process of the namespace with that init.
 */
export function killNamespaceInit(init: SandboxRecord["init"]): void {
  if (!init || processStartTime(init.pid) !== init.startTime) return;
  try {
    process.kill(init.pid, "SIGKILL");
  } catch {
    // already gone
  }
}

export function writeRecord(dir: string, record: SandboxRecord): void {
  const limits = Object.fromEntries(
    Object.entries(record.limits).map(([k, v]) => [k, typeof v === "bigint" ? Number(v) : v]),
  );
  const file = path.join(dir, "sandbox.json");
  fs.writeFileSync(`${file}.tmp`, JSON.stringify({ ...record, limits }));
  fs.renameSync(`${file}.tmp`, file);
}

/** The start time of a live (not zombie) process, or undefined. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" || fields[0] === "X" ? undefined : fields[19];
  } catch {
    return undefined;
  }
}

/** The children of `pid`, whichever of its threads started them (each thread lists its own). */
export function childrenOf(pid: number): number[] {
  try {
    return fs
      .readdirSync(`/proc/${pid}/task`)
      .flatMap((tid) => fs.readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/))
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * Ends a kept sandbox from its record alone (its agent does not answer, so it cannot be
 * adopted): its namespace's init, then bwrap, each only if it is still the recorded process.
 */
export function killRecorded(dir: string): void {
  const file = path.join(dir, "sandbox.json");
  let record: SandboxRecord;
  try {
    record = JSON.parse(fs.readFileSync(file, "utf8")) as SandboxRecord;
  } catch {
    return;
  }
  killNamespaceInit(record.init);
  if (processStartTime(record.pid) === record.startTime) {
    try {
      process.kill(record.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  fs.rmSync(file, { force: true });
}

/**
 * A sandbox adopted from an earlier runtime: not a child of this process, so its end is seen by
 * polling its /proc entry (Node has no pidfd).
 */
export class AdoptedProcess extends EventEmitter implements SpawnedProcess {
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  readonly #timer: NodeJS.Timeout;
  constructor(
    readonly pid: number,
    startTime: string,
  ) {
    super();
    this.#timer = setInterval(() => {
      if (processStartTime(pid) === startTime) return;
      clearInterval(this.#timer);
      // How it ended is not known to anyone but its late parent: reported as killed.
      this.signalCode = "SIGKILL";
      this.emit("exit", null, "SIGKILL");
    }, 200);
    // Watching never keeps the service alive; a stop in progress holds the loop itself.
    this.#timer.unref();
  }
  kill(signal: NodeJS.Signals): void {
    if (this.signalCode !== null) return;
    try {
      process.kill(this.pid, signal);
    } catch {
      // already gone
    }
  }
  release(): void {
    clearInterval(this.#timer);
  }
}
