// Sandbox path rules shared by the filesystem and process calls of the agent.
import { Code, ConnectError } from "@connectrpc/connect";

/** The directory relative paths start from, and processes start in. */
export const WORKSPACE = "/workspace";

/** The agent's own directory inside the sandbox (its code and socket); no API call may touch it. */
export const AGENT_DIR = ".aiem";

/**
 * Splits a sandbox path into its segments. Relative paths start at `/workspace`; `.` and empty
 * segments are dropped; a `..` segment, an empty path or a NUL byte is INVALID_ARGUMENT, so no
 * request can climb out of the place it names.
 */
export function pathSegments(path: string, field = "path"): string[] {
  if (path === "") throw new ConnectError(`${field}: is required`, Code.InvalidArgument);
  if (path.includes("\0")) throw new ConnectError(`${field}: must not contain NUL bytes`, Code.InvalidArgument);
  const full = path.startsWith("/") ? path : `${WORKSPACE}/${path}`;
  const segments: string[] = [];
  for (const segment of full.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      throw new ConnectError(`${field}: must not contain '..' segments`, Code.InvalidArgument);
    }
    segments.push(segment);
  }
  return segments;
}

/** The absolute path of a list of segments. */
export function joinSegments(segments: readonly string[]): string {
  return `/${segments.join("/")}`;
}

/**
 * Whether a canonical (symlink-free) path lies in a directory that no call may change: the
 * system directories bound read-only from the host, the kernel's pseudo filesystems and the
 * agent's own directory.
 */
export function isReadOnlySystemPath(segments: readonly string[]): boolean {
  const first = segments[0];
  if (first === undefined) return false;
  return (
    first === "usr" ||
    first === "bin" ||
    first === "sbin" ||
    first === "etc" ||
    /^lib(32|64|x32)?$/.test(first) ||
    first === "proc" ||
    first === "dev" ||
    first === "sys" ||
    first === AGENT_DIR
  );
}

/** Whether a canonical path is inside the agent's private directory. */
export function isAgentPath(segments: readonly string[]): boolean {
  return segments[0] === AGENT_DIR;
}
