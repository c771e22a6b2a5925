// The rows of processes whose end this service recorded lately, kept for the wait that usually
// follows at once. Every call inside a sandbox is served by the replica that runs it, and an
// ended row changes only by being deleted (here, or with its sandbox, which the call's own check
// finds first), so a kept row is the stored one.
import type { ProcessRow } from "./store.js";

/** How long, and for how many processes, an ended row is kept. */
const ENDED_KEEP_MS = 30_000;
const ENDED_KEEP_MAX = 512;

export interface EndedProcesses {
  keep(key: string, row: ProcessRow): void;
  /** The kept row of a process, while it is fresh. */
  kept(key: string): ProcessRow | undefined;
  forget(key: string): void;
}

export function createEndedProcesses(): EndedProcesses {
  const rows = new Map<string, { row: ProcessRow; at: number }>();
  return {
    keep(key, row) {
      const now = Date.now();
      rows.delete(key);
      rows.set(key, { row, at: now });
      for (const [k, kept] of rows) {
        if (rows.size <= ENDED_KEEP_MAX && now - kept.at < ENDED_KEEP_MS) break;
        rows.delete(k);
      }
    },
    kept(key) {
      const kept = rows.get(key);
      if (kept && Date.now() - kept.at < ENDED_KEEP_MS) return kept.row;
      rows.delete(key);
      return undefined;
    },
    forget(key) {
      rows.delete(key);
    },
  };
}
