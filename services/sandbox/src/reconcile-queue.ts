// Work on one sandbox is serialised: a kick queues a pass over it, or asks the pass under way to
// run once more when it is done, so that a change made meanwhile is not missed.
import type { Logger } from "@aiem/kit/logger";

export interface ReconcileQueue {
  /** Reconciles one sandbox soon; resolves when that pass (and any it triggered) is done. */
  kick(uid: string): Promise<void>;
  /** Asks for another pass over the sandbox once the one under way is done. */
  again(uid: string): void;
  /** Whether a pass over the sandbox is queued or under way. */
  has(uid: string): boolean;
  /** Resolves when the passes queued or under way over the sandbox are done; undefined for none. */
  current(uid: string): Promise<void> | undefined;
  readonly size: number;
  /** Resolves when every pass queued now is done. */
  drain(): Promise<void>;
}

export function createReconcileQueue(
  logger: Logger,
  stopped: () => boolean,
  reconcile: (uid: string) => Promise<void>,
  /** Told when a kick finds a pass under way: what it waits for may no longer be wanted. */
  onKickDuringPass: (uid: string) => void = () => undefined,
): ReconcileQueue {
  const queues = new Map<string, { again: boolean; done: Promise<void> }>();
  return {
    kick(uid) {
      const existing = queues.get(uid);
      if (existing) {
        existing.again = true;
        onKickDuringPass(uid);
        return existing.done;
      }
      const entry = { again: true, done: Promise.resolve() };
      entry.done = (async () => {
        try {
          while (entry.again && !stopped()) {
            entry.again = false;
            try {
              await reconcile(uid);
            } catch (err) {
              logger.error("reconciling a sandbox failed", {
                uid,
                error: err instanceof Error ? err.message : String(err),
              });
            }
          }
        } finally {
          queues.delete(uid);
        }
      })();
      queues.set(uid, entry);
      return entry.done;
    },
    again(uid) {
      const q = queues.get(uid);
      if (q) q.again = true;
    },
    has: (uid) => queues.has(uid),
    current: (uid) => queues.get(uid)?.done,
    get size() {
      return queues.size;
    },
    async drain() {
      await Promise.all([...queues.values()].map((q) => q.done));
    },
  };
}
