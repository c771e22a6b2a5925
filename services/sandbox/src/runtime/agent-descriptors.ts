// A sandbox's files moved by the service itself, through the agent's descriptors: the agent
// resolves and checks the path inside the sandbox and opens the file (or the temporary file of a
// write), and the service, on the same host, opens that open file again as /proc/<agent>/fd/<n>.
// The bytes then go between the file and the client's socket in one process, with no HTTP/2
// framing and no second copy through the agent, which is what a transfer of a GiB is bound by.
//
// What the service opens must be the very file the agent opened, and nothing the agent could not
// reach: the agent's host pid is found once under the sandbox's outermost process (by its pid in
// the sandbox's namespace) and checked by its start time after every open, so a pid taken over
// by another process is never read from; the opened file must be a regular file with the device
// and inode the agent named; and it is opened with the access the agent had (read for a read,
// write only for the temporary file the agent created for this write).
import * as fs from "node:fs";
import { Readable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import { writeAll } from "./write-all.js";
import { childrenOf, processStartTime } from "./adopted-sandboxes.js";

/** The agent as a host process. */
export interface AgentProcess {
  readonly pid: number;
  readonly startTime: string;
}

/** Bytes per read of a file, and gathered per write: few system calls, little held. */
const CHUNK_BYTES = 1 << 20;

/** Bytes per read straight into a caller's buffer: no buffers of our own, so fewer, larger reads. */
const WHOLE_READ_BYTES = 8 << 20;

/** How deep under the sandbox's outermost process the agent is looked for (bwrap, its init, the agent). */
const SEARCH_DEPTH = 4;

/** The pid of `pid` in the innermost PID namespace it is in (the last of its NSpid line). */
function innermostPid(pid: number): number | undefined {
  try {
    const line = /^NSpid:\s*(.*)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    const ids = line?.[1]?.trim().split(/\s+/);
    return ids === undefined ? undefined : Number(ids[ids.length - 1]);
  } catch {
    return undefined;
  }
}

/**
 * The host process of the agent whose pid in its own namespace is `namespacePid`, searched from
 * the sandbox's outermost process `rootPid` down (unconfined, the agent is that process itself).
 */
export function findAgentProcess(rootPid: number, namespacePid: number): AgentProcess | undefined {
  let level = [rootPid];
  for (let depth = 0; depth < SEARCH_DEPTH && level.length > 0; depth++) {
    for (const pid of level) {
      if (innermostPid(pid) !== namespacePid) continue;
      const startTime = processStartTime(pid);
      return startTime === undefined ? undefined : { pid, startTime };
    }
    level = level.flatMap(childrenOf);
  }
  return undefined;
}

/** The effective host uid of process `pid`; undefined when it is gone. */
function uidOf(pid: number): number | undefined {
  try {
    const line = /^Uid:\s*\d+\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return line ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Thrown when a descriptor cannot be used from here (the caller goes back to the agent's routes). */
export class DescriptorUnusable extends Error {}

/**
 * Opens the agent's descriptor `fd` with `flags`, and checks that it is the regular file `fileId`
 * (`<dev>:<ino>`) held by `agent`. The caller owns the returned descriptor.
 */
export function openAgentDescriptor(agent: AgentProcess, fd: number, flags: number, fileId: string): number {
  let own: number;
  try {
    own = fs.openSync(`/proc/${agent.pid}/fd/${fd}`, flags);
  } catch (error) {
    throw new DescriptorUnusable(`cannot open the agent's descriptor: ${(error as Error).message}`);
  }
  try {
    const st = fs.fstatSync(own);
    if (!st.isFile() || `${st.dev}:${st.ino}` !== fileId)
      throw new DescriptorUnusable("the agent's descriptor is not the file it named");
    // Writing, this process may have rights the agent lacks: only the empty file the agent just
    // made for this write, which is then its own, is written.
    const writing = (flags & (fs.constants.O_WRONLY | fs.constants.O_RDWR)) !== 0;
    if (writing && (st.size !== 0 || st.uid !== uidOf(agent.pid)))
      throw new DescriptorUnusable("the agent's descriptor is not a new file of its own");
    // Checked after the open: a pid reused before it would have another start time now.
    if (processStartTime(agent.pid) !== agent.startTime)
      throw new DescriptorUnusable("the agent is not the process it was");
    return own;
  } catch (error) {
    fs.closeSync(own);
    throw error;
  }
}

/**
 * The bytes of the file open as `fd`: exactly `size` of them from its start, failing should it
 * shrink meanwhile, or, for a size of 0 (a file like /proc's), up to its end. Closes `fd`.
 */
export function descriptorBody(fd: number, size: number, display: string): Readable {
  let position = 0;
  return new Readable({
    highWaterMark: CHUNK_BYTES,
    read() {
      const want = size > 0 ? Math.min(CHUNK_BYTES, size - position) : CHUNK_BYTES;
      if (want === 0) {
        this.push(null);
        return;
      }
      const buffer = Buffer.allocUnsafe(want);
      fs.read(fd, buffer, 0, want, position, (error, n) => {
        if (error) {
          this.destroy(error);
          return;
        }
        if (n === 0) {
          if (size > 0) this.destroy(new ConnectError(`${display}: shrank while it was being read`, Code.Aborted));
          else this.push(null);
          return;
        }
        position += n;
        this.push(n < want ? buffer.subarray(0, n) : buffer);
      });
    },
    destroy(error, callback) {
      fs.close(fd, () => callback(error));
    },
  });
}

/** Reads the file open as `fd` from its start into `target`, up to its end or target's; how many bytes there were. */
export async function readDescriptorInto(fd: number, target: Uint8Array): Promise<number> {
  let offset = 0;
  while (offset < target.length) {
    const n = await new Promise<number>((resolve, reject) =>
      fs.read(fd, target, offset, Math.min(WHOLE_READ_BYTES, target.length - offset), offset, (error, bytes) =>
        error ? reject(error) : resolve(bytes),
      ),
    );
    if (n === 0) break;
    offset += n;
  }
  return offset;
}

/**
 * Writes `body` into `fd` whole, in batches of about a MiB (one writev each). Fails with
 * RESOURCE_EXHAUSTED past `maxBytes`, and with CANCELLED when `signal` aborts. A Readable `body`
 * is never destroyed here: after a refusal its owner (an HTTP request still to be answered)
 * decides what becomes of the rest.
 */
export async function fillDescriptor(
  fd: number,
  body: Readable | AsyncIterable<Uint8Array>,
  display: string,
  maxBytes: number | undefined,
  signal: AbortSignal | undefined,
): Promise<number> {
  const chunks = body instanceof Readable ? body.iterator({ destroyOnReturn: false }) : body;
  let batch: Uint8Array[] = [];
  let batched = 0;
  let total = 0;
  for await (const chunk of chunks as AsyncIterable<Uint8Array>) {
    if (signal?.aborted) break;
    total += chunk.length;
    if (maxBytes !== undefined && total > maxBytes) {
      throw new ConnectError(
        `${display}: larger than the sandbox's file size limit of ${maxBytes} bytes`,
        Code.ResourceExhausted,
      );
    }
    batch.push(chunk);
    batched += chunk.length;
    if (batched >= CHUNK_BYTES) {
      await writeAll(fd, batch);
      batch = [];
      batched = 0;
    }
  }
  if (signal?.aborted) throw ConnectError.from(signal.reason, Code.Canceled);
  await writeAll(fd, batch);
  return total;
}
