// DriveService: files between a sandbox and a workspace's drive (drive-files.ts). They are
// written into the sandbox through its agent, so the sandbox's path rules apply.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { workspacePattern } from "@aiem/kit/aip";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { failedPrecondition } from "@aiem/kit/errors";
import type { DriveService } from "@aiem/proto/enginemanager/sandbox/v1/drive_service_pb.js";
import { FileType } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import {
  type AccessDeps,
  type SandboxCall,
  authorizeSandbox,
  parentMissing,
  requireRunning,
  sandboxPath,
  viaAgent,
} from "./access.js";
import { driveSegments, readDriveFile, writeDriveFile } from "./drive-files.js";
import { readWholeFile } from "./whole-file-read.js";

export interface DriveDeps extends AccessDeps {
  /** The directory holding every workspace's drive. */
  readonly driveDir: string;
}

export function createDriveHandlers(deps: DriveDeps): ServiceImpl<typeof DriveService> {
  return {
    async downloadFile(req, ctx) {
      const { call, workspace } = await authorizeTransfer(deps, ctx, req, Action.UPDATE, Action.GET);
      const segments = driveSegments("remote_path", req.remotePath);
      const local = sandboxPath("local_path", req.localPath);
      const handle = requireRunning(deps, call);
      const content = await readDriveFile(deps.driveDir, workspace, segments.join("/"), segments);
      const res = await viaAgent(
        deps,
        call,
        // Unset overwrite means overwrite, as for writeFile.
        () =>
          handle.client.writeFile({
            path: local,
            content,
            createParents: req.createParentDirectories,
            overwrite: req.overwrite ?? true,
          }),
        parentMissing(local),
      );
      return { fileInfo: res.fileInfo };
    },

    async uploadFile(req, ctx) {
      const { call, workspace } = await authorizeTransfer(deps, ctx, req, Action.GET, Action.UPDATE);
      const local = sandboxPath("local_path", req.localPath);
      const segments = driveSegments("remote_path", req.remotePath);
      const handle = requireRunning(deps, call);
      const info = (await viaAgent(deps, call, () => handle.client.stat({ path: local }))).fileInfo;
      // stat describes a link itself; follow it only through the agent's read, which stays inside.
      if (info && info.type !== FileType.REGULAR && info.type !== FileType.SYMLINK) {
        throw failedPrecondition(`local_path: ${local} is not a regular file`);
      }
      const { content } = await readWholeFile(deps, call, handle, local);
      await writeDriveFile(deps.driveDir, workspace, segments.join("/"), segments, content);
      return { bytesUploaded: BigInt(content.length) };
    },
  };
}

/**
 * Authorizes a transfer between a sandbox engine and a drive: `onSandbox` on the sandbox engine,
 * `onDrive` on the drive of the workspace named, or of the sandbox engine's own when none is.
 */
async function authorizeTransfer(
  deps: DriveDeps,
  ctx: HandlerContext,
  req: { readonly name: string; readonly workspace: string },
  onSandbox: Action,
  onDrive: Action,
): Promise<{ call: SandboxCall; workspace: string }> {
  const call = await authorizeSandbox(deps, ctx, req.name, "name", WorkspaceKind.sandboxEngines, onSandbox);
  const workspace =
    req.workspace === "" ? call.workspace : workspacePattern.parse(req.workspace, "workspace").workspace;
  deps.context.policy.check(call.principal, onDrive, WorkspaceKind.drive, workspace);
  return { call, workspace };
}
