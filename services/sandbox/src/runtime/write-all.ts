// Writing a list of buffers to a descriptor whole: the service's writes through an agent's
// descriptor (agent-descriptors.ts).
import * as fs from "node:fs";
import { promisify } from "node:util";

const fsWrite = promisify(fs.write);
const fsWritev = promisify(fs.writev);

/** Writes every byte of `buffers` at the descriptor's position: one writev while it takes them all. */
export async function writeAll(fd: number, buffers: readonly Uint8Array[]): Promise<void> {
  const pending = buffers.filter((b) => b.length > 0);
  while (pending.length > 0) {
    let written =
      pending.length === 1 ? (await fsWrite(fd, pending[0]!)).bytesWritten : (await fsWritev(fd, pending)).bytesWritten;
    // A short write (a signal, a full disk on the way to ENOSPC): go on after what was taken.
    while (pending.length > 0 && written >= pending[0]!.length) written -= pending.shift()!.length;
    if (written > 0) pending[0] = pending[0]!.subarray(written);
  }
}
