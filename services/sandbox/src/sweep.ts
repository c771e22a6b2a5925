// The reconciler's sweep: every so often it looks at each live sandbox of this replica, to catch
// what a kick may have missed, to terminate sandboxes past their idle or running limit, and to
// write their activity to the database now and then.
import type { Kysely } from "kysely";
import type { Logger } from "@aiem/kit/logger";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { type ChangeHub, sandboxKey } from "./change-hub.js";
import type { LocalSandboxRuntime } from "./runtime/index.js";
import type { SandboxActivity } from "./sandbox-activity.js";
import type { ServiceContext } from "./service-context.js";
import { type SandboxRow, sandboxStateName, sandboxStateOf, transitionSandbox } from "./store.js";

const S = SandboxEngine_State;
/** Activity is written to the database when it is this much newer than what is stored. */
const ACTIVITY_WRITE_MS = 2_000;

export interface SweepDeps {
  readonly context: ServiceContext;
  readonly runtime: LocalSandboxRuntime;
  readonly logger: Logger;
  readonly hub: ChangeHub;
  readonly placement: string;
  readonly activity: SandboxActivity;
  readonly failing: ReadonlySet<string>;
  /** Whether a pass over the sandbox is queued or under way. */
  readonly queued: (uid: string) => boolean;
  readonly kick: (uid: string) => Promise<void>;
  readonly stopped: () => boolean;
}

type SweptRow = Pick<
  SandboxRow,
  | "uid"
  | "state"
  | "desired"
  | "runtime_id"
  | "max_idle_ms"
  | "max_running_ms"
  | "start_time"
  | "last_activity"
  | "name"
>;

export interface Sweep {
  /** Looks at every live sandbox of this replica; returns the passes it started. */
  sweep(): Promise<Promise<void>[]>;
  /** Sweeps every `intervalMs` from now on, until stop(). */
  schedule(intervalMs: number): void;
  /** Ends the schedule; resolves when a sweep under way is done. */
  stop(): Promise<void>;
}

export function createSweep(deps: SweepDeps): Sweep {
  const { context, runtime, logger, hub, placement, activity } = deps;
  const db = (): Kysely<any> => context.database().db;

  /** Moves a sandbox past a limit to TERMINATING; the pass kicked then stops it. */
  async function terminate(row: SweptRow, message: string, detail: Record<string, number>): Promise<boolean> {
    const moved = await context.write((trx) =>
      transitionSandbox(trx, row.uid, [S.RUNNING], S.TERMINATING, context.now(), { desired: "terminated" }),
    );
    if (!moved) return false;
    logger.info(message, { sandbox: row.name, ...detail });
    hub.notify(sandboxKey(row.uid));
    return true;
  }

  async function sweep(): Promise<Promise<void>[]> {
    const kicks: Promise<void>[] = [];
    const rows = (await db()
      .selectFrom("sandbox_engines")
      .select([
        "uid",
        "state",
        "desired",
        "runtime_id",
        "max_idle_ms",
        "max_running_ms",
        "start_time",
        "last_activity",
        "name",
      ])
      .where("state", "in", [S.STARTING, S.RUNNING, S.TERMINATING, S.DELETING].map(sandboxStateName))
      .where((eb) => eb.or([eb("placement", "=", placement), eb("placement", "is", null)]))
      .execute()) as SweptRow[];
    const at = Date.now();
    for (const row of rows) {
      if (deps.stopped()) return kicks;
      const state = sandboxStateOf(row.state);
      if (state !== S.RUNNING || row.desired !== "running" || !runtime.isRunning(row.runtime_id)) {
        if (!deps.queued(row.uid) && !deps.failing.has(row.uid)) kicks.push(deps.kick(row.uid));
        continue;
      }
      const maxIdle = Number(row.max_idle_ms);
      const idle = activity.idleMs(row, at);
      const maxRunning = Number(row.max_running_ms);
      const ran = row.start_time ? at - row.start_time.getTime() : 0;
      if (maxRunning > 0 && ran >= maxRunning) {
        if (await terminate(row, "terminating a sandbox that reached its running limit", { ranMs: ran }))
          kicks.push(deps.kick(row.uid));
        continue;
      }
      if (maxIdle > 0 && idle >= maxIdle) {
        if (await terminate(row, "terminating an idle sandbox", { idleMs: idle })) kicks.push(deps.kick(row.uid));
        continue;
      }
      const effective = activity.latest(row.uid, at);
      if (effective !== undefined && effective - row.last_activity.getTime() > ACTIVITY_WRITE_MS) {
        await db()
          .updateTable("sandbox_engines")
          .set({ last_activity: new Date(effective) })
          .where("uid", "=", row.uid)
          .execute();
      }
    }
    return kicks;
  }

  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;
  function schedule(intervalMs: number): void {
    if (deps.stopped()) return;
    timer = setTimeout(() => {
      sweeping = sweep()
        .then(() => undefined)
        .catch((err: unknown) =>
          logger.error("sandbox sweep failed", { error: err instanceof Error ? err.message : String(err) }),
        )
        .finally(() => {
          sweeping = undefined;
          schedule(intervalMs);
        });
    }, intervalMs);
    timer.unref();
  }

  return {
    sweep,
    schedule,
    async stop() {
      if (timer) clearTimeout(timer);
      await sweeping;
    },
  };
}
