// Activity, which keeps a sandbox from being idle, kept in memory: every call on the sandbox,
// every byte through its ports, and as long as a wait or an output stream is open. The
// reconciler writes it to the database now and then, so the idle limit survives a restart roughly.
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { type SandboxRow, sandboxStateName } from "./store.js";

export interface SandboxActivity {
  /** Records activity on a sandbox now. */
  touch(uid: string): void;
  enter(uid: string): void;
  leave(uid: string): void;
  /** Counts as activity for as long as `work` runs. */
  busy<T>(uid: string, work: () => Promise<T>): Promise<T>;
  /** Milliseconds the sandbox has been idle, for a RUNNING sandbox; 0 otherwise. */
  idleMs(row: Pick<SandboxRow, "uid" | "state" | "last_activity">, at?: number): number;
  /** The latest activity worth storing: `at` while a call is open, else the last recorded, if any. */
  latest(uid: string, at: number): number | undefined;
  forget(uid: string): void;
}

export function createSandboxActivity(): SandboxActivity {
  const activity = new Map<string, number>();
  const busyCount = new Map<string, number>();
  const running = sandboxStateName(SandboxEngine_State.RUNNING);

  function touch(uid: string): void {
    activity.set(uid, Date.now());
  }
  function enter(uid: string): void {
    busyCount.set(uid, (busyCount.get(uid) ?? 0) + 1);
    touch(uid);
  }
  function leave(uid: string): void {
    const n = (busyCount.get(uid) ?? 1) - 1;
    if (n <= 0) busyCount.delete(uid);
    else busyCount.set(uid, n);
    touch(uid);
  }
  return {
    touch,
    enter,
    leave,
    async busy(uid, work) {
      enter(uid);
      try {
        return await work();
      } finally {
        leave(uid);
      }
    },
    idleMs(row, at = Date.now()) {
      if (row.state !== running) return 0;
      if ((busyCount.get(row.uid) ?? 0) > 0) return 0;
      const last = Math.max(activity.get(row.uid) ?? 0, row.last_activity.getTime());
      return Math.max(0, at - last);
    },
    latest(uid, at) {
      return (busyCount.get(uid) ?? 0) > 0 ? at : activity.get(uid);
    },
    forget(uid) {
      activity.delete(uid);
      busyCount.delete(uid);
    },
  };
}
