// The reconciler's sweep: every `intervalMs` it catches what a kick may have missed, terminates
// sandboxes past their idle or running limit, and writes their activity to the database now and
// then. A tick must stay cheap with a thousand idle sandboxes, since it runs on the event loop
// that answers calls (and, embedded, on the database's one session). So it reads only the
// sandboxes that are not settled (starting, terminating, deleting: few), checks the running ones
// from what it holds in memory (their limits, start and stored activity), and re-reads those
// from the database a page a tick, all of them once every `count / SYNC_PAGE` ticks, to catch
// anything that changed behind its back. Passes that see a sandbox RUNNING, or no longer RUNNING,
// tell it at once (track, untrack), so that limits hold from the start.
import type { Kysely } from "kysely";
import type { AnyDatabase } from "@aiem/kit/db";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { LifecycleParts } from "./lifecycle-parts.js";
import { type SandboxRow, sandboxStateName } from "./store.js";
import { createRunningCheck, type Tracked } from "./sweep-running-check.js";

const S = SandboxEngine_State;
/** Running sandboxes re-read from the database in one tick. */
const SYNC_PAGE = 100;
const RUNNING = sandboxStateName(S.RUNNING);
const UNSETTLED = [S.STARTING, S.TERMINATING, S.DELETING].map(sandboxStateName);

export interface SweepDeps extends Omit<LifecycleParts, "starts" | "failing"> {
  readonly failing: ReadonlySet<string>;
  /** Whether a pass over the sandbox is queued or under way. */
  readonly queued: (uid: string) => boolean;
  readonly kick: (uid: string) => Promise<void>;
  readonly stopped: () => boolean;
}

/** What a tick needs of a RUNNING sandbox. */
export type RunningRow = Pick<
  SandboxRow,
  "uid" | "desired" | "runtime_id" | "max_idle_ms" | "max_running_ms" | "start_time" | "last_activity"
>;

export interface Sweep {
  /** Looks at every live sandbox of this replica, reading all of them; returns the passes it started. */
  sweepAll(): Promise<Promise<void>[]>;
  /** Ticks every `intervalMs` from now on, until stop(). */
  schedule(intervalMs: number): void;
  /** Ends the schedule; resolves when a tick under way is done. */
  stop(): Promise<void>;
  /** A pass recorded or found the sandbox RUNNING here, as `row` says. */
  track(row: RunningRow): void;
  /** A pass found the sandbox no longer RUNNING here. */
  untrack(uid: string): void;
}

export function createSweep(deps: SweepDeps): Sweep {
  const { context, logger, placement } = deps;
  const db = (): Kysely<AnyDatabase> => context.database().db;
  const tracked = new Map<string, Tracked>();
  /** The last uid of the page of running sandboxes read last; undefined: start from the first. */
  let cursor: string | undefined;

  function track(row: RunningRow): void {
    tracked.set(row.uid, {
      runtimeId: row.runtime_id,
      maxIdleMs: Number(row.max_idle_ms),
      maxRunningMs: Number(row.max_running_ms),
      startTime: row.start_time?.getTime(),
      storedActivity: row.last_activity.getTime(),
    });
  }

  function kick(uid: string, kicks: Promise<void>[]): void {
    if (!deps.queued(uid) && !deps.failing.has(uid)) kicks.push(deps.kick(uid));
  }

  // biome-ignore lint/suspicious/noExplicitAny: a query over any sandbox table's rows, each with a placement
  const ours = (q: any) => q.where((eb: any) => eb.or([eb("placement", "=", placement), eb("placement", "is", null)]));

  /** Kicks the sandboxes on their way somewhere: starting, terminating, deleting. */
  async function kickUnsettled(kicks: Promise<void>[]): Promise<void> {
    const rows = (await ours(
      db().selectFrom("sandbox_engines").select("uid").where("state", "in", UNSETTLED),
    ).execute()) as { uid: string }[];
    for (const row of rows) kick(row.uid, kicks);
  }

  /** Re-reads the next page of running sandboxes; returns whether it was the last. */
  async function syncPage(kicks: Promise<void>[]): Promise<boolean> {
    let q = db()
      .selectFrom("sandbox_engines")
      .select(["uid", "desired", "runtime_id", "max_idle_ms", "max_running_ms", "start_time", "last_activity"])
      .where("state", "=", RUNNING);
    if (cursor !== undefined) q = q.where("uid", ">", cursor);
    const rows = (await ours(q).orderBy("uid").limit(SYNC_PAGE).execute()) as RunningRow[];
    const last = rows.length < SYNC_PAGE;
    const from = cursor;
    const to = last ? undefined : rows[rows.length - 1]!.uid;
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.uid);
      if (row.desired !== "running") {
        tracked.delete(row.uid);
        kick(row.uid, kicks);
      } else track(row);
    }
    // Tracked sandboxes in the page's range that it does not hold are no longer RUNNING here.
    for (const uid of tracked.keys())
      if ((from === undefined || uid > from) && (to === undefined || uid <= to) && !seen.has(uid)) tracked.delete(uid);
    cursor = to;
    return last;
  }

  const checkRunning = createRunningCheck(deps, tracked, kick);

  async function tick(): Promise<Promise<void>[]> {
    const kicks: Promise<void>[] = [];
    await kickUnsettled(kicks);
    await syncPage(kicks);
    await checkRunning(kicks);
    return kicks;
  }

  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | undefined;
  function schedule(intervalMs: number): void {
    if (deps.stopped()) return;
    timer = setTimeout(() => {
      ticking = tick()
        .then(() => undefined)
        .catch((err: unknown) =>
          logger.error("sandbox sweep failed", { error: err instanceof Error ? err.message : String(err) }),
        )
        .finally(() => {
          ticking = undefined;
          schedule(intervalMs);
        });
    }, intervalMs);
    timer.unref();
  }

  return {
    async sweepAll() {
      const kicks: Promise<void>[] = [];
      await kickUnsettled(kicks);
      cursor = undefined;
      while (!deps.stopped() && !(await syncPage(kicks))) {}
      await checkRunning(kicks);
      return kicks;
    },
    schedule,
    async stop() {
      if (timer) clearTimeout(timer);
      await ticking;
    },
    track,
    untrack: (uid) => tracked.delete(uid),
  };
}
