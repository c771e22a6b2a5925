// What the sandbox uses, measured from inside: the filesystem under its root, and the memory and
// CPU time of the agent's process tree read from /proc. The sandbox service prefers its cgroup's
// figures where it has one; these are the fallback, and the only source of disk figures (the
// sandbox's storage image is mounted in a namespace the host cannot see).
import * as fs from "node:fs";

/** Linux reports /proc times in USER_HZ, which is 100 on every architecture's ABI. */
const USER_HZ = 100;

export interface ProcStat {
  readonly pid: number;
  readonly ppid: number;
  /** utime + stime + cutime + cstime: the process's CPU time and that of children it reaped. */
  readonly ticks: number;
}

export interface Usage {
  readonly diskTotalBytes: bigint;
  readonly diskAvailableBytes: bigint;
  readonly memoryBytes: bigint;
  readonly cpuNanos: bigint;
}

/** Parses /proc/<pid>/stat; the command name may hold spaces and parentheses, so fields count from its end. */
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  const rest = text.slice(close + 2).split(" ");
  const field = (i: number) => Number(rest[i]);
  const ppid = field(1);
  const ticks = field(11) + field(12) + field(13) + field(14);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isFinite(ticks)) return undefined;
  return { pid, ppid, ticks };
}

/** The pids of `root` and everything below it. */
export function processTree(stats: readonly ProcStat[], root: number): Set<number> {
  const children = new Map<number, number[]>();
  for (const s of stats) {
    let list = children.get(s.ppid);
    if (!list) children.set(s.ppid, (list = []));
    list.push(s.pid);
  }
  const found = new Set<number>();
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    if (found.has(pid)) continue;
    found.add(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** Resident memory from /proc/<pid>/status (VmRSS, in kB); 0 for kernel threads and vanished processes. */
export function parseRssBytes(status: string): number {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return m ? Number(m[1]) * 1024 : 0;
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    // the process ended while it was being read
    return undefined;
  }
}

/** Measures the filesystem at `root` and the process tree of this agent. */
export function readUsage(root: string): Usage {
  const disk = fs.statfsSync(root, { bigint: true });
  const stats: ProcStat[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const text = readText(`/proc/${name}/stat`);
    const stat = text === undefined ? undefined : parseProcStat(text);
    if (stat) stats.push(stat);
  }
  const tree = processTree(stats, process.pid);
  let ticks = 0;
  let memory = 0;
  for (const s of stats) {
    if (!tree.has(s.pid)) continue;
    ticks += s.ticks;
    memory += parseRssBytes(readText(`/proc/${s.pid}/status`) ?? "");
  }
  return {
    diskTotalBytes: disk.blocks * disk.bsize,
    diskAvailableBytes: disk.bavail * disk.bsize,
    memoryBytes: BigInt(memory),
    cpuNanos: (BigInt(ticks) * 1_000_000_000n) / BigInt(USER_HZ),
  };
}
