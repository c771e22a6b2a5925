// Reconcile steps of an engine that should run: launching it, waiting for it to answer, and
// checking it while it runs (its process, its idle and running limits, its disk use).
import { KIND_BY_TYPE, S, type Desired } from "./kinds.js";
import { failurePatch, startFailurePatch, startTimeoutPatch } from "./engine-failure.js";
import type { Patch } from "./reconciler-commit.js";
import { later, type StepContext } from "./reconciler-step.js";
import { runSpecOf } from "./run-spec.js";
import type { EngineStatus } from "./runtime/runtime.js";
import type { EngineRow } from "./store.js";

/** Disk use is measured every this many checks of a running engine. */
const DISK_CHECK_EVERY = 6;

export async function stepRunning(step: StepContext, row: EngineRow): Promise<void> {
  if (row.state === S.FAILED || row.state === S.TERMINATED) return void (await step.commit(row, {}, null));
  if (row.state === S.STARTING || row.state === S.CONNECTING) {
    if (row.launched_at === null) await launch(step, row);
    else await awaitReady(step, row, row.launched_at);
    return;
  }
  if (row.state === S.RUNNING) {
    await checkRunning(step, row);
    return;
  }
  // PAUSING or TERMINATING while asked to run cannot be produced by the API; settle as stopped.
  await step.commit(row, {}, null);
}

async function launch(step: StepContext, row: EngineRow): Promise<void> {
  const status = await step.runtime.inspect(row.uid);
  if (row.type === "notebookEngines" && row.resume_time !== null && !status.dataPresent) {
    const failure_message = "the engine's storage is gone, so it cannot be resumed";
    await step.commit(row, { state: S.TERMINATED, desired: "TERMINATED", failure_message }, null);
    return;
  }
  try {
    await step.runtime.start(runSpecOf(row, step.coreConfig));
  } catch (err) {
    step.logger.warn("engine start failed", { engine: row.name, error: (err as Error).message });
    await step.commit(row, startFailurePatch(row, err), null);
    return;
  }
  const state = row.type === "notebookEngines" ? S.STARTING : S.CONNECTING;
  await step.commit(row, { state, launched_at: new Date() }, later(Math.min(2_000, step.startTimeoutMs)));
}

async function awaitReady(step: StepContext, row: EngineRow, launchedAt: Date): Promise<void> {
  const status = await step.runtime.inspect(row.uid);
  switch (status.phase) {
    case "ready":
      await becomeRunning(step, row);
      return;
    case "starting":
      await stillStarting(step, row, status, (row.start_time ?? launchedAt).getTime());
      return;
    case "exited":
      await step.commit(row, failurePatch(row, status.exit, "the engine process ended"), null);
      return;
    case "stopped":
    case "absent": {
      const exit = { cause: "unknown", message: "the engine process disappeared while it was starting" } as const;
      await step.commit(row, failurePatch(row, exit, ""), null);
      return;
    }
  }
}

async function becomeRunning(step: StepContext, row: EngineRow): Promise<void> {
  const now = new Date();
  const running: Patch = {
    state: S.RUNNING,
    resume_time: now,
    last_activity_time: now,
    failure_message: "",
    failure_reason: "",
  };
  step.diskCheckedAt.delete(row.uid);
  await refreshDisk(step, { ...row, total_disk_bytes: null }, running);
  const firstCheck = Math.min(
    step.checkIntervalMs,
    Number(row.max_idle_ms) || Infinity,
    Number(row.max_running_ms) || Infinity,
  );
  await step.commit(row, running, later(firstCheck));
}

async function stillStarting(step: StepContext, row: EngineRow, status: EngineStatus, since: number): Promise<void> {
  if (Date.now() - since > step.startTimeoutMs) {
    await step.runtime.stop(row.uid);
    await step.commit(row, startTimeoutPatch(row, status, step.startTimeoutMs), null);
    return;
  }
  await step.commit(row, {}, later(Math.min(2_000, Math.max(50, since + step.startTimeoutMs - Date.now()))));
}

async function checkRunning(step: StepContext, row: EngineRow): Promise<void> {
  const status = await step.runtime.inspect(row.uid);
  if (status.phase === "stopped") {
    // Stopped by someone else with its data kept (a pod deleted behind our back, a node
    // drained): it should run, so it is started again rather than failed.
    step.logger.info("a running engine was stopped from outside; starting it again", { engine: row.name });
    await step.commit(row, { state: S.STARTING, launched_at: null }, new Date());
    return;
  }
  if (status.phase === "exited" || status.phase === "absent") {
    await step.commit(row, failurePatch(row, status.exit, "the engine process disappeared"), null);
    return;
  }
  const now = Date.now();
  const due = limitDue(step, row);
  if (now >= due.idle || now >= due.running) {
    const which = now >= due.idle ? "maximum idle duration" : "maximum running duration";
    const kind = KIND_BY_TYPE[row.type];
    const desired: Desired = kind.limitAction === "pause" ? "PAUSED" : "TERMINATED";
    step.logger.info(`engine exceeded its ${which}`, { engine: row.name, action: kind.limitAction });
    const state = kind.limitAction === "pause" ? S.PAUSING : S.TERMINATING;
    await step.commit(row, { desired, state, generation: row.generation + 1n }, new Date());
    return;
  }
  const patch: Patch = {};
  await refreshDisk(step, row, patch);
  await step.commit(row, patch, new Date(Math.min(now + step.checkIntervalMs, due.idle, due.running)));
}

/** When a running engine's idle or running limit expires (ms since epoch), or Infinity. */
function limitDue(step: StepContext, row: EngineRow): { idle: number; running: number } {
  const pending = step.pendingActivity?.(row.uid);
  const lastActive = Math.max(
    row.last_activity_time?.getTime() ?? 0,
    row.resume_time?.getTime() ?? 0,
    pending?.getTime() ?? 0,
  );
  const idle = row.max_idle_ms > 0n ? lastActive + Number(row.max_idle_ms) : Infinity;
  const running =
    row.max_running_ms > 0n && row.resume_time ? row.resume_time.getTime() + Number(row.max_running_ms) : Infinity;
  return { idle, running };
}

/**
 * Disk sizes of a running engine: measured when it starts running and after its storage grew,
 * then every few checks (a directory walk is not free, and disk use changes slowly).
 */
async function refreshDisk(step: StepContext, row: EngineRow, patch: Patch): Promise<void> {
  if (!KIND_BY_TYPE[row.type].hasStorage) return;
  const last = step.diskCheckedAt.get(row.uid) ?? 0;
  const stale = row.total_disk_bytes === null || row.total_disk_bytes !== row.storage_bytes;
  if (!stale && Date.now() - last < DISK_CHECK_EVERY * step.checkIntervalMs) return;
  step.diskCheckedAt.set(row.uid, Date.now());
  const usage = await step.runtime.diskUsage(row.uid, row.storage_bytes);
  if (!usage) return;
  if (usage.totalBytes !== row.total_disk_bytes) patch.total_disk_bytes = usage.totalBytes;
  if (usage.freeBytes !== row.free_disk_bytes) patch.free_disk_bytes = usage.freeBytes;
}
