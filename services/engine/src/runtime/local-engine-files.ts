// What a local engine's directory holds for its callers: its log, its disk usage, its recorded size.
import { existsSync } from "node:fs";
import { type FileHandle, open, statfs } from "node:fs/promises";
import path from "node:path";
import { directorySize, readText, writeAtomic } from "./host-process.js";
import type { DiskUsage } from "./runtime.js";

/** The last `maxBytes` of the engine's log; empty when it has none. */
export async function logTail(dir: string, maxBytes: number): Promise<Uint8Array> {
  let handle: FileHandle;
  try {
    handle = await open(path.join(dir, "logs", "engine.log"), "r");
  } catch {
    return new Uint8Array();
  }
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return new Uint8Array(buffer);
  } finally {
    await handle.close();
  }
}

/** Up to `maxBytes` of the engine's log from `offset`, and the log's size. */
export async function logFrom(
  dir: string,
  offset: number,
  maxBytes: number,
): Promise<{ data: Uint8Array; size: number }> {
  let handle: FileHandle;
  try {
    handle = await open(path.join(dir, "logs", "engine.log"), "r");
  } catch {
    return { data: new Uint8Array(), size: 0 };
  }
  try {
    const size = Number((await handle.stat()).size);
    const length = Math.max(0, Math.min(size - offset, maxBytes));
    const buffer = Buffer.alloc(length);
    if (length > 0) await handle.read(buffer, 0, length, offset);
    return { data: new Uint8Array(buffer), size };
  } finally {
    await handle.close();
  }
}

export async function diskUsage(dir: string, storageBytes: bigint): Promise<DiskUsage | undefined> {
  const data = path.join(dir, "data");
  if (!existsSync(data)) return undefined;
  const used = await directorySize(data);
  let free = storageBytes > used ? storageBytes - used : 0n;
  try {
    const fs = await statfs(data, { bigint: true });
    const available = fs.bavail * fs.bsize;
    if (available < free) free = available;
  } catch {
    // Without the filesystem's figures the engine's own quota is the bound.
  }
  return { totalBytes: storageBytes, freeBytes: free };
}

/** A local directory has no size of its own: the new size is recorded in spec.json and reported. */
export async function recordStorageSize(dir: string, bytes: bigint): Promise<void> {
  const specFile = path.join(dir, "spec.json");
  const text = await readText(specFile);
  if (text === undefined) return;
  const spec = JSON.parse(text) as Record<string, unknown>;
  spec.storageBytes = bytes.toString();
  await writeAtomic(specFile, JSON.stringify(spec, null, 2));
}
