// A runtime whose steps a test can hold, to keep an engine in a passing state.
import type { LocalRuntime } from "../runtime/local-runtime.js";
import type { EngineRunSpec, EngineRuntime, EngineStatus } from "../runtime/runtime.js";

/** Operations of a GatedRuntime that a test can hold, to keep an engine in a passing state. */
export type GatedOp = "start" | "ready" | "stop" | "remove" | "resize";

/**
 * The local runtime with gates: while a gate is held for an engine (by resource name or uid),
 * `start`, `stop`, `remove` and `resizeStorage` wait, and `inspect` reports a ready engine as
 * still starting. The reconciler then leaves the engine in STARTING, CONNECTING, PAUSING,
 * TERMINATING or DELETING, or with its storage resizing, until the test releases the gate.
 */
export interface GatedRuntime<Inner extends EngineRuntime = LocalRuntime> extends EngineRuntime {
  readonly inner: Inner;
  hold(key: string, op: GatedOp): void;
  release(key: string, op: GatedOp): void;
  /** Releases every gate. */
  releaseAll(): void;
  /** The uid of a started engine by resource name. */
  uidOf(name: string): string | undefined;
}

export function createGatedRuntime<Inner extends EngineRuntime>(inner: Inner): GatedRuntime<Inner> {
  const held = new Set<string>();
  const waiters = new Map<string, Array<() => void>>();
  const names = new Map<string, string>();
  const listeners = new Set<(uid: string) => void>();
  const keysOf = (uid: string) => [uid, names.get(uid) ?? ""];
  const isHeld = (uid: string, op: GatedOp) => keysOf(uid).some((k) => held.has(`${k}|${op}`));
  const pass = async (uid: string, op: GatedOp) => {
    while (isHeld(uid, op)) {
      await new Promise<void>((resolve) => {
        for (const k of keysOf(uid)) {
          const key = `${k}|${op}`;
          waiters.set(key, [...(waiters.get(key) ?? []), resolve]);
        }
      });
    }
  };
  inner.watch((uid) => {
    for (const l of listeners) l(uid);
  });
  return {
    inner,
    placement: inner.placement,
    ...(inner.shared ? { shared: true } : {}),
    hold(key, op) {
      held.add(`${key}|${op}`);
    },
    release(key, op) {
      held.delete(`${key}|${op}`);
      for (const resolve of waiters.get(`${key}|${op}`) ?? []) resolve();
      waiters.delete(`${key}|${op}`);
      const uid = [...names].find(([, n]) => n === key)?.[0] ?? key;
      for (const l of listeners) l(uid);
    },
    releaseAll() {
      for (const entry of [...held]) {
        const i = entry.lastIndexOf("|");
        this.release(entry.slice(0, i), entry.slice(i + 1) as GatedOp);
      }
    },
    uidOf: (name) => [...names].find(([, n]) => n === name)?.[0],
    async start(spec: EngineRunSpec) {
      names.set(spec.uid, spec.name);
      await pass(spec.uid, "start");
      return inner.start(spec);
    },
    async inspect(uid): Promise<EngineStatus> {
      const status = await inner.inspect(uid);
      return status.phase === "ready" && isHeld(uid, "ready") ? { ...status, phase: "starting" } : status;
    },
    async stop(uid) {
      await pass(uid, "stop");
      return inner.stop(uid);
    },
    async remove(uid) {
      await pass(uid, "remove");
      return inner.remove(uid);
    },
    async resizeStorage(uid, bytes) {
      await pass(uid, "resize");
      return inner.resizeStorage(uid, bytes);
    },
    diskUsage: (uid, bytes) => inner.diskUsage(uid, bytes),
    logs: (uid, max) => inner.logs(uid, max),
    ...(inner.logsFrom ? { logsFrom: inner.logsFrom.bind(inner) } : {}),
    endpoint: (uid) => inner.endpoint(uid),
    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () => inner.close(),
  };
}
