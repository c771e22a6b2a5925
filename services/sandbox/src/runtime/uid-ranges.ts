// Host uid/gid ranges of sandboxes: each sandbox's root is host uid `slot * 65536` and its uids
// 0-65535 the range above, so no two sandboxes (and no sandbox and the host's own users, which
// sit below 2^20) share a uid on the host. A sandbox keeps its slot in `<dir>/uid-range` across
// starts (its files are owned by that range); a host-wide registry of claimed slots, one
// directory per slot naming its sandbox, keeps runtimes on different data directories apart.
import * as fs from "node:fs";
import * as path from "node:path";

export const RANGE_SIZE = 65536;
/** Slots 16 and up: host uids from 2^20, above every system and login user. */
const FIRST_SLOT = 16;
/** Below 2^31: some programs treat uids as signed 32-bit numbers. */
const LAST_SLOT = 32767;

export interface UidRange {
  readonly base: number;
  readonly size: number;
}

function readSlot(file: string): number | undefined {
  try {
    const slot = Number(fs.readFileSync(file, "utf8").trim());
    return Number.isInteger(slot) && slot >= FIRST_SLOT && slot <= LAST_SLOT ? slot : undefined;
  } catch {
    return undefined;
  }
}

function ownerOf(registry: string, slot: number): string | undefined {
  try {
    return fs.readFileSync(path.join(registry, String(slot), "owner"), "utf8");
  } catch {
    return undefined;
  }
}

/** Claims a slot for `owner`; false when another sandbox that still exists holds it. */
function claim(registry: string, slot: number, owner: string): boolean {
  const dir = path.join(registry, String(slot));
  try {
    fs.mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const current = ownerOf(registry, slot);
    if (current === owner) return true;
    // A registry entry whose sandbox was deleted without its runtime (or whose owner file was
    // never written by a runtime that died) is free again.
    if (current !== undefined && fs.existsSync(current)) return false;
    if (current === undefined) {
      const age = Date.now() - fs.statSync(dir).mtimeMs;
      if (age < 10_000) return false;
    }
  }
  fs.writeFileSync(path.join(dir, "owner.tmp"), owner);
  fs.renameSync(path.join(dir, "owner.tmp"), path.join(dir, "owner"));
  return true;
}

/**
 * The range of the sandbox whose directory is `sandboxDir`: its own from earlier starts when it
 * still holds it, otherwise a free one (its files are then shifted by sandbox-enter).
 */
export function acquireUidRange(registry: string, sandboxDir: string): UidRange {
  fs.mkdirSync(registry, { recursive: true, mode: 0o700 });
  const owner = path.resolve(sandboxDir);
  const file = path.join(owner, "uid-range");
  const known = readSlot(file);
  let slot = known !== undefined && claim(registry, known, owner) ? known : undefined;
  if (slot === undefined) {
    const span = LAST_SLOT - FIRST_SLOT + 1;
    const start = Math.floor(Math.random() * span);
    for (let i = 0; i < span && slot === undefined; i++) {
      const candidate = FIRST_SLOT + ((start + i) % span);
      if (claim(registry, candidate, owner)) slot = candidate;
    }
    if (slot === undefined) throw new Error(`no free uid range in ${registry}`);
    fs.writeFileSync(file, `${slot}\n`);
  }
  return { base: slot * RANGE_SIZE, size: RANGE_SIZE };
}

/** Gives the sandbox's range back (when the sandbox is deleted). */
export function releaseUidRange(registry: string, sandboxDir: string): void {
  const owner = path.resolve(sandboxDir);
  const slot = readSlot(path.join(owner, "uid-range"));
  if (slot === undefined || ownerOf(registry, slot) !== owner) return;
  fs.rmSync(path.join(registry, String(slot)), { recursive: true, force: true });
}
