// Resolving a sandbox path safely: one segment at a time from an open directory, following
// symbolic links by hand within the sandbox root (see filesystem.ts for why).
import * as fs from "node:fs";
import { errnoCode, failedPrecondition, fsError, notFound, permissionDenied } from "./errors.js";
import { isAgentPath, isReadOnlySystemPath, joinSegments } from "./paths.js";
const O_DIR = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;
const MAX_SYMLINKS = 40;
const DIR_MODE = 0o755;

export function at(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

export function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // already closed; nothing to release
  }
}

export function lstatOrNull(path: string): fs.BigIntStats | null {
  try {
    return fs.lstatSync(path, { bigint: true });
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return null;
    throw error;
  }
}

/** Where a resolved path ends: the open directory holding the entry, and the entry's name. */
export interface Location {
  /** Open directory that holds the entry; for the root itself, the root. Owned by the caller. */
  readonly parent: number;
  /** The entry's name in `parent`; null when the path is the sandbox root. */
  readonly name: string | null;
  /** The symlink-free segments of the entry from the sandbox root. */
  readonly canonical: readonly string[];
}

export interface ResolveOptions {
  /** Whether a symbolic link in the last position is followed (true) or is the entry (false). */
  readonly followFinal: boolean;
  /** Whether missing directories on the way are created (mode 0755). */
  readonly createParents: boolean;
  /** The sandbox path as asked for, for error messages. */
  readonly display: string;
}

/** The resolver of one sandbox root; every Location it returns holds an open directory the caller closes. */
export function createPathResolver(root: string) {
  function openRoot(): number {
    return fs.openSync(root, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  }

  function resolve(segments: readonly string[], opts: ResolveOptions): Location {
    const stack: { fd: number; name: string }[] = [{ fd: openRoot(), name: "" }];
    const queue = [...segments];
    let links = 0;
    const canonicalOf = (name?: string): string[] => {
      const names = stack.slice(1).map((s) => s.name);
      if (name !== undefined) names.push(name);
      return names;
    };
    const finish = (name: string | null): Location => {
      const canonical = canonicalOf(name ?? undefined);
      const top = stack.pop()!;
      for (const s of stack) closeQuietly(s.fd);
      stack.length = 0;
      return { parent: top.fd, name, canonical };
    };
    try {
      while (queue.length > 0) {
        const name = queue.shift()!;
        if (name === "" || name === ".") continue;
        if (name === "..") {
          if (stack.length === 1) {
            throw permissionDenied(`${opts.display}: a symbolic link points outside the sandbox`);
          }
          closeQuietly(stack.pop()!.fd);
          continue;
        }
        const isFinal = queue.length === 0;
        const top = stack[stack.length - 1]!.fd;
        if (isFinal && !opts.followFinal) {
          return finish(name);
        }
        try {
          const fd = fs.openSync(at(top, name), O_DIR);
          stack.push({ fd, name });
          continue;
        } catch (error) {
          const code = errnoCode(error);
          if (code === "ENOENT") {
            if (isFinal) {
              return finish(name);
            }
            if (!opts.createParents) {
              throw notFound(`${opts.display}: parent directory ${joinSegments(canonicalOf(name))} does not exist`);
            }
            const canonical = canonicalOf(name);
            if (isReadOnlySystemPath(canonical)) throw permissionDenied(`${opts.display}: permission denied`);
            try {
              fs.mkdirSync(at(top, name), DIR_MODE);
              const fd = fs.openSync(at(top, name), O_DIR);
              try {
                fs.fchmodSync(fd, DIR_MODE);
              } finally {
                closeQuietly(fd);
              }
            } catch (mkdirError) {
              if (errnoCode(mkdirError) !== "EEXIST") throw fsError(mkdirError, opts.display);
            }
            queue.unshift(name);
            continue;
          }
          if (code === "ELOOP" || code === "ENOTDIR") {
            const st = lstatOrNull(at(top, name));
            if (st === null) {
              // Removed between the two calls; try the segment again.
              queue.unshift(name);
              continue;
            }
            if (st.isSymbolicLink()) {
              if (++links > MAX_SYMLINKS) {
                throw failedPrecondition(`${opts.display}: too many levels of symbolic links`);
              }
              let target: string;
              try {
                target = fs.readlinkSync(at(top, name));
              } catch (readError) {
                if (errnoCode(readError) === "ENOENT" || errnoCode(readError) === "EINVAL") {
                  queue.unshift(name);
                  continue;
                }
                throw readError;
              }
              if (target.startsWith("/")) {
                // Absolute targets start at the sandbox root, as they do for the sandbox's processes.
                for (const s of stack.splice(1)) closeQuietly(s.fd);
              }
              const parts = target.split("/");
              queue.unshift(...parts);
              continue;
            }
            if (isFinal) {
              return finish(name);
            }
            throw failedPrecondition(`${opts.display}: ${joinSegments(canonicalOf(name))} is not a directory`);
          }
          if (code === "EACCES" || code === "EPERM") {
            throw permissionDenied(`${opts.display}: permission denied`);
          }
          throw fsError(error, opts.display);
        }
      }
      // Every segment was a directory we entered: the entry is the top of the stack.
      if (stack.length === 1) return finish(null);
      const entry = stack.pop()!;
      closeQuietly(entry.fd);
      return finish(entry.name);
    } catch (error) {
      for (const s of stack) closeQuietly(s.fd);
      throw error;
    }
  }

  function entryPath(loc: Location): string {
    return loc.name === null ? at(loc.parent) : at(loc.parent, loc.name);
  }

  function withLocation<T>(segments: readonly string[], opts: ResolveOptions, fn: (loc: Location) => T): T {
    const loc = resolve(segments, opts);
    try {
      return fn(loc);
    } finally {
      closeQuietly(loc.parent);
    }
  }

  async function withLocationAsync<T>(
    segments: readonly string[],
    opts: ResolveOptions,
    fn: (loc: Location) => Promise<T>,
  ): Promise<T> {
    const loc = resolve(segments, opts);
    try {
      return await fn(loc);
    } finally {
      closeQuietly(loc.parent);
    }
  }

  function denyAgentDir(loc: Location, display: string): void {
    if (isAgentPath(loc.canonical)) throw permissionDenied(`${display}: permission denied`);
  }

  function denyReadOnly(canonical: readonly string[], display: string): void {
    if (isReadOnlySystemPath(canonical)) {
      throw permissionDenied(`${display}: is in a read-only system directory`);
    }
  }

  return { resolve, entryPath, withLocation, withLocationAsync, denyAgentDir, denyReadOnly };
}
