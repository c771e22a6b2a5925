// The reconcile steps that stop a sandbox's agent: removing a deleted sandbox with its processes
// and ports, and recording a terminated one TERMINATED with its live processes failed.
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { ReconcileDeps } from "./reconcile-pass.js";
import {
  enqueueSandboxState,
  failLiveProcesses,
  loadSandboxByUid,
  sandboxStateOf,
  transitionSandbox,
  type SandboxRow,
} from "./store.js";

const S = SandboxEngine_State;

export interface StopSteps {
  readonly removeDeleted: (row: SandboxRow) => Promise<void>;
  readonly terminate: (row: SandboxRow) => Promise<void>;
}

export function createStopSteps(
  deps: Pick<ReconcileDeps, "context" | "runtime" | "starts" | "activity">,
  /** Tells those waiting on the sandbox that its agent and processes ended. */
  ended: (uid: string) => void,
): StopSteps {
  const { context, runtime, starts, activity } = deps;

  async function removeDeleted(row: SandboxRow): Promise<void> {
    const { uid } = row;
    starts.release(row.runtime_id);
    await runtime.destroy(row.runtime_id);
    await context.write(async (trx) => {
      const current = await loadSandboxByUid(trx, uid, true);
      if (current?.desired !== "deleted") return;
      await trx.deleteFrom("processes").where("sandbox_uid", "=", uid).execute();
      await trx.deleteFrom("ports").where("sandbox_uid", "=", uid).execute();
      await trx.deleteFrom("sandbox_engines").where("uid", "=", uid).execute();
      await enqueueSandboxState(trx, current, sandboxStateOf(current.state), context.now(), 0, true);
    });
    activity.forget(uid);
    ended(uid);
  }

  async function terminate(row: SandboxRow): Promise<void> {
    starts.release(row.runtime_id);
    await runtime.destroy(row.runtime_id);
    await context.write(async (trx) => {
      const at = context.now();
      const moved = await transitionSandbox(
        trx,
        row.uid,
        [S.TERMINATING, S.STARTING, S.RUNNING, S.FAILED],
        S.TERMINATED,
        at,
      );
      if (moved) await failLiveProcesses(trx, moved.row, at);
    });
    ended(row.uid);
  }

  return { removeDeleted, terminate };
}
