// FilesystemService: every call goes to the sandbox's agent, which resolves paths inside the
// sandbox root one segment at a time (see agent/filesystem.ts). Here: who may call, the API's
// path rules, and the API's error codes where they differ from the agent's.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { Code, type ConnectError, invalidArgument } from "@aiem/kit/errors";
import { detachedBytes } from "@aiem/kit/server";
import type { FileInfo } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import type {
  CreateDirectoryRequest,
  FilesystemService,
  MakeDirectoryRequest,
} from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import { type AccessDeps, authorizeSandbox, parentMissing, requireRunning, sandboxPath, viaAgent } from "./access.js";
import { parseMode } from "./file-mode.js";
import { readWholeFile } from "./whole-file-read.js";

/** The handlers of FilesystemService, typed by the service so a missing or misspelt one fails the type check. */
export type FilesystemServiceImpl = ServiceImpl<typeof FilesystemService>;

/** FilesystemService but its two streams (file-stream-handlers.ts). */
export function createFilesystemHandlers(
  deps: AccessDeps,
): Omit<FilesystemServiceImpl, "writeFileStream" | "readFileStream"> {
  const open = (ctx: HandlerContext, name: string, action: Action) =>
    authorizeSandbox(deps, ctx, name, "name", WorkspaceKind.sandboxEngines, action);

  return {
    createDirectory: (req, ctx) => makeDirectory(deps, req, ctx, false),
    makeDirectory: (req, ctx) => makeDirectory(deps, req, ctx, true),

    async listDirectory(req, ctx) {
      const call = await open(ctx, req.name, Action.GET);
      const path = sandboxPath("path", req.path);
      const handle = requireRunning(deps, call);
      const res = await viaAgent(deps, call, () => handle.client.listDirectory({ path }));
      const byName = (f: FileInfo) => f.path.slice(f.path.lastIndexOf("/") + 1);
      const files = [...res.entries].sort((a, b) => (byName(a) < byName(b) ? -1 : byName(a) > byName(b) ? 1 : 0));
      return { files };
    },

    async move(req, ctx) {
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
        moveError(destination),
      );
      return { fileInfo: res.fileInfo };
    },

    async readFile(req, ctx) {
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

    async remove(req, ctx) {
      const call = await open(ctx, req.name, Action.UPDATE);
      const path = sandboxPath("path", req.path);
      const handle = requireRunning(deps, call);
      await viaAgent(deps, call, () => handle.client.remove({ path, recursive: req.recursive }));
      return {};
    },

    async statFile(req, ctx) {
      const call = await open(ctx, req.name, Action.GET);
      const path = sandboxPath("path", req.path);
      const handle = requireRunning(deps, call);
      const res = await viaAgent(deps, call, () => handle.client.stat({ path }));
      return { fileInfo: res.fileInfo };
    },

    async writeFile(req, ctx) {
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

/** CreateDirectory and MakeDirectory, which differ only in whether an existing directory is fine. */
async function makeDirectory(
  deps: AccessDeps,
  req: CreateDirectoryRequest | MakeDirectoryRequest,
  ctx: HandlerContext,
  existOk: boolean,
) {
  const call = await authorizeSandbox(deps, ctx, req.name, "name", WorkspaceKind.sandboxEngines, Action.UPDATE);
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

/** The agent's errors of a move in the API's words. */
function moveError(destination: string) {
  return (err: ConnectError) => {
    // The agent names its own fields; the API's are source_path and destination_path.
    const m = err.code === Code.InvalidArgument ? /^(source|destination): (.*)$/s.exec(err.rawMessage) : null;
    if (m) return invalidArgument(`${m[1]}_path`, m[2]!);
    return parentMissing(destination)(err);
  };
}
