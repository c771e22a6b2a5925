// The sweep's check of the running sandboxes it holds in memory: an agent that is gone gets a
// pass, a sandbox past its running or idle limit is moved to TERMINATING (the pass kicked then
// stops it), and activity newer than what is stored is written to the database.
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { sandboxKey } from "./change-hub.js";
import { sandboxStateName, transitionSandbox } from "./store.js";
import type { SweepDeps } from "./sweep.js";

const S = SandboxEngine_State;
/** Activity is written to the database when it is this much newer than what is stored. */
const ACTIVITY_WRITE_MS = 2_000;
const RUNNING = sandboxStateName(S.RUNNING);

/** What the sweep holds in memory of a RUNNING sandbox. */
export interface Tracked {
  runtimeId: string;
  maxIdleMs: number;
  maxRunningMs: number;
  startTime: number | undefined;
  /** The activity the database holds. */
  storedActivity: number;
}

export function createRunningCheck(
  deps: SweepDeps,
  tracked: Map<string, Tracked>,
  /** Kicks a pass over the sandbox unless one is queued or it is failing. */
  kick: (uid: string, kicks: Promise<void>[]) => void,
): (kicks: Promise<void>[]) => Promise<void> {
  const { context, runtime, logger, hub, activity } = deps;

  /** Moves a sandbox past a limit to TERMINATING; the pass kicked then stops it. */
  async function terminate(uid: string, message: string, detail: Record<string, number>): Promise<boolean> {
    const moved = await context.write((trx) =>
      transitionSandbox(trx, uid, [S.RUNNING], S.TERMINATING, context.now(), { desired: "terminated" }),
    );
    tracked.delete(uid);
    if (!moved) return false;
    logger.info(message, { sandbox: moved.row.name, ...detail });
    hub.notify(sandboxKey(uid));
    return true;
  }

  /** Checks the running sandboxes from memory: their agents, their limits, their activity. */
  return async function checkRunning(kicks: Promise<void>[]): Promise<void> {
    const at = Date.now();
    for (const [uid, t] of [...tracked]) {
      if (deps.stopped()) return;
      if (!runtime.isRunning(t.runtimeId)) {
        kick(uid, kicks);
        continue;
      }
      const ran = t.startTime === undefined ? 0 : at - t.startTime;
      if (t.maxRunningMs > 0 && ran >= t.maxRunningMs) {
        if (await terminate(uid, "terminating a sandbox that reached its running limit", { ranMs: ran }))
          kicks.push(deps.kick(uid));
        continue;
      }
      const idle = activity.idleMs({ uid, state: RUNNING, last_activity: new Date(t.storedActivity) }, at);
      if (t.maxIdleMs > 0 && idle >= t.maxIdleMs) {
        if (await terminate(uid, "terminating an idle sandbox", { idleMs: idle })) kicks.push(deps.kick(uid));
        continue;
      }
      const effective = activity.latest(uid, at);
      if (effective !== undefined && effective - t.storedActivity > ACTIVITY_WRITE_MS) {
        await context
          .database()
          .db.updateTable("sandbox_engines")
          .set({ last_activity: new Date(effective) })
          .where("uid", "=", uid)
          .execute();
        t.storedActivity = effective;
      }
    }
  };
}
