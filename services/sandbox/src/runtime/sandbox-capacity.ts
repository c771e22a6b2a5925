// What the host can still give a new sandbox: storage for its image and processes under the
// bound of all sandboxes together. A start past either is refused before anything is made.
import * as fs from "node:fs";
import * as path from "node:path";
import { MIN_STORAGE_BYTES, type SandboxLimits, boundRuntimeProcesses, readProcessCount } from "./limits.js";
import { SandboxRuntimeError } from "./runtime-types.js";
import type { RuntimeState } from "./runtime-state.js";

/**
 * What a sandbox needs to start, counted against maxTotalProcesses: bubblewrap and its init, and
 * the agent with the threads it starts up front (go-agent/threads.go: 18 with 2 CPUs, up to 20).
 */
const AGENT_PROCESSES = 24;

/** Half of what the kernel allows in all, pids or threads: the rest stays the host's. */
export function defaultTotalProcesses(): number {
  const read = (file: string) => {
    try {
      return Number(fs.readFileSync(file, "utf8").trim()) || Number.POSITIVE_INFINITY;
    } catch {
      return Number.POSITIVE_INFINITY;
    }
  };
  const least = Math.min(read("/proc/sys/kernel/pid_max"), read("/proc/sys/kernel/threads-max"));
  return Number.isFinite(least) ? Math.floor(least / 2) : 16384;
}

function formatBytes(bytes: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** `dir`, or its nearest ancestor that exists (a data directory not made yet). */
function existingAncestor(dir: string): string {
  let current = path.resolve(dir);
  while (!fs.existsSync(current) && path.dirname(current) !== current) current = path.dirname(current);
  return current;
}

/** The sizes of the storage images of this runtime's sandboxes, and the bytes they take on disk. */
function storageImagesHeld(dataDir: string): { bytes: number; allocated: number } {
  let bytes = 0;
  let allocated = 0;
  let names: string[] = [];
  try {
    names = fs.readdirSync(path.join(dataDir, "sandboxes"));
  } catch {
    // no sandboxes yet
  }
  for (const name of names) {
    try {
      const st = fs.statSync(path.join(dataDir, "sandboxes", name, "root.img"));
      bytes += st.size;
      allocated += st.blocks * 512;
    } catch {
      // no image: no storage limit
    }
  }
  return { bytes, allocated };
}

function checkStorage(state: RuntimeState, limits: SandboxLimits, sandboxId: string | undefined): void {
  const requested = Math.max(Number(limits.storageBytes ?? 0), 0);
  const own = sandboxId === undefined ? undefined : path.join(state.dataDir, "sandboxes", sandboxId, "root.img");
  if (!state.support.storageImages || requested <= 0 || (own !== undefined && fs.existsSync(own))) return;
  const wanted = Math.max(requested, MIN_STORAGE_BYTES);
  const images = storageImagesHeld(state.dataDir);
  let held = images.bytes;
  for (const [id, bytes] of state.reservedStorage) if (id !== sandboxId) held += bytes;
  const configured = state.options.maxTotalStorageBytes;
  let bound = configured;
  if (bound === undefined) {
    const fsStat = fs.statfsSync(existingAncestor(state.dataDir));
    bound = Math.floor(0.9 * (fsStat.bavail * fsStat.bsize + images.allocated));
  }
  if (bound > 0 && held + wanted > bound) {
    throw new SandboxRuntimeError(
      "resource-exhausted",
      `the sandboxes on this host hold ${formatBytes(held)} of storage; another ${formatBytes(wanted)} would pass ` +
        `the bound of ${formatBytes(bound)} for all of them (AIEM_SANDBOX_MAX_TOTAL_STORAGE_BYTES` +
        `${configured === undefined ? ", by default 90% of what the data directory's file system has for them" : ""}); ` +
        "delete sandboxes that are no longer needed, or raise the bound",
    );
  }
}

function boundProcesses(state: RuntimeState): void {
  if (state.processGroup !== undefined || !state.support.cgroup?.parents.pids) return;
  state.processGroup = boundRuntimeProcesses(state.support.cgroup, state.groupName, state.maxTotalProcesses);
}

function checkProcesses(state: RuntimeState): void {
  boundProcesses(state);
  const { processGroup, maxTotalProcesses } = state;
  if (processGroup === undefined || maxTotalProcesses <= 0) return;
  const count = readProcessCount(processGroup);
  if (count !== undefined && count.current + AGENT_PROCESSES > maxTotalProcesses) {
    throw new SandboxRuntimeError(
      "resource-exhausted",
      `the sandboxes on this host run ${count.current} processes and threads, the most all of them may run ` +
        `together being ${maxTotalProcesses} (AIEM_SANDBOX_MAX_TOTAL_PROCESSES); end processes or sandboxes, or raise the bound`,
    );
  }
}

/** Refuses a start (of `sandboxId`, or of any sandbox) the host has no room for. */
export function checkCapacity(state: RuntimeState, limits: SandboxLimits, sandboxId?: string): void {
  checkStorage(state, limits, sandboxId);
  checkProcesses(state);
}
