// FilesystemService: every call goes to the sandbox's agent, which resolves paths inside the
// sandbox root one segment at a time (see agent/filesystem.ts). Here: who may call, the API's
// path rules, and the API's error codes where they differ from the agent's.
import type { HandlerContext } from "@connectrpc/connect";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { Code, ConnectError, invalidArgument, resourceExhausted } from "@aiem/kit/errors";
import { detachedBytes } from "@aiem/kit/server";
import type { FileInfo } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import type {
  CreateDirectoryRequest,
  ListDirectoryRequest,
  MakeDirectoryRequest,
  MoveRequest,
  ReadFileRequest,
  RemoveRequest,
  StatFileRequest,
  WriteFileRequest,
} from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import {
  type AccessDeps,
  type SandboxCall,
  authorizeSandbox,
  parentMissing,
  requireRunning,
  sandboxPath,
  viaAgent,
} from "./access.js";
import type { SandboxHandle } from "./runtime/index.js";
import { readByMessages } from "./read-by-messages.js";
import { readInto, streamPieces } from "./stream-pieces.js";

/** The largest file ReadFile returns in one response (and the agent channel's message bound). */
export const MAX_FILE_BYTES = 256 << 20;

/** Bytes taken from the agent's stream at a time while a whole file is gathered. */
const READ_PIECE_BYTES = 1 << 20;

/**
 * Parses the octal permission string of a write (`0644`, `755`); undefined when none is given,
 * which keeps a replaced file's mode and gives a new one 0644.
 */
export function parseMode(field: string, value: string): number | undefined {
  if (value === "") return undefined;
  if (!/^0?[0-7]{1,4}$/.test(value)) {
    throw invalidArgument(
      field,
      `must be an octal permission string of at most 07777, such as 0644 or 0755 (got ${JSON.stringify(value.slice(0, 32))})`,
    );
  }
  return Number.parseInt(value, 8);
}

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

export function createFilesystemHandlers(deps: AccessDeps) {
  const open = (ctx: HandlerContext, name: string, action: Action) =>
    authorizeSandbox(deps, ctx, name, "name", WorkspaceKind.sandboxEngines, action);

  async function makeDirectory(
    req: CreateDirectoryRequest | MakeDirectoryRequest,
    ctx: HandlerContext,
    existOk: boolean,
  ) {
    const call = await open(ctx, req.name, Action.UPDATE);
    const path = sandboxPath("path", req.path);
    const handle = requireRunning(deps, call);
    const res = await viaAgent(
      deps,
      call,
      () => handle.client.makeDirectory({ path, createParents: req.createParentDirectories, existOk }),
      parentMissing(path),
    );
    return { fileInfo: res.fileInfo };
  }

  return {
    createDirectory: (req: CreateDirectoryRequest, ctx: HandlerContext) => makeDirectory(req, ctx, false),
    makeDirectory: (req: MakeDirectoryRequest, ctx: HandlerContext) => makeDirectory(req, ctx, true),

    async listDirectory(req: ListDirectoryRequest, ctx: HandlerContext) {
      const call = await open(ctx, req.name, Action.GET);
      const path = sandboxPath("path", req.path);
      const handle = requireRunning(deps, call);
      const res = await viaAgent(deps, call, () => handle.client.listDirectory({ path }));
      const byName = (f: FileInfo) => f.path.slice(f.path.lastIndexOf("/") + 1);
      const files = [...res.entries].sort((a, b) => (byName(a) < byName(b) ? -1 : byName(a) > byName(b) ? 1 : 0));
      return { files };
    },

    async move(req: MoveRequest, ctx: HandlerContext) {
      const call = await open(ctx, req.name, Action.UPDATE);
      const source = sandboxPath("source_path", req.sourcePath);
      const destination = sandboxPath("destination_path", req.destinationPath);
      const handle = requireRunning(deps, call);
      const res = await viaAgent(
        deps,
        call,
        () =>
          handle.client.move({
            source,
            destination,
            overwrite: req.overwrite,
            createParents: req.createParentDirectories,
          }),
        (err) => {
          // The agent names its own fields; the API's are source_path and destination_path.
          const m = err.code === Code.InvalidArgument ? /^(source|destination): (.*)$/s.exec(err.rawMessage) : null;
          if (m) return invalidArgument(`${m[1]}_path`, m[2]!);
          return parentMissing(destination)(err);
        },
      );
      return { fileInfo: res.fileInfo };
    },

    async readFile(req: ReadFileRequest, ctx: HandlerContext) {
      const call = await open(ctx, req.name, Action.GET);
      const path = sandboxPath("path", req.path);
      const handle = requireRunning(deps, call);
      const { content, fileInfo } = await readWholeFile(deps, call, handle, path);
      // Over binary framings the content is written as it is, not copied through protobuf-es.
      const detached = detachedBytes(ctx);
      if (!detached) return { content, fileInfo };
      detached.hold(content);
      return { fileInfo };
    },

    async remove(req: RemoveRequest, ctx: HandlerContext) {
      const call = await open(ctx, req.name, Action.UPDATE);
      const path = sandboxPath("path", req.path);
      const handle = requireRunning(deps, call);
      await viaAgent(deps, call, () => handle.client.remove({ path, recursive: req.recursive }));
      return {};
    },

    async statFile(req: StatFileRequest, ctx: HandlerContext) {
      const call = await open(ctx, req.name, Action.GET);
      const path = sandboxPath("path", req.path);
      const handle = requireRunning(deps, call);
      const res = await viaAgent(deps, call, () => handle.client.stat({ path }));
      return { fileInfo: res.fileInfo };
    },

    async writeFile(req: WriteFileRequest, ctx: HandlerContext) {
      const call = await open(ctx, req.name, Action.UPDATE);
      const path = sandboxPath("path", req.path);
      const mode = parseMode("mode", req.mode);
      const handle = requireRunning(deps, call);
      // Unset overwrite means overwrite (the official client sends null by default).
      const overwrite = req.overwrite ?? true;
      const res = await viaAgent(
        deps,
        call,
        () =>
          handle.client.writeFile({
            path,
            content: req.content,
            createParents: req.createParentDirectories,
            overwrite,
            mode,
          }),
        parentMissing(path),
      );
      return { fileInfo: res.fileInfo };
    },
  };
}
