// Who is at the other end of a connection to an agent's socket. The socket is the host's (see
// README.md, "The agent's socket"), but the service still checks, on every connection it makes,
// that the process serving it is the sandbox's agent: the kernel's peer credentials of the
// connection (SO_PEERCRED: the process that called listen(), which the agent does on the socket
// it was handed) must name the agent's host pid and the sandbox's host uid, and that pid must
// still have the start time the runtime recorded for the agent, so a pid reused by another
// process never passes.
import { createRequire } from "node:module";
import type * as net from "node:net";
import { processStartTime } from "./adopted-sandboxes.js";

/** The agent of a sandbox as a host process. */
export interface AgentIdentity {
  readonly pid: number;
  /** /proc/<pid>/stat field 22. */
  readonly startTime: string;
  /** The host uid the agent runs as: the sandbox's root, or the service's own unconfined. */
  readonly uid: number;
}

export interface PeerCredentials {
  readonly pid: number;
  readonly uid: number;
  readonly gid: number;
}

export type ReadPeerCredentials = (fd: number) => PeerCredentials;

const loaded = new Map<string, ReadPeerCredentials>();

/** The addon built from peer-credentials.c (agent-artifacts.ts). */
export function loadPeerCredentials(addonPath: string): ReadPeerCredentials {
  let read = loaded.get(addonPath);
  if (read === undefined) {
    const addon = createRequire(import.meta.url)(addonPath) as { peerCredentials: ReadPeerCredentials };
    read = addon.peerCredentials;
    loaded.set(addonPath, read);
  }
  return read;
}

/**
 * Why the connected `socket` is not served by `expected`, or undefined when it is. Reads the
 * descriptor of a Node socket from its handle (a stable part of Node on Linux).
 */
export function peerMismatch(
  socket: net.Socket,
  expected: AgentIdentity,
  read: ReadPeerCredentials,
): string | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== "number" || fd < 0) return "the connection has no descriptor to check";
  let peer: PeerCredentials;
  try {
    peer = read(fd);
  } catch (error) {
    return `its peer credentials cannot be read: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (peer.pid !== expected.pid || peer.uid !== expected.uid) {
    return `it is served by pid ${peer.pid} uid ${peer.uid}, not by the agent (pid ${expected.pid} uid ${expected.uid})`;
  }
  // After the credentials were read: a pid reused before then has another start time now.
  if (processStartTime(peer.pid) !== expected.startTime) return `the agent (pid ${peer.pid}) is not the process it was`;
  return undefined;
}
