// One reconcile step of a claimed engine: what it does depends on what was asked for.
import type { Logger } from "@aiem/kit/logger";
import { S } from "./kinds.js";
import type { Commit } from "./reconciler-commit.js";
import { stepRunning } from "./reconciler-running.js";
import type { EngineRuntime } from "./runtime/runtime.js";
import type { EngineRow, PresentContext } from "./store.js";

/** What every step works with. */
export interface StepContext {
  readonly runtime: EngineRuntime;
  readonly logger: Logger;
  readonly coreConfig: Readonly<Record<string, string>>;
  /** How often a running engine is checked (ms). */
  readonly checkIntervalMs: number;
  /** A start that is not healthy after this long fails (ms). */
  readonly startTimeoutMs: number;
  readonly context: () => PresentContext;
  /** The latest activity not yet written to the database, for idle checks. */
  readonly pendingActivity?: ((uid: string) => Date | undefined) | undefined;
  readonly commit: Commit;
  /** When each running engine's disk use was last measured (ms since epoch). */
  readonly diskCheckedAt: Map<string, number>;
}

export const later = (ms: number) => new Date(Date.now() + ms);

/** Works on one claimed engine; throws when the runtime fails (the caller retries later). */
export async function stepEngine(step: StepContext, row: EngineRow): Promise<void> {
  if (row.storage_resizing && row.desired !== "DELETED") {
    await step.runtime.resizeStorage(row.uid, row.storage_bytes);
    await step.commit(row, { storage_resizing: false }, new Date());
    return;
  }
  switch (row.desired) {
    case "DELETED":
      await step.runtime.remove(row.uid);
      step.diskCheckedAt.delete(row.uid);
      await step.commit(row, {}, null, { deleted: true });
      return;
    case "PAUSED":
    case "TERMINATED":
      await stepStopped(step, row);
      return;
    case "RUNNING":
      await stepRunning(step, row);
      return;
  }
}

async function stepStopped(step: StepContext, row: EngineRow): Promise<void> {
  const target = row.desired === "PAUSED" ? S.PAUSED : S.TERMINATED;
  if (row.state === target || row.state === S.FAILED || row.state === S.TERMINATED) {
    await step.commit(row, {}, null);
    return;
  }
  await step.runtime.stop(row.uid);
  await step.commit(row, { state: target, launched_at: null, total_disk_bytes: null, free_disk_bytes: null }, null);
}
