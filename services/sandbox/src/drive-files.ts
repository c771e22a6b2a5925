// The files of a workspace's drive: a local directory per workspace, `<driveDir>/<workspace>/`,
// holding what uploads wrote. Paths are checked segment by segment and never lead outside it.
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { failedPrecondition, invalidArgument, notFound, requiredField, resourceExhausted } from "@aiem/kit/errors";
import { pathSegments } from "./path-segments.js";
import { MAX_FILE_BYTES } from "./whole-file-read.js";

/** A drive path: relative, no `..`, no empty name; returned as its segments. */
export function driveSegments(field: string, value: string): string[] {
  if (value === "") throw requiredField(field);
  if (value.startsWith("/")) throw invalidArgument(field, "must be relative to the drive's root, without a leading /");
  if (Buffer.byteLength(value) > 1024) throw invalidArgument(field, "must be at most 1024 bytes");
  const segments = pathSegments(field, value, "it cannot lead outside the drive");
  if (segments.length === 0) throw invalidArgument(field, "must name a file in the drive");
  return segments;
}

function isInside(root: string, file: string): boolean {
  return file === root || file.startsWith(`${root}${path.sep}`);
}

/** The drive root of a workspace, created on first use. */
async function driveRoot(driveDir: string, workspace: string): Promise<string> {
  const root = path.join(driveDir, workspace);
  await fs.promises.mkdir(root, { recursive: true, mode: 0o700 });
  return fs.promises.realpath(root);
}

export async function readDriveFile(
  driveDir: string,
  workspace: string,
  remote: string,
  segments: string[],
): Promise<Buffer> {
  const root = await driveRoot(driveDir, workspace);
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

export async function writeDriveFile(
  driveDir: string,
  workspace: string,
  remote: string,
  segments: string[],
  content: Buffer,
): Promise<void> {
  const root = await driveRoot(driveDir, workspace);
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
