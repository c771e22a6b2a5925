// How a failed engine is recorded: its message and, for notebook engines, the failure reason.
import { S } from "./kinds.js";
import type { Patch } from "./reconciler-commit.js";
import type { EngineExit, EngineStatus } from "./runtime/runtime.js";
import type { EngineRow } from "./store.js";

/** Why a pod waits when its volume cannot be had (Kubernetes' event reasons). */
const VOLUME_REASONS = new Set(["FailedMount", "FailedAttachVolume"]);

/** Errors of a start that say the engine's storage cannot be used. */
const STORAGE_ERRORS = new Set(["EACCES", "EPERM", "ENOSPC", "EROFS", "EDQUOT", "EIO", "ENOTDIR"]);

export function failurePatch(row: EngineRow, exit: EngineExit | undefined, fallback: string): Patch {
  const message = exit?.message ?? fallback;
  let reason = "";
  if (row.type === "notebookEngines") {
    reason =
      exit?.cause === "oom"
        ? "FAILURE_REASON_OOM_KILLED"
        : exit?.cause === "error"
          ? "FAILURE_REASON_PROCESS_FAILED"
          : "FAILURE_REASON_UNKNOWN";
  }
  return {
    state: S.FAILED,
    failure_message: message,
    failure_reason: reason,
    launched_at: null,
    total_disk_bytes: null,
    free_disk_bytes: null,
  };
}

/** The runtime refused to start the engine. */
export function startFailurePatch(row: EngineRow, err: unknown): Patch {
  const code = (err as NodeJS.ErrnoException).code;
  const patch = failurePatch(
    row,
    { cause: "unknown", message: `the engine could not be started: ${(err as Error).message}` },
    "",
  );
  if (row.type === "notebookEngines" && code && STORAGE_ERRORS.has(code))
    patch.failure_reason = "FAILURE_REASON_PVC_ACCESS_FAILURE";
  return patch;
}

/** The engine did not become ready within the start timeout. */
export function startTimeoutPatch(row: EngineRow, status: EngineStatus, startTimeoutMs: number): Patch {
  const seconds = Math.round(startTimeoutMs / 1000);
  // What it waited for, when the runtime knows (no node has its GPU, an image that cannot be
  // pulled), is the reason it failed.
  const waited = status.pending;
  const patch = failurePatch(
    row,
    {
      cause: "error",
      message: waited
        ? `the engine did not start within ${seconds} s: ${waited.reason}: ${waited.message}`
        : `the engine did not answer its health check within ${seconds} s`,
    },
    "",
  );
  if (row.type === "notebookEngines" && waited && VOLUME_REASONS.has(waited.reason))
    patch.failure_reason = "FAILURE_REASON_PVC_ACCESS_FAILURE";
  return patch;
}
