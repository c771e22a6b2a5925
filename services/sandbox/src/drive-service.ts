// DriveService and SecureStoreService: files between a sandbox and a workspace's drive (a local
// directory per workspace, `<driveDir>/<workspace>/`), and secret values into files in a
// sandbox. Both write into the sandbox through its agent, so the sandbox's path rules apply.
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { HandlerContext } from "@connectrpc/connect";
import { secretVersionPattern, workspacePattern } from "@aiem/kit/aip";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { failedPrecondition, invalidArgument, notFound, requiredField, resourceExhausted } from "@aiem/kit/errors";
import { SecretVersionRevealed_Target } from "@aiem/proto/enginemanager/events/v1/secret_events_pb.js";
import { FileType } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import type { DownloadFileRequest, UploadFileRequest } from "@aiem/proto/enginemanager/sandbox/v1/drive_service_pb.js";
import type { RevealSecretToFileRequest } from "@aiem/proto/enginemanager/sandbox/v1/secure_store_service_pb.js";
import {
  type AccessDeps,
  type SandboxCall,
  authorizeSandbox,
  parentMissing,
  requireRunning,
  sandboxPath,
  viaAgent,
} from "./access.js";
import { MAX_FILE_BYTES, readWholeFile } from "./filesystem-service.js";
import type { SecretResolver } from "./process-definition.js";

export interface DriveDeps extends AccessDeps {
  /** The directory holding every workspace's drive. */
  readonly driveDir: string;
  readonly secrets: SecretResolver | undefined;
}

/** A drive path: relative, no `..`, no empty name; returned as its segments. */
function driveSegments(field: string, value: string): string[] {
  if (value === "") throw requiredField(field);
  if (value.startsWith("/")) throw invalidArgument(field, "must be relative to the drive's root, without a leading /");
  if (Buffer.byteLength(value) > 1024) throw invalidArgument(field, "must be at most 1024 bytes");
  const segments: string[] = [];
  for (const segment of value.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..")
      throw invalidArgument(field, "must not contain '..' segments: it cannot lead outside the drive");
    segments.push(segment);
  }
  if (segments.length === 0) throw invalidArgument(field, "must name a file in the drive");
  return segments;
}

function isInside(root: string, file: string): boolean {
  return file === root || file.startsWith(`${root}${path.sep}`);
}

export function createDriveHandlers(deps: DriveDeps) {
  const { context } = deps;

  /** The drive's workspace: the one named, or the sandbox engine's own when none is. */
  function workspaceOf(value: string, call: SandboxCall): string {
    if (value === "") return call.workspace;
    return workspacePattern.parse(value, "workspace").workspace;
  }

  /** The drive root of a workspace, created on first use. */
  async function driveRoot(workspace: string): Promise<string> {
    const root = path.join(deps.driveDir, workspace);
    await fs.promises.mkdir(root, { recursive: true, mode: 0o700 });
    return fs.promises.realpath(root);
  }

  async function readDriveFile(workspace: string, remote: string, segments: string[]): Promise<Buffer> {
    const root = await driveRoot(workspace);
    const target = path.join(root, ...segments);
    let real: string;
    try {
      real = await fs.promises.realpath(target);
    } catch {
      throw notFound(`workspaces/${workspace} drive: ${remote}`);
    }
    // The drive holds only what uploads wrote, but a link placed there by hand must not lead out.
    if (!isInside(root, real)) throw notFound(`workspaces/${workspace} drive: ${remote}`);
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(real, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    } catch {
      throw notFound(`workspaces/${workspace} drive: ${remote}`);
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw failedPrecondition(`remote_path: ${remote} is not a regular file in the drive`);
      if (st.size > MAX_FILE_BYTES)
        throw resourceExhausted(
          `remote_path: ${remote} is larger than ${MAX_FILE_BYTES} bytes, the most one call copies`,
        );
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }

  async function writeDriveFile(workspace: string, remote: string, segments: string[], content: Buffer): Promise<void> {
    const root = await driveRoot(workspace);
    let dir = root;
    for (const segment of segments.slice(0, -1)) {
      dir = path.join(dir, segment);
      try {
        await fs.promises.mkdir(dir, { mode: 0o755 });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      }
      const st = await fs.promises.lstat(dir);
      if (!st.isDirectory())
        throw failedPrecondition(
          `remote_path: ${segments.slice(0, segments.indexOf(segment) + 1).join("/")} is not a directory in the drive`,
        );
    }
    const target = path.join(dir, segments[segments.length - 1]!);
    const existing = await fs.promises.lstat(target).catch(() => undefined);
    if (existing?.isDirectory()) throw failedPrecondition(`remote_path: ${remote} is a directory in the drive`);
    const temp = path.join(dir, `.aiem-upload-${randomBytes(6).toString("hex")}`);
    try {
      await fs.promises.writeFile(temp, content, { mode: 0o644, flag: "wx" });
      // rename replaces a file or link at the target itself; it never writes through a link.
      await fs.promises.rename(temp, target);
    } catch (err) {
      await fs.promises.rm(temp, { force: true });
      throw err;
    }
  }

  return {
    drive: {
      async downloadFile(req: DownloadFileRequest, ctx: HandlerContext) {
        const call = await authorizeSandbox(deps, ctx, req.name, "name", WorkspaceKind.sandboxEngines, Action.UPDATE);
        const workspace = workspaceOf(req.workspace, call);
        context.policy.check(call.principal, Action.GET, WorkspaceKind.drive, workspace);
        const segments = driveSegments("remote_path", req.remotePath);
        const local = sandboxPath("local_path", req.localPath);
        const handle = requireRunning(deps, call);
        const content = await readDriveFile(workspace, segments.join("/"), segments);
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

      async uploadFile(req: UploadFileRequest, ctx: HandlerContext) {
        const call = await authorizeSandbox(deps, ctx, req.name, "name", WorkspaceKind.sandboxEngines, Action.GET);
        const workspace = workspaceOf(req.workspace, call);
        context.policy.check(call.principal, Action.UPDATE, WorkspaceKind.drive, workspace);
        const local = sandboxPath("local_path", req.localPath);
        const segments = driveSegments("remote_path", req.remotePath);
        const handle = requireRunning(deps, call);
        const info = (await viaAgent(deps, call, () => handle.client.stat({ path: local }))).fileInfo;
        // stat describes a link itself; follow it only through the agent's read, which stays inside.
        if (info && info.type !== FileType.REGULAR && info.type !== FileType.SYMLINK) {
          throw failedPrecondition(`local_path: ${local} is not a regular file`);
        }
        const { content } = await readWholeFile(deps, call, handle, local);
        await writeDriveFile(workspace, segments.join("/"), segments, content);
        return { bytesUploaded: BigInt(content.length) };
      },
    },

    secureStore: {
      async revealSecretToFile(req: RevealSecretToFileRequest, ctx: HandlerContext) {
        const call = await authorizeSandbox(deps, ctx, req.name, "name", WorkspaceKind.sandboxEngines, Action.UPDATE);
        if (req.secretVersion === "") throw requiredField("secret_version");
        secretVersionPattern.parse(req.secretVersion, "secret_version");
        const local = sandboxPath("path", req.path);
        const handle = requireRunning(deps, call);
        if (!deps.secrets) {
          throw failedPrecondition(
            "the secure store cannot be reached from this sandbox service: it resolves secrets when the catalogue runs in the same process, or at AIEM_CATALOGUE_URL with AIEM_INTERNAL_KEY",
          );
        }
        const { name: resolved, value } = await deps.secrets.resolveSecretValue(call.principal, req.secretVersion, {
          sandboxEngine: call.row.name,
          target: SecretVersionRevealed_Target.FILE,
          destination: local,
        });
        const res = await viaAgent(deps, call, () =>
          handle.client.writeFile({ path: local, content: value, createParents: true, overwrite: true, mode: 0o600 }),
        );
        return { fileInfo: res.fileInfo, secretVersion: resolved };
      },
    },
  };
}
