// One reconcile pass over one sandbox: from the state its row records towards the one it asked
// for. Deletes and terminates stop its agent; a starting sandbox's agent is started (or a start
// its create began is taken over) and the sandbox recorded RUNNING or FAILED; a RUNNING sandbox
// whose agent this process of the service does not hold was left by an earlier one, and its agent
// is adopted, or the sandbox FAILED or started again (see reconcile-take-over.ts).
import type { Kysely } from "kysely";
import type { AnyDatabase } from "@aiem/kit/db";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { sandboxKey } from "./change-hub.js";
import type { LifecycleParts } from "./lifecycle-parts.js";
import { startStep, startStepsEnd } from "./runtime/start-steps.js";
import { createStopSteps } from "./reconcile-stop.js";
import { createTakeOverLeftRunning } from "./reconcile-take-over.js";
import type { Sweep } from "./sweep.js";
import {
  failLiveProcesses,
  loadSandboxByUid,
  recordSandboxRunning,
  sandboxStateOf,
  transitionSandbox,
  type SandboxRow,
} from "./store.js";

const S = SandboxEngine_State;

export interface ReconcileDeps extends LifecycleParts {
  /** Asks for another pass over the sandbox once this one is done. */
  readonly queueAgain: (uid: string) => void;
  /** The sweep, told which sandboxes run here. */
  readonly running: Pick<Sweep, "track" | "untrack">;
  readonly onProcessesEnded?: ((uid: string) => void) | undefined;
  readonly onAdopted?: ((uid: string) => Promise<void> | void) | undefined;
}

export function createReconcilePass(deps: ReconcileDeps): (uid: string) => Promise<void> {
  const { context, runtime, logger, hub, placement, starts, activity } = deps;
  const now = () => context.now();
  const db = (): Kysely<AnyDatabase> => context.database().db;

  /** The sandbox's agent and processes ended: those waiting on it are told. */
  function ended(uid: string): void {
    deps.onProcessesEnded?.(uid);
    hub.notify(sandboxKey(uid));
  }

  /** Whether this replica runs the sandbox, taking it when no replica does yet. */
  async function ours(row: SandboxRow): Promise<boolean> {
    if (row.placement === placement) return true;
    if (row.placement !== null) return false;
    const taken = await db()
      .updateTable("sandbox_engines")
      .set({ placement })
      .where("uid", "=", row.uid)
      .where("placement", "is", null)
      .executeTakeFirst();
    return taken.numUpdatedRows > 0n;
  }

  async function startStarting(row: SandboxRow): Promise<void> {
    const { uid } = row;
    startStep(uid, "pass");
    let started = await starts.start(row);
    startStep(uid, "started");
    // Its agent was started by a service that died before recording it running, and has ended
    // since: no process ran in it yet, so nothing is lost by starting it afresh.
    if (!started.ok && started.agentGone) started = await starts.start(row);
    if (!started.ok && started.interrupted) {
      starts.settled(uid);
      deps.queueAgain(uid);
      return;
    }
    const moved = await context
      .write(async (trx) =>
        started.ok
          ? recordSandboxRunning(trx, row, now())
          : transitionSandbox(trx, uid, [S.STARTING], S.FAILED, now(), { failureReason: started.reason }),
      )
      .finally(() => starts.settled(uid));
    if (started.ok && moved && "uid" in moved) deps.running.track(moved);
    if (!started.ok) logger.warn("a sandbox could not start", { sandbox: row.name, reason: started.reason });
    if (moved && started.ok) activity.touch(uid);
    if (!moved && started.ok) {
      // Terminated or deleted while it started: the next pass stops it.
      const again = await loadSandboxByUid(db(), uid);
      if (again && again.desired !== "running") deps.queueAgain(uid);
    }
    startStepsEnd(uid, "running-written");
    hub.notify(sandboxKey(uid));
  }

  const { removeDeleted, terminate } = createStopSteps(deps, ended);
  const takeOverLeftRunning = createTakeOverLeftRunning(deps, ended);

  return async function reconcile(uid: string): Promise<void> {
    const row = await loadSandboxByUid(db(), uid);
    const state = row ? sandboxStateOf(row.state) : undefined;
    // What the sweep checks from memory: the sandboxes this replica holds RUNNING.
    if (!row || state !== S.RUNNING || row.desired !== "running" || row.placement !== placement)
      deps.running.untrack(uid);
    if (!row) {
      activity.forget(uid);
      return;
    }
    if (!(await ours(row))) return;
    if (row.desired === "deleted") return removeDeleted(row);
    if (row.desired === "terminated") {
      if (state !== S.TERMINATED) await terminate(row);
      return;
    }
    if (state === S.STARTING) return startStarting(row);
    if (state === S.RUNNING && !runtime.isRunning(row.runtime_id) && !deps.failing.has(uid))
      return takeOverLeftRunning(row);
    if (state === S.RUNNING) {
      starts.own(row.runtime_id, row.uid);
      deps.running.track(row);
    }
  };
}

/**
 * The runtime's report of an agent that ended without being stopped: its sandbox, if it had one,
 * is FAILED with its live processes, and is not started again meanwhile.
 */
export function createAgentEnded(
  deps: Pick<ReconcileDeps, "context" | "logger" | "hub" | "starts" | "failing" | "onProcessesEnded">,
): (runtimeId: string, reason?: string) => void {
  const { context, logger, hub, failing } = deps;
  return (runtimeId, reason) => {
    const uid = deps.starts.disown(runtimeId);
    if (uid === undefined) return;
    failing.add(uid);
    void context
      .write(async (trx) => {
        const at = context.now();
        const moved = await transitionSandbox(trx, uid, [S.RUNNING], S.FAILED, at, {
          failureReason: reason ?? "the sandbox's agent ended unexpectedly",
        });
        if (moved) await failLiveProcesses(trx, moved.row, at);
        return moved;
      })
      .then((moved) => {
        if (moved) logger.warn("a sandbox's agent ended unexpectedly", { sandbox: moved.row.name });
        deps.onProcessesEnded?.(uid);
        hub.notify(sandboxKey(uid));
      })
      .catch((err: unknown) => logger.error("could not record a sandbox that failed", { uid, error: String(err) }))
      .finally(() => failing.delete(uid));
  };
}
