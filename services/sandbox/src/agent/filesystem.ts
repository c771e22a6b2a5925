// The agent's filesystem calls. Every path is resolved one segment at a time from a directory
// file descriptor, never by handing a whole path to the kernel: each step opens the next
// directory with O_NOFOLLOW through `/proc/self/fd/<fd>/<name>` (the equivalent of openat), and
// the agent follows symbolic links itself, reading absolute targets from the sandbox root and
// refusing a `..` that would climb above it. The directory holding the final entry stays open
// while the call works on it, so swapping a directory for a symbolic link between a check and
// its use cannot send the call anywhere else. Under bubblewrap the root is `/` and the mount
// namespace would contain a mistake anyway; in unconfined mode this is the only wall.
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { promisify } from "node:util";
import { Code, ConnectError } from "@connectrpc/connect";
import type { FileInfo } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import { alreadyExists, errnoCode, failedPrecondition, fsError, invalidArgument, notFound } from "./errors.js";
import { AGENT_DIR, joinSegments, pathSegments } from "./paths.js";
import { toFileInfo } from "./file-info.js";
import { at, closeQuietly, createPathResolver, lstatOrNull } from "./path-resolver.js";
import { writeAll } from "./write-all.js";

export { octalMode, toFileInfo } from "./file-info.js";

const fsRead = promisify(fs.read);

const O_DIR = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;
const DIR_MODE = 0o755;
const FILE_MODE = 0o644;

export interface FilesystemOptions {
  /** The directory that is `/` of the sandbox: `/` under bubblewrap, a host directory unconfined. */
  readonly root: string;
  /** The most bytes one ReadFile returns. */
  readonly maxReadBytes: number;
  /** Largest file WriteFile writes, where storage is limited per file (the rlimit fallback). */
  readonly maxFileBytes?: number | undefined;
}

export interface ReadResult {
  readonly content: Uint8Array;
  readonly eof: boolean;
  /** The file read, under the requested path; on reads from offset 0. */
  readonly fileInfo?: FileInfo | undefined;
}

/** A regular file opened for reading; the caller closes `fd`. */
export interface OpenedFile {
  readonly fd: number;
  /** The sandbox path as asked for, for messages and the file's description. */
  readonly display: string;
  readonly stats: fs.BigIntStats;
}

/**
 * Fills a file being written through its descriptor (a writer outside the agent, see
 * file-routes.ts); resolves once the content is whole, and fails to have the file dropped.
 */
export type FileFiller = (fd: number, display: string) => Promise<void>;

export interface Filesystem {
  stat(path: string): FileInfo;
  listDirectory(path: string): FileInfo[];
  makeDirectory(path: string, createParents: boolean, existOk: boolean): FileInfo;
  /** `mode` undefined: 0644 for a new file, the old mode for a replaced one. */
  /** Writes a whole file from one buffer or, for large content, from a stream of chunks. */
  /** A stream may give batches of chunks, each written with one system call. */
  /** Or a filler writes the temporary file through its descriptor. */
  writeFile(
    path: string,
    content: Uint8Array | AsyncIterable<Uint8Array | readonly Uint8Array[]> | FileFiller,
    createParents: boolean,
    overwrite: boolean,
    mode?: number,
  ): Promise<FileInfo>;
  readFile(path: string, offset: number, limit: number): Promise<ReadResult>;
  /** Opens a regular file for a streamed read, after the same checks as readFile. */
  openForRead(path: string): Promise<OpenedFile>;
  remove(path: string, recursive: boolean): Promise<void>;
  move(source: string, destination: string, overwrite: boolean, createParents: boolean): FileInfo;
}

/** A descriptor that keeps the regular file at `path` alive, or undefined (none there, or not one). */
function holdOpen(path: string): number | undefined {
  try {
    return fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
}

export function createFilesystem(options: FilesystemOptions): Filesystem {
  const { root, maxReadBytes, maxFileBytes } = options;
  const { entryPath, withLocation, withLocationAsync, denyAgentDir, denyReadOnly } = createPathResolver(root);

  function stat(path: string): FileInfo {
    const segments = pathSegments(path);
    const display = joinSegments(segments);
    return withLocation(segments, { followFinal: false, createParents: false, display }, (loc) => {
      denyAgentDir(loc, display);
      const st = loc.name === null ? fs.fstatSync(loc.parent, { bigint: true }) : lstatOrNull(entryPath(loc));
      if (st === null) throw notFound(`${display}: no such file or directory`);
      return toFileInfo(display, st);
    });
  }

  function listDirectory(path: string): FileInfo[] {
    const segments = pathSegments(path);
    const display = joinSegments(segments);
    return withLocation(segments, { followFinal: true, createParents: false, display }, (loc) => {
      denyAgentDir(loc, display);
      let dir: number;
      try {
        // The root is already open; /proc/self/fd/N is itself a link, which O_NOFOLLOW refuses.
        dir =
          loc.name === null
            ? fs.openSync(at(loc.parent), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY)
            : fs.openSync(entryPath(loc), O_DIR);
      } catch (error) {
        const code = errnoCode(error);
        if (code === "ENOTDIR" || code === "ELOOP") throw failedPrecondition(`${display}: is not a directory`);
        throw fsError(error, display);
      }
      try {
        const names = fs.readdirSync(at(dir));
        const entries: FileInfo[] = [];
        for (const name of names) {
          if (loc.canonical.length === 0 && name === AGENT_DIR) continue;
          const st = lstatOrNull(at(dir, name));
          if (st === null) continue;
          entries.push(toFileInfo(joinSegments([...segments, name]), st));
        }
        return entries;
      } finally {
        closeQuietly(dir);
      }
    });
  }

  function makeDirectory(path: string, createParents: boolean, existOk: boolean): FileInfo {
    const segments = pathSegments(path);
    const display = joinSegments(segments);
    return withLocation(segments, { followFinal: false, createParents, display }, (loc) => {
      if (loc.name === null) {
        if (existOk) return toFileInfo(display, fs.fstatSync(loc.parent, { bigint: true }));
        throw alreadyExists(`${display}: already exists`);
      }
      denyAgentDir(loc, display);
      const existing = lstatOrNull(entryPath(loc));
      if (existing !== null) {
        if (
          existOk &&
          (existing.isDirectory() || (existing.isSymbolicLink() && isDirectoryFollowing(segments, display)))
        ) {
          return toFileInfo(display, existing.isDirectory() ? existing : statFollowing(segments, display));
        }
        throw alreadyExists(`${display}: already exists`);
      }
      denyReadOnly(loc.canonical, display);
      try {
        fs.mkdirSync(entryPath(loc), DIR_MODE);
      } catch (error) {
        if (errnoCode(error) === "EEXIST" && existOk) return makeDirectory(path, createParents, existOk);
        throw fsError(error, display);
      }
      const fd = fs.openSync(entryPath(loc), O_DIR);
      try {
        fs.fchmodSync(fd, DIR_MODE);
        return toFileInfo(display, fs.fstatSync(fd, { bigint: true }));
      } finally {
        closeQuietly(fd);
      }
    });
  }

  function statFollowing(segments: readonly string[], display: string): fs.BigIntStats {
    return withLocation(segments, { followFinal: true, createParents: false, display }, (loc) => {
      const st = lstatOrNull(entryPath(loc));
      if (st === null) throw notFound(`${display}: no such file or directory`);
      return st;
    });
  }

  function isDirectoryFollowing(segments: readonly string[], display: string): boolean {
    try {
      return statFollowing(segments, display).isDirectory();
    } catch {
      return false;
    }
  }

  async function writeFile(
    path: string,
    content: Uint8Array | AsyncIterable<Uint8Array | readonly Uint8Array[]> | FileFiller,
    createParents: boolean,
    overwrite: boolean,
    mode?: number,
  ): Promise<FileInfo> {
    if (mode !== undefined && (!Number.isInteger(mode) || mode < 0 || mode > 0o7777)) {
      throw invalidArgument("mode: must be between 0 and octal 07777");
    }
    const segments = pathSegments(path);
    const display = joinSegments(segments);
    if (segments.length === 0) throw failedPrecondition(`${display}: is a directory`);
    const tooLarge = () =>
      new ConnectError(
        `${display}: larger than the sandbox's file size limit of ${maxFileBytes} bytes`,
        Code.ResourceExhausted,
      );
    // A buffer is refused before anything is written; a stream once it passes the limit.
    if (maxFileBytes !== undefined && content instanceof Uint8Array && content.length > maxFileBytes) throw tooLarge();
    const chunks = content instanceof Uint8Array ? [content] : typeof content === "function" ? [] : content;
    return withLocationAsync(segments, { followFinal: true, createParents, display }, async (loc) => {
      if (loc.name === null) throw failedPrecondition(`${display}: is a directory`);
      denyReadOnly(loc.canonical, display);
      const name = loc.name;
      const existing = lstatOrNull(at(loc.parent, name));
      if (existing !== null) {
        if (existing.isDirectory()) throw failedPrecondition(`${display}: is a directory`);
        if (existing.isSymbolicLink()) {
          throw failedPrecondition(`${display}: changed while it was being written; try again`);
        }
        if (!existing.isFile()) throw failedPrecondition(`${display}: is not a regular file`);
        if (!overwrite) throw alreadyExists(`${display}: already exists`);
      }
      const finalMode = mode ?? (existing !== null ? Number(existing.mode) & 0o7777 : FILE_MODE);
      const temp = `.aiem-tmp-${randomBytes(6).toString("hex")}`;
      const tempPath = at(loc.parent, temp);
      let fd: number;
      try {
        fd = fs.openSync(
          tempPath,
          fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW,
          0o600,
        );
      } catch (error) {
        throw fsError(error, display);
      }
      let linked = false;
      try {
        try {
          let total = 0;
          for await (const item of chunks) {
            const batch = item instanceof Uint8Array ? [item] : item;
            for (const chunk of batch) total += chunk.length;
            if (maxFileBytes !== undefined && total > maxFileBytes) throw tooLarge();
            await writeAll(fd, batch);
          }
          if (typeof content === "function") {
            await content(fd, display);
            // The filler's writes are not this process's, so the rlimit did not stop them.
            if (maxFileBytes !== undefined && fs.fstatSync(fd).size > maxFileBytes) throw tooLarge();
          }
          fs.fchmodSync(fd, finalMode);
        } finally {
          fs.closeSync(fd);
        }
        if (overwrite) {
          const replaced = holdOpen(at(loc.parent, name));
          try {
            fs.renameSync(tempPath, at(loc.parent, name));
            linked = true;
          } finally {
            // The replaced file's blocks are freed when its last reference goes, which for a
            // large file takes tens of milliseconds: that happens in this close, off the call's path.
            if (replaced !== undefined) fs.close(replaced, () => undefined);
          }
        } else {
          // link() refuses an existing destination atomically, so a file that appeared since the
          // check above is not replaced.
          try {
            fs.linkSync(tempPath, at(loc.parent, name));
          } catch (error) {
            const code = errnoCode(error);
            if (code === "EEXIST") throw alreadyExists(`${display}: already exists`);
            if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw error;
            if (lstatOrNull(at(loc.parent, name)) !== null) throw alreadyExists(`${display}: already exists`);
            fs.renameSync(tempPath, at(loc.parent, name));
            linked = true;
          }
        }
      } catch (error) {
        throw fsError(error, display);
      } finally {
        if (!linked) {
          try {
            fs.unlinkSync(tempPath);
          } catch {
            // the temporary file is gone already
          }
        }
      }
      const st = lstatOrNull(at(loc.parent, name));
      if (st === null) throw notFound(`${display}: removed right after it was written`);
      return toFileInfo(display, st);
    });
  }

  /**
   * Resolves and opens a regular file for reading, with the checks every read makes (inside the
   * sandbox, not the agent's directory, a regular file, no named pipe swapped in). The caller
   * owns the descriptor.
   */
  async function openForRead(path: string): Promise<OpenedFile> {
    const segments = pathSegments(path);
    const display = joinSegments(segments);
    return withLocationAsync(segments, { followFinal: true, createParents: false, display }, async (loc) => {
      denyAgentDir(loc, display);
      if (loc.name === null) throw failedPrecondition(`${display}: is not a regular file`);
      const target = entryPath(loc);
      const pre = lstatOrNull(target);
      if (pre === null) throw notFound(`${display}: no such file or directory`);
      if (!pre.isFile()) {
        throw failedPrecondition(`${display}: is not a regular file`);
      }
      let fd: number;
      try {
        // O_NONBLOCK: should the entry be swapped for a named pipe, opening it must not hang.
        fd = fs.openSync(target, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
      } catch (error) {
        if (errnoCode(error) === "ELOOP") throw failedPrecondition(`${display}: is not a regular file`);
        throw fsError(error, display);
      }
      try {
        const st = fs.fstatSync(fd, { bigint: true });
        if (!st.isFile()) throw failedPrecondition(`${display}: is not a regular file`);
        return { fd, display, stats: st };
      } catch (error) {
        closeQuietly(fd);
        throw fsError(error, display);
      }
    });
  }

  async function readFile(path: string, offset: number, limit: number): Promise<ReadResult> {
    if (offset < 0) throw invalidArgument("offset: must not be negative");
    if (limit < 0) throw invalidArgument("limit: must not be negative");
    const { fd, display, stats: st } = await openForRead(path);
    try {
      const want = limit === 0 ? maxReadBytes : Math.min(limit, maxReadBytes);
      const size = Number(st.size);
      const expected = size > 0 ? Math.max(0, Math.min(want, size - offset)) : want;
      const buffer = Buffer.allocUnsafe(expected);
      let got = 0;
      while (got < expected) {
        const { bytesRead: n } = await fsRead(fd, buffer, got, expected - got, offset + got);
        if (n === 0) break;
        got += n;
      }
      const eof = got < want || (size > 0 && offset + got >= size);
      return { content: buffer.subarray(0, got), eof, fileInfo: offset === 0 ? toFileInfo(display, st) : undefined };
    } catch (error) {
      throw fsError(error, display);
    } finally {
      closeQuietly(fd);
    }
  }

  async function removeTree(parent: number, name: string): Promise<void> {
    let dir: number;
    try {
      dir = fs.openSync(at(parent, name), O_DIR);
    } catch (error) {
      const code = errnoCode(error);
      if (code === "ENOENT") return;
      if (code === "ELOOP" || code === "ENOTDIR") {
        // It is no longer a directory: remove the entry itself, never what it points to.
        fs.unlinkSync(at(parent, name));
        return;
      }
      throw error;
    }
    try {
      let count = 0;
      for (const entry of fs.readdirSync(at(dir))) {
        const st = lstatOrNull(at(dir, entry));
        if (st === null) continue;
        if (st.isDirectory()) await removeTree(dir, entry);
        else fs.unlinkSync(at(dir, entry));
        // Let the event loop drain process output now and then during a large removal.
        if (++count % 256 === 0) await new Promise((r) => setImmediate(r));
      }
    } finally {
      closeQuietly(dir);
    }
    fs.rmdirSync(at(parent, name));
  }

  async function remove(path: string, recursive: boolean): Promise<void> {
    const segments = pathSegments(path);
    const display = joinSegments(segments);
    if (segments.length === 0) throw invalidArgument("path: cannot remove the sandbox root");
    await withLocationAsync(segments, { followFinal: false, createParents: false, display }, async (loc) => {
      if (loc.name === null) throw invalidArgument("path: cannot remove the sandbox root");
      denyReadOnly(loc.canonical, display);
      const target = at(loc.parent, loc.name);
      const st = lstatOrNull(target);
      if (st === null) throw notFound(`${display}: no such file or directory`);
      try {
        if (!st.isDirectory()) {
          fs.unlinkSync(target);
          return;
        }
        try {
          fs.rmdirSync(target);
        } catch (error) {
          const code = errnoCode(error);
          if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
          if (!recursive) throw failedPrecondition(`${display}: directory is not empty; set recursive to remove it`);
          await removeTree(loc.parent, loc.name);
        }
      } catch (error) {
        throw fsError(error, display);
      }
    });
  }

  function move(source: string, destination: string, overwrite: boolean, createParents: boolean): FileInfo {
    const src = pathSegments(source, "source");
    const dst = pathSegments(destination, "destination");
    const srcDisplay = joinSegments(src);
    const dstDisplay = joinSegments(dst);
    if (src.length === 0) throw invalidArgument("source: cannot move the sandbox root");
    if (dst.length === 0) throw invalidArgument("destination: cannot replace the sandbox root");
    return withLocation(src, { followFinal: false, createParents: false, display: srcDisplay }, (from) => {
      if (from.name === null) throw invalidArgument("source: cannot move the sandbox root");
      denyReadOnly(from.canonical, srcDisplay);
      const srcSt = lstatOrNull(at(from.parent, from.name));
      if (srcSt === null) throw notFound(`${srcDisplay}: no such file or directory`);
      return withLocation(dst, { followFinal: false, createParents, display: dstDisplay }, (to) => {
        if (to.name === null) throw invalidArgument("destination: cannot replace the sandbox root");
        denyReadOnly(to.canonical, dstDisplay);
        const same =
          to.canonical.length === from.canonical.length && to.canonical.every((s, i) => s === from.canonical[i]);
        const srcPath = at(from.parent, from.name!);
        const dstPath = at(to.parent, to.name);
        if (!same) {
          if (
            srcSt.isDirectory() &&
            to.canonical.length > from.canonical.length &&
            from.canonical.every((s, i) => s === to.canonical[i])
          ) {
            throw invalidArgument(`destination: cannot move ${srcDisplay} into itself`);
          }
          const dstSt = lstatOrNull(dstPath);
          if (dstSt !== null) {
            if (!overwrite) throw alreadyExists(`${dstDisplay}: already exists`);
            if (srcSt.isDirectory() && !dstSt.isDirectory()) {
              throw failedPrecondition(`${dstDisplay}: cannot replace a file with a directory`);
            }
            if (!srcSt.isDirectory() && dstSt.isDirectory()) {
              throw failedPrecondition(`${dstDisplay}: cannot replace a directory with a file`);
            }
          }
          try {
            fs.renameSync(srcPath, dstPath);
          } catch (error) {
            const code = errnoCode(error);
            if (code === "ENOTEMPTY" || code === "EEXIST") {
              throw failedPrecondition(`${dstDisplay}: cannot replace a directory that is not empty`);
            }
            if (code === "EINVAL") throw invalidArgument(`destination: cannot move ${srcDisplay} into itself`);
            if (code === "ENOTDIR" || code === "EISDIR") {
              throw failedPrecondition(`${dstDisplay}: cannot replace a directory with a file or the reverse`);
            }
            throw fsError(error, code === "ENOENT" ? srcDisplay : dstDisplay);
          }
        }
        const st = lstatOrNull(dstPath);
        if (st === null) throw notFound(`${dstDisplay}: removed right after it was moved`);
        return toFileInfo(dstDisplay, st);
      });
    });
  }

  return { stat, listDirectory, makeDirectory, writeFile, readFile, openForRead, remove, move };
}
