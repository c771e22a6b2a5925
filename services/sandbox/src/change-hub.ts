// Announcements of changes to a sandbox (its state, its agent) to the calls that wait for one:
// waits for a process's end, output streams, a sandbox's next state.

export interface ChangeHub {
  /** Resolves at the next notify(key), or when `signal` aborts. */
  next(keys: readonly string[], signal?: AbortSignal): Promise<void>;
  notify(key: string): void;
}

/** The key under which changes of a sandbox (its state, its agent) are announced. */
export const sandboxKey = (uid: string) => `sandbox:${uid}`;

export function createChangeHub(): ChangeHub {
  const waiters = new Map<string, Set<() => void>>();
  return {
    next(keys, signal) {
      return new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const done = () => {
          for (const key of keys) waiters.get(key)?.delete(done);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        for (const key of keys) {
          const set = waiters.get(key) ?? new Set();
          waiters.set(key, set);
          set.add(done);
        }
        signal?.addEventListener("abort", done, { once: true });
      });
    },
    notify(key) {
      const set = waiters.get(key);
      if (!set) return;
      waiters.delete(key);
      for (const w of set) w();
    },
  };
}
