// FilesystemService: every call goes to the sandbox's agent, which resolves paths inside the
// sandbox root one segment at a time (see agent/filesystem.ts). Here: who may call, the API's
// path rules, and the API's error codes where they differ from the agent's.
import type { HandlerContext } from "@connectrpc/connect";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { Code, invalidArgument, resourceExhausted } from "@aiem/kit/errors";
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
import { type AccessDeps, type SandboxCall, authorizeSandbox, parentMissing, requireRunning, sandboxPath, viaAgent } from "./access.js";
import type { SandboxHandle } from "./runtime/index.js";

/** The largest file ReadFile returns in one response (and the agent channel's message bound). */
export const MAX_FILE_BYTES = 256 << 20;

/** Reads a whole regular file through the agent, chunk by chunk. */
export async function readWholeFile(deps: AccessDeps, call: SandboxCall, handle: SandboxHandle, path: string, maxBytes = MAX_FILE_BYTES): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  let offset = 0;
  for (;;) {
    const res = await viaAgent(deps, call, () => handle.client.readFile({ path, offset: BigInt(offset) }));
    if (res.content.length > 0) {
      parts.push(res.content);
      offset += res.content.length;
    }
    if (offset > maxBytes) throw resourceExhausted(`${path}: larger than ${maxBytes} bytes, the most one call returns`);
    if (res.eof || res.content.length === 0) break;
  }
  return Buffer.concat(parts, offset);
}

export function createFilesystemHandlers(deps: AccessDeps) {
  const open = (ctx: HandlerContext, name: string, action: Action) =>
    authorizeSandbox(deps, ctx, name, "name", WorkspaceKind.sandboxEngines, action);

  async function makeDirectory(req: CreateDirectoryRequest | MakeDirectoryRequest, ctx: HandlerContext, existOk: boolean) {
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
      const fileInfos = [...res.entries].sort((a, b) => (byName(a) < byName(b) ? -1 : byName(a) > byName(b) ? 1 : 0));
      return { fileInfos };
    },

    async move(req: MoveRequest, ctx: HandlerContext) {
      const call = await open(ctx, req.name, Action.UPDATE);
      const source = sandboxPath("source_path", req.sourcePath);
      const destination = sandboxPath("destination_path", req.destinationPath);
      const handle = requireRunning(deps, call);
      const res = await viaAgent(
        deps,
        call,
        () => handle.client.move({ source, destination, overwrite: req.overwrite, createParents: req.createParentDirectories }),
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
      return { content: await readWholeFile(deps, call, handle, path) };
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
      const handle = requireRunning(deps, call);
      const res = await viaAgent(
        deps,
        call,
        () => handle.client.writeFile({ path, content: req.content, createParents: req.createParentDirectories, overwrite: req.overwrite }),
        parentMissing(path),
      );
      return { fileInfo: res.fileInfo };
    },
  };
}
