// Resource limits of a sandbox: what this machine can enforce and how.
//   memory, CPU, processes: a cgroup of the sandbox's own (cgroup v1, or v2 where delegated),
//     nested under the service's own cgroup; the launcher joins it before bubblewrap starts, so
//     the agent and everything it starts are inside from the first instruction.
//   storage: an ext4 filesystem image of the template's size, loop-mounted as the sandbox root
//     inside a private mount namespace (so nothing stays mounted when the sandbox ends).
// Without cgroups the closest is a per-process rlimit set by the spawn helper: RLIMIT_AS for
// memory (virtual, per process) and RLIMIT_FSIZE for storage (per file); CPU and process counts
// then go unlimited. Every sandbox reports which mechanism applies to each limit.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

export type LimitMechanism = "cgroup-v1" | "cgroup-v2" | "loop-ext4" | "rlimit" | "none";

/** The limits a sandbox asks for, from its template. Unset or 0 means unlimited. */
export interface SandboxLimits {
  /** Hard memory limit in bytes (template memoryBytesLimit). */
  readonly memoryBytes?: number | bigint | undefined;
  /** CPU limit in milli-cores, 1000 = one core (template milliCpuLimit). */
  readonly milliCpuLimit?: number | undefined;
  /** CPU weight in milli-cores (template milliCpuRequest); defaults to the limit. */
  readonly milliCpuRequest?: number | undefined;
  /** Size of the sandbox's filesystem in bytes (template storageBytes). */
  readonly storageBytes?: number | bigint | undefined;
  /** Most processes and threads at once; the runtime's default when unset. */
  readonly maxProcesses?: number | undefined;
}

/** How one limit is enforced for a sandbox. */
export interface AppliedLimit {
  readonly mechanism: LimitMechanism;
  /** The enforced value (bytes, milli-cores or a count); undefined when unlimited. */
  readonly value?: number | undefined;
  /** Why the limit is weaker than asked, when it is. */
  readonly note?: string | undefined;
}

export interface AppliedLimits {
  readonly memory: AppliedLimit;
  readonly cpu: AppliedLimit;
  readonly processes: AppliedLimit;
  readonly storage: AppliedLimit;
}

/** What the machine supports, found once per runtime. */
export interface LimitSupport {
  readonly cgroup: CgroupSupport | undefined;
  readonly cgroupUnavailableReason: string | undefined;
  readonly storageImages: boolean;
  readonly storageUnavailableReason: string | undefined;
}

export interface CgroupSupport {
  readonly version: 1 | 2;
  /**
   * v1: the directory under which sandbox cgroups are made, per controller (cpuacct only
   * accounts, for the CPU figures of metrics). v2: one directory.
   */
  readonly parents: Readonly<Partial<Record<"memory" | "cpu" | "pids" | "cpuacct", string>>>;
}

/** What the kernel charged to a sandbox's cgroup; a figure is undefined without its controller. */
export interface CgroupUsage {
  readonly memoryBytes?: bigint | undefined;
  readonly cpuNanos?: bigint | undefined;
  /** Processes the kernel killed for going over the memory limit, since the cgroup was made. */
  readonly oomKills?: number | undefined;
}

/** A sandbox's cgroup: the files the launcher writes its pid to, and how to remove it. */
export interface SandboxCgroup {
  readonly procsFiles: readonly string[];
  readonly applied: Pick<AppliedLimits, "memory" | "cpu" | "processes">;
  /** Reads the memory and CPU time charged to the cgroup now. */
  usage(): CgroupUsage;
  remove(): Promise<void>;
}

interface MountInfo {
  readonly root: string;
  readonly mountPoint: string;
  readonly fsType: string;
  readonly superOptions: readonly string[];
}

function readMounts(): MountInfo[] {
  const mounts: MountInfo[] = [];
  for (const line of fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const fields = left.split(" ");
    const tail = right.split(" ");
    mounts.push({
      root: fields[3] ?? "/",
      mountPoint: (fields[4] ?? "").replace(/\\040/g, " "),
      fsType: tail[0] ?? "",
      superOptions: (tail[2] ?? "").split(","),
    });
  }
  return mounts;
}

function ownCgroups(): Map<string, string> {
  const result = new Map<string, string>();
  for (const line of fs.readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    const controllers = match[2]!;
    if (controllers === "") result.set("", match[3]!);
    for (const c of controllers.split(",")) if (c) result.set(c, match[3]!);
  }
  return result;
}

function cgroupDir(mount: MountInfo, own: string): string {
  const relative = mount.root !== "/" && own.startsWith(mount.root) ? own.slice(mount.root.length) : own;
  return path.join(mount.mountPoint, relative);
}

/** Tries to make and remove a child cgroup, which is what every sandbox will do. */
function canCreateChild(dir: string): string | undefined {
  const probe = path.join(dir, `aiem-probe-${process.pid}`);
  try {
    fs.mkdirSync(probe);
    fs.rmdirSync(probe);
    return undefined;
  } catch (error) {
    return `cannot create a cgroup under ${dir}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
  }
}

function detectCgroupV1(mounts: MountInfo[], own: Map<string, string>): { support?: CgroupSupport; reason?: string } {
  const parents: Partial<Record<"memory" | "cpu" | "pids" | "cpuacct", string>> = {};
  const reasons: string[] = [];
  for (const controller of ["memory", "cpu", "pids", "cpuacct"] as const) {
    const mount = mounts.find((m) => m.fsType === "cgroup" && m.superOptions.includes(controller));
    const ownPath = own.get(controller);
    if (!mount || ownPath === undefined) continue;
    const dir = cgroupDir(mount, ownPath);
    const problem = canCreateChild(dir);
    if (problem) reasons.push(problem);
    else parents[controller] = dir;
  }
  if (parents.memory === undefined && parents.cpu === undefined && parents.pids === undefined) {
    return { reason: reasons[0] ?? "no cgroup v1 memory, cpu or pids hierarchy is mounted" };
  }
  return { support: { version: 1, parents } };
}

function detectCgroupV2(mounts: MountInfo[], own: Map<string, string>): { support?: CgroupSupport; reason?: string } {
  const mount = mounts.find((m) => m.fsType === "cgroup2");
  const ownPath = own.get("");
  if (!mount || ownPath === undefined) return { reason: "no cgroup v2 hierarchy is mounted" };
  // Processes may only sit in leaf cgroups, so sandboxes go under a child of the service's
  // cgroup, and that child needs the controllers delegated to it.
  const base = cgroupDir(mount, ownPath);
  const problem = canCreateChild(base);
  if (problem) return { reason: problem };
  try {
    const available = fs.readFileSync(path.join(base, "cgroup.controllers"), "utf8").trim().split(/\s+/);
    const wanted = ["memory", "cpu", "pids"].filter((c) => available.includes(c));
    if (wanted.length === 0) return { reason: `no memory, cpu or pids controller is delegated to ${base}` };
    const enabled = fs.readFileSync(path.join(base, "cgroup.subtree_control"), "utf8").trim().split(/\s+/);
    const missing = wanted.filter((c) => !enabled.includes(c));
    if (missing.length > 0) {
      fs.writeFileSync(path.join(base, "cgroup.subtree_control"), missing.map((c) => `+${c}`).join(" "));
    }
    const parents: Partial<Record<"memory" | "cpu" | "pids", string>> = {};
    for (const c of wanted as ("memory" | "cpu" | "pids")[]) parents[c] = base;
    return { support: { version: 2, parents } };
  } catch (error) {
    return {
      reason: `cgroup v2 controllers cannot be enabled under ${base} (${(error as NodeJS.ErrnoException).code ?? String(error)}); run the service in a delegated cgroup`,
    };
  }
}

export function findTool(name: string): string | undefined {
  for (const dir of ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]) {
    const file = path.join(dir, name);
    if (fs.existsSync(file)) return file;
  }
  return undefined;
}

export interface DetectOptions {
  readonly useCgroups: boolean;
  readonly useStorageImages: boolean;
}

export function detectLimitSupport(options: DetectOptions): LimitSupport {
  let cgroup: CgroupSupport | undefined;
  let cgroupUnavailableReason: string | undefined;
  if (!options.useCgroups) {
    cgroupUnavailableReason = "cgroups are turned off in the runtime options";
  } else {
    try {
      const mounts = readMounts();
      const own = ownCgroups();
      const v1 = detectCgroupV1(mounts, own);
      if (v1.support) cgroup = v1.support;
      else {
        const v2 = detectCgroupV2(mounts, own);
        cgroup = v2.support;
        cgroupUnavailableReason = cgroup ? undefined : `${v1.reason}; ${v2.reason}`;
      }
    } catch (error) {
      cgroupUnavailableReason = `cannot read this process's cgroups: ${String(error)}`;
    }
  }

  let storageImages = false;
  let storageUnavailableReason: string | undefined;
  if (!options.useStorageImages) {
    storageUnavailableReason = "storage images are turned off in the runtime options";
  } else if (process.getuid?.() !== 0) {
    storageUnavailableReason = "mounting a storage image needs root";
  } else if (!findTool("mkfs.ext4") || !findTool("unshare") || !findTool("mount")) {
    storageUnavailableReason = "mkfs.ext4, unshare or mount is missing";
  } else if (!fs.existsSync("/dev/loop-control")) {
    storageUnavailableReason = "the machine has no loop devices (/dev/loop-control)";
  } else {
    storageImages = true;
  }
  return { cgroup, cgroupUnavailableReason, storageImages, storageUnavailableReason };
}

function toNumber(value: number | bigint | undefined): number {
  if (value === undefined) return 0;
  return Number(value);
}

/** Memory and CPU limits below these cannot run an agent; smaller requests are raised to them. */
export const MIN_MEMORY_BYTES = 64 << 20;
export const MIN_STORAGE_BYTES = 16 << 20;

async function removeCgroupDir(dir: string): Promise<void> {
  // The kernel refuses while processes are still being torn down; they are, so wait a little.
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      fs.rmdirSync(dir);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return;
      if (code !== "EBUSY") return;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
}

/** A short stable name for the runtime's group of cgroups, so two runtimes never share one. */
export function runtimeCgroupName(dataDir: string): string {
  return `aiem-${createHash("sha256").update(path.resolve(dataDir)).digest("hex").slice(0, 10)}`;
}

/** Makes the sandbox's cgroup(s) and writes its limits. */
export function createSandboxCgroup(
  support: CgroupSupport,
  groupName: string,
  sandboxId: string,
  limits: SandboxLimits,
  defaultMaxProcesses: number,
): SandboxCgroup {
  const dirs = new Map<string, string>();
  const ensure = (parent: string): string => {
    const group = path.join(parent, groupName);
    const dir = path.join(group, sandboxId);
    if (support.version === 2) {
      fs.mkdirSync(group, { recursive: true });
      enableGroupControllers(support, group);
    }
    fs.mkdirSync(dir, { recursive: true });
    dirs.set(dir, dir);
    return dir;
  };
  const mechanism: LimitMechanism = support.version === 1 ? "cgroup-v1" : "cgroup-v2";
  const write = (dir: string, file: string, value: string) => fs.writeFileSync(path.join(dir, file), value);
  try {
    return configure();
  } catch (error) {
    for (const d of dirs.values()) {
      try {
        fs.rmdirSync(d);
      } catch {
        // left for the next start of this sandbox, which reuses it
      }
    }
    throw error;
  }

  function configure(): SandboxCgroup {
    let memory: AppliedLimit = { mechanism: "none", note: "cgroup memory controller unavailable" };
    let cpu: AppliedLimit = { mechanism: "none", note: "cgroup cpu controller unavailable" };
    let processes: AppliedLimit = { mechanism: "none", note: "cgroup pids controller unavailable" };

    const memoryBytes = toNumber(limits.memoryBytes);
    if (support.parents.memory) {
      const dir = ensure(support.parents.memory);
      if (memoryBytes > 0) {
        const bytes = Math.max(memoryBytes, MIN_MEMORY_BYTES);
        if (support.version === 1) {
          // Raise the swap-inclusive limit first when growing, lower it last when shrinking: the
          // kernel requires memsw >= memory at every step.
          const memsw = path.join(dir, "memory.memsw.limit_in_bytes");
          const hasMemsw = fs.existsSync(memsw);
          try {
            write(dir, "memory.limit_in_bytes", String(bytes));
            if (hasMemsw) write(dir, "memory.memsw.limit_in_bytes", String(bytes));
          } catch {
            if (hasMemsw) write(dir, "memory.memsw.limit_in_bytes", String(bytes));
            write(dir, "memory.limit_in_bytes", String(bytes));
          }
        } else {
          write(dir, "memory.max", String(bytes));
          if (fs.existsSync(path.join(dir, "memory.swap.max"))) write(dir, "memory.swap.max", "0");
        }
        memory = {
          mechanism,
          value: bytes,
          note: bytes > memoryBytes ? `raised to the minimum of ${MIN_MEMORY_BYTES} bytes` : undefined,
        };
      } else {
        if (support.version === 1) write(dir, "memory.limit_in_bytes", "-1");
        else write(dir, "memory.max", "max");
        memory = { mechanism: "none", note: "no memory limit requested" };
      }
    }

    const milliCpu = limits.milliCpuLimit ?? 0;
    const request = limits.milliCpuRequest || milliCpu;
    if (support.parents.cpu) {
      const dir = ensure(support.parents.cpu);
      const period = 100_000;
      const quota = milliCpu > 0 ? Math.max(1000, Math.round((milliCpu * period) / 1000)) : -1;
      if (support.version === 1) {
        write(dir, "cpu.cfs_period_us", String(period));
        write(dir, "cpu.cfs_quota_us", String(quota));
        if (request > 0) write(dir, "cpu.shares", String(Math.max(2, Math.round((request * 1024) / 1000))));
      } else {
        write(dir, "cpu.max", quota > 0 ? `${quota} ${period}` : `max ${period}`);
        if (request > 0)
          write(dir, "cpu.weight", String(Math.min(10_000, Math.max(1, Math.round((request * 100) / 1000)))));
      }
      cpu = milliCpu > 0 ? { mechanism, value: milliCpu } : { mechanism: "none", note: "no CPU limit requested" };
    }

    const maxProcesses = limits.maxProcesses ?? defaultMaxProcesses;
    if (support.parents.pids) {
      const dir = ensure(support.parents.pids);
      write(dir, "pids.max", maxProcesses > 0 ? String(maxProcesses) : "max");
      processes = maxProcesses > 0 ? { mechanism, value: maxProcesses } : { mechanism: "none" };
    }

    // v1 keeps CPU accounting in its own controller, often mounted apart from cpu.
    const cpuacctDir = support.version === 1 && support.parents.cpuacct ? ensure(support.parents.cpuacct) : undefined;
    const memoryDir = support.parents.memory ? ensure(support.parents.memory) : undefined;
    const cpuDir = support.version === 2 ? [...dirs.values()][0] : cpuacctDir;

    const procsFiles = [...dirs.values()].map((d) => path.join(d, "cgroup.procs"));
    // One removal per cgroup, however many callers ask: a second, late rmdir could otherwise
    // remove the fresh cgroup of the sandbox's next start.
    let removal: Promise<void> | undefined;
    return {
      procsFiles,
      applied: { memory, cpu, processes },
      usage() {
        return readCgroupUsage(support.version, memoryDir, cpuDir);
      },
      remove() {
        removal ??= Promise.all([...dirs.values()].map((d) => removeCgroupDir(d))).then(() => undefined);
        return removal;
      },
    };
  }
}

function readNumber(file: string): bigint | undefined {
  try {
    const text = fs.readFileSync(file, "utf8").trim();
    return /^\d+$/.test(text) ? BigInt(text) : undefined;
  } catch {
    // the controller's file is missing (or the cgroup is gone)
    return undefined;
  }
}

/** Memory in use (page cache included) and CPU time charged, from a sandbox's cgroup files. */
export function readCgroupUsage(
  version: 1 | 2,
  memoryDir: string | undefined,
  cpuDir: string | undefined,
): CgroupUsage {
  const memoryBytes = memoryDir
    ? readNumber(path.join(memoryDir, version === 1 ? "memory.usage_in_bytes" : "memory.current"))
    : undefined;
  let oomKills: number | undefined;
  if (memoryDir) {
    try {
      const m = /^oom_kill (\d+)$/m.exec(
        fs.readFileSync(path.join(memoryDir, version === 1 ? "memory.oom_control" : "memory.events"), "utf8"),
      );
      if (m) oomKills = Number(m[1]);
    } catch {
      // an older kernel without the counter
    }
  }
  let cpuNanos: bigint | undefined;
  if (cpuDir && version === 1) cpuNanos = readNumber(path.join(cpuDir, "cpuacct.usage"));
  if (cpuDir && version === 2) {
    try {
      const m = /^usage_usec (\d+)$/m.exec(fs.readFileSync(path.join(cpuDir, "cpu.stat"), "utf8"));
      if (m) cpuNanos = BigInt(m[1]!) * 1000n;
    } catch {
      // no cpu.stat: no CPU figure from the cgroup
    }
  }
  return { memoryBytes, cpuNanos, oomKills };
}

/**
 * The runtime's group of sandbox cgroups in the pids hierarchy, made if missing (with its
 * controllers on v2), its pids.max set to `max` (0: unbounded): a bound on the processes of all
 * the runtime's sandboxes together, which the service, outside the group, never counts against.
 * Undefined without a pids controller.
 */
export function boundRuntimeProcesses(support: CgroupSupport, groupName: string, max: number): string | undefined {
  const parent = support.parents.pids;
  if (parent === undefined) return undefined;
  const group = path.join(parent, groupName);
  fs.mkdirSync(group, { recursive: true });
  if (support.version === 2) enableGroupControllers(support, group);
  fs.writeFileSync(path.join(group, "pids.max"), max > 0 ? String(max) : "max");
  return group;
}

/** The processes counted in a pids cgroup and its bound; undefined when they cannot be read. */
export function readProcessCount(group: string): { current: number; max: number | undefined } | undefined {
  try {
    const current = Number(fs.readFileSync(path.join(group, "pids.current"), "utf8").trim());
    const max = fs.readFileSync(path.join(group, "pids.max"), "utf8").trim();
    return { current, max: max === "max" ? undefined : Number(max) };
  } catch {
    return undefined;
  }
}

function enableGroupControllers(support: CgroupSupport, group: string): void {
  const wanted = Object.keys(support.parents);
  let enabled: string[] = [];
  try {
    enabled = fs.readFileSync(path.join(group, "cgroup.subtree_control"), "utf8").trim().split(/\s+/);
  } catch {
    // read below as none enabled
  }
  const missing = wanted.filter((c) => !enabled.includes(c));
  if (missing.length > 0)
    fs.writeFileSync(path.join(group, "cgroup.subtree_control"), missing.map((c) => `+${c}`).join(" "));
}

/** Removes the runtime's (empty) group of sandbox cgroups, when it closes. */
export function removeRuntimeCgroupGroup(support: CgroupSupport, groupName: string): void {
  for (const parent of new Set(Object.values(support.parents))) {
    try {
      fs.rmdirSync(path.join(parent, groupName));
    } catch {
      // not there, or another runtime on the same data directory still has sandboxes in it
    }
  }
}
