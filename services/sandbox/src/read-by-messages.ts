// A file read through the agent's ReadFile messages, a few MiB at a time: the way to read from an
// agent started before the raw file routes (a sandbox adopted across an upgrade). ReadFile,
// ReadFileStream and :download share it, so the three keep one meaning of a file that changes
// while it is read, the raw route's: the file is its size when the first part was read, and one
// that shrinks meanwhile fails the read rather than passing off a part as the whole.
import { Code, ConnectError } from "@aiem/kit/errors";
import type { FileInfo } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import { type AccessDeps, type SandboxCall, viaAgent } from "./access.js";
import type { SandboxHandle } from "./runtime/index.js";

export interface MessagePart {
  readonly data: Uint8Array;
  /** The agent's description of the file, on the first part only. */
  readonly fileInfo: FileInfo | undefined;
  /** The file's size when its first part was read; 0 for a file that gives none (as /proc's), which is read to its end. */
  readonly size: number;
}

/**
 * The parts of `path` in order; the first is always yielded (with the description, even for an
 * empty file), later ones only when they hold bytes. The next part is asked for while the caller
 * handles this one. A caller that stops early leaves at most one request behind, whose failure
 * is ignored.
 */
export async function* readByMessages(
  deps: AccessDeps,
  call: SandboxCall,
  handle: SandboxHandle,
  path: string,
  signal?: AbortSignal,
): AsyncGenerator<MessagePart> {
  const read = (offset: number) =>
    viaAgent(deps, call, () => handle.client.readFile({ path, offset: BigInt(offset) }, { signal }));
  const first = await read(0);
  const size = Number(first.fileInfo?.size ?? BigInt(first.content.length));
  let next: ReturnType<typeof read> | undefined = Promise.resolve(first);
  let offset = 0;
  try {
    while (next) {
      const part: Awaited<ReturnType<typeof read>> = await next;
      const data = size > 0 ? part.content.subarray(0, size - offset) : part.content;
      offset += data.length;
      next = !part.eof && data.length > 0 && (size === 0 || offset < size) ? read(offset) : undefined;
      if (data.length > 0 || part === first)
        yield { data, fileInfo: part === first ? first.fileInfo : undefined, size };
    }
  } finally {
    void next?.catch(() => undefined);
  }
  if (size > 0 && offset < size) throw new ConnectError(`${path}: shrank while it was being read`, Code.Aborted);
}
