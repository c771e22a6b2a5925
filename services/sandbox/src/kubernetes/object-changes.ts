// Who waits on sandboxes' objects: listeners told whenever one of a sandbox's objects changes, and
// callers waiting for one object to be seen or gone, all released by the informers' events.
import {
  type SandboxInformers,
  type SandboxObject,
  type SandboxObjectKind,
  sandboxUidOf,
} from "./sandbox-informers.js";

export interface ObjectChanges {
  /** Calls `listener` with a sandbox's uid whenever one of its objects changes. */
  watch(listener: (uid: string) => void): () => void;
  /** Tells the listeners that the object's sandbox changed. */
  notify(object: SandboxObject): void;
  /**
   * Resolves once the object is not in the informer's cache (at once when it is not); with `uid`,
   * once that object is not (at once when the cache holds another of the name).
   */
  gone(kind: SandboxObjectKind, name: string, uid?: string): Promise<void>;
  /** Resolves once the object is in the informer's cache (at once when it is). */
  seen(kind: SandboxObjectKind, name: string): Promise<void>;
  /** Drops every listener. */
  close(): void;
}

/** Subscribes to the informers' events; call it before they start. */
export function createObjectChanges(informers: SandboxInformers): ObjectChanges {
  const listeners = new Set<(uid: string) => void>();
  const notify = (object: SandboxObject) => {
    const uid = sandboxUidOf(object);
    if (uid) for (const listener of listeners) listener(uid);
  };
  const waiters = new Map<string, (() => void)[]>();
  const release = (event: "gone" | "seen", kind: SandboxObjectKind) => (object: SandboxObject) => {
    const key = `${event}/${kind}/${object.metadata?.name ?? ""}`;
    for (const resolve of waiters.get(key) ?? []) resolve();
    waiters.delete(key);
  };
  const waitFor = (key: string): Promise<void> =>
    new Promise((resolve) => waiters.set(key, [...(waiters.get(key) ?? []), resolve]));
  for (const [kind, informer] of informers.all) {
    informer.on("delete", release("gone", kind));
    informer.on("add", release("seen", kind));
    informer.on("update", release("seen", kind));
    for (const verb of ["add", "update", "delete"] as const) informer.on(verb, notify);
  }
  return {
    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    notify,
    gone(kind, name, uid) {
      const cached = informers.cached(kind, name);
      if (!cached || (uid !== undefined && cached.metadata?.uid !== uid)) return Promise.resolve();
      return waitFor(`gone/${kind}/${name}`);
    },
    seen: (kind, name) => (informers.cached(kind, name) ? Promise.resolve() : waitFor(`seen/${kind}/${name}`)),
    close: () => listeners.clear(),
  };
}
