// Reading a whole file of a sandbox into memory through its agent, for the calls that answer
// with a file's whole content (ReadFile, the drive's upload), up to a bound.
import { Code, ConnectError, resourceExhausted } from "@aiem/kit/errors";
import type { FileInfo } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import { type AccessDeps, type SandboxCall, viaAgent } from "./access.js";
import { readByMessages } from "./read-by-messages.js";
import type { SandboxHandle } from "./runtime/index.js";
import { readInto, streamPieces } from "./stream-pieces.js";

/** The largest file ReadFile returns in one response (and the agent channel's message bound). */
export const MAX_FILE_BYTES = 256 << 20;

/** Bytes taken from the agent's stream at a time while a whole file is gathered. */
const READ_PIECE_BYTES = 1 << 20;

/** Reads a whole regular file through the agent, chunk by chunk, with the agent's description of it. */
export async function readWholeFile(
  deps: AccessDeps,
  call: SandboxCall,
  handle: SandboxHandle,
  path: string,
  maxBytes = MAX_FILE_BYTES,
): Promise<{ content: Buffer; fileInfo: FileInfo | undefined }> {
  if (await viaAgent(deps, call, () => handle.files.supported())) return readRaw(deps, call, handle, path, maxBytes);
  const tooLarge = () => resourceExhausted(`${path}: larger than ${maxBytes} bytes, the most one call returns`);
  const parts: Uint8Array[] = [];
  let length = 0;
  let fileInfo: FileInfo | undefined;
  for await (const part of readByMessages(deps, call, handle, path)) {
    if (part.size > maxBytes) throw tooLarge();
    fileInfo ??= part.fileInfo;
    parts.push(part.data);
    length += part.data.length;
    if (length > maxBytes) throw tooLarge();
  }
  const content = Buffer.concat(parts, length);
  if (fileInfo) fileInfo.size = BigInt(length);
  return { content, fileInfo };
}

/**
 * readWholeFile through the agent's raw route: the bytes land in one buffer of the file's size
 * as they arrive (no pieces to join), and a file over the limit is refused before it is read.
 */
async function readRaw(
  deps: AccessDeps,
  call: SandboxCall,
  handle: SandboxHandle,
  path: string,
  maxBytes: number,
): Promise<{ content: Buffer; fileInfo: FileInfo | undefined }> {
  const tooLarge = () => resourceExhausted(`${path}: larger than ${maxBytes} bytes, the most one call returns`);
  return viaAgent(deps, call, async () => {
    const { fileInfo, size, body, readAll } = await handle.files.read(path);
    if (size > maxBytes) {
      body.destroy();
      throw tooLarge();
    }
    let content: Buffer;
    if (size > 0) {
      content = Buffer.allocUnsafe(size);
      // Each chunk copied once as it comes: a for await (or pieces of a fixed size) would join
      // chunks on the way, one more copy of the file.
      const read = readAll ? await readAll(content) : await readInto(body, content);
      // The agent sends exactly the size it announced, or resets the stream.
      if (read !== size) throw new ConnectError(`${path}: shrank while it was being read`, Code.Aborted);
    } else {
      // A file that gives no size (as /proc's) is read to its end.
      const parts: Buffer[] = [];
      let offset = 0;
      for await (const chunk of streamPieces(body, READ_PIECE_BYTES)) {
        parts.push(chunk);
        offset += chunk.length;
        if (offset > maxBytes) throw tooLarge();
      }
      content = Buffer.concat(parts, offset);
      if (fileInfo) fileInfo.size = BigInt(offset);
    }
    return { content, fileInfo };
  });
}
