// The forwarded requests and upgrades open on each port, so that closing a port (or making it
// private) cuts them, and each keeps its sandbox in use while it lasts.
import type { Duplex } from "node:stream";
import type { Admitted } from "./port-admission.js";
import type { Lifecycle } from "./lifecycle.js";

/** One forwarded request or upgrade: its tunnel once open, and whether it finished. */
export interface Forwarded {
  readonly state: { tunnel?: Duplex; finished: boolean };
  /** Ends it: safe to call more than once. */
  finish(): void;
}

export interface PortConnections {
  /** Opens one forwarded request or upgrade: closeConnections cuts it (calling `cut`) and its tunnel. */
  forwarded(go: Admitted, cut: () => void): Forwarded;
  /** Cuts the forwarded connections of a port (only those through its public URL, if asked). */
  closeConnections(sandboxUid: string, port: number, onlyPublic: boolean): void;
}

export function createPortConnections(lifecycle: Lifecycle): PortConnections {
  /** Open forwarded requests by `<uid>/<port>`, with whether they came through the public URL. */
  const open = new Map<string, Set<{ isPublic: boolean; cut: () => void }>>();
  return {
    forwarded(go, cut) {
      lifecycle.enter(go.uid);
      const key = `${go.uid}/${go.port}`;
      const state: Forwarded["state"] = { finished: false };
      const entry = {
        isPublic: go.isPublic,
        cut: () => {
          state.tunnel?.destroy();
          cut();
        },
      };
      let set = open.get(key);
      if (!set) {
        set = new Set();
        open.set(key, set);
      }
      set.add(entry);
      const finish = () => {
        if (state.finished) return;
        state.finished = true;
        open.get(key)?.delete(entry);
        if (open.get(key)?.size === 0) open.delete(key);
        state.tunnel?.destroy();
        lifecycle.leave(go.uid);
      };
      return { state, finish };
    },
    closeConnections(uid, port, onlyPublic) {
      for (const entry of [...(open.get(`${uid}/${port}`) ?? [])]) if (!onlyPublic || entry.isPublic) entry.cut();
    },
  };
}
