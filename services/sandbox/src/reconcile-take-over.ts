// The take-over of a RUNNING sandbox that this process of the service does not hold: an earlier
// one left it. Its agent is adopted when it runs on (confined sandboxes outlive the service), with
// its processes and their output; one whose agent ended meanwhile is FAILED, not started again
// with its processes lost. Only an agent that was never meant to outlive the service (unconfined,
// or started by a version without adoption) is started again on the same files.
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { Started } from "./agent-starts.js";
import { sandboxKey } from "./change-hub.js";
import type { ReconcileDeps } from "./reconcile-pass.js";
import { failLiveProcesses, loadSandboxByUid, sandboxStateName, transitionSandbox, type SandboxRow } from "./store.js";

const S = SandboxEngine_State;

export function createTakeOverLeftRunning(
  deps: ReconcileDeps,
  /** Tells those waiting on the sandbox that its agent and processes ended. */
  ended: (uid: string) => void,
): (row: SandboxRow) => Promise<void> {
  const { context, runtime, logger, hub, starts, activity } = deps;

  async function adopted(row: SandboxRow): Promise<void> {
    activity.touch(row.uid);
    logger.info("adopted a sandbox's agent left running by an earlier process of the service", {
      sandbox: row.name,
    });
    try {
      await deps.onAdopted?.(row.uid);
    } catch (err) {
      logger.error("could not follow an adopted sandbox's processes", { sandbox: row.name, error: String(err) });
    }
    hub.notify(sandboxKey(row.uid));
  }

  function logRestart(row: SandboxRow, started: Started, reason: string | undefined): void {
    if (started.ok) {
      activity.touch(row.uid);
      logger.info("restarted a sandbox whose agent was gone", { sandbox: row.name });
      return;
    }
    logger.warn(
      started.agentGone
        ? "a sandbox's agent ended while the service was not running"
        : "a sandbox could not be restarted",
      { sandbox: row.name, reason },
    );
  }

  return async function takeOverLeftRunning(row: SandboxRow): Promise<void> {
    const started = await starts.start(row);
    if (!started.ok && started.interrupted) {
      deps.queueAgain(row.uid);
      return;
    }
    if (started.ok && started.adopted) {
      deps.running.track(row);
      return adopted(row);
    }
    const reason =
      !started.ok && started.agentGone && !started.unverifiable
        ? "the sandbox's agent ended while the service was not running; its processes ended with it"
        : !started.ok
          ? started.reason
          : undefined;
    const kept = await context.write(async (trx) => {
      const at = context.now();
      const current = await loadSandboxByUid(trx, row.uid, true);
      if (!current || current.state !== sandboxStateName(S.RUNNING) || current.desired !== "running") return false;
      await failLiveProcesses(trx, current, at);
      if (reason !== undefined)
        await transitionSandbox(trx, row.uid, [S.RUNNING], S.FAILED, at, { failureReason: reason });
      else await trx.updateTable("sandbox_engines").set({ last_activity: at }).where("uid", "=", row.uid).execute();
      return started.ok;
    });
    if (started.ok && !kept) {
      // It changed meanwhile (failed, terminated, deleted): the agent just started is not wanted.
      starts.disown(row.runtime_id);
      await runtime.stop(row.runtime_id);
      deps.queueAgain(row.uid);
      return;
    }
    if (started.ok) deps.running.track(row);
    else deps.running.untrack(row.uid);
    logRestart(row, started, reason);
    ended(row.uid);
  };
}
