// The reconciler: drives every engine's observed state towards its desired state through the
// runtime, and enforces idle and running limits. The database is the only memory it relies on,
// so a crashed or restarted service resumes where it stopped.
//
// Work queue: a row is due when `next_reconcile_at` has passed. A claim is one statement that
// takes due rows with FOR UPDATE SKIP LOCKED and marks them with a lease, so replicas never work
// on the same engine and no transaction stays open while the runtime works (on PGlite an open
// transaction would block every other query of the process). Each step then talks to the runtime
// and commits what it observed in a short transaction, compare-and-set on the engine's
// `generation`: when a call changed what was asked for in the meantime, the observation is dropped
// and the engine is due again at once. API writes and runtime notifications wake the loop; else
// it sleeps until the earliest due time (which is also when an idle or running limit expires).
import { randomUUID } from "node:crypto";
import type { Database } from "@aiem/kit/db";
import type { Logger } from "@aiem/kit/logger";
import { createCommit } from "./reconciler-commit.js";
import { claimDue, makeDueNow, msUntilNextDue, resumeQueue, retryLater, type QueueScope } from "./reconciler-queue.js";
import { later, stepEngine, type StepContext } from "./reconciler-step.js";
import type { EngineRuntime } from "./runtime/runtime.js";
import type { EngineRow, PresentContext } from "./store.js";

export interface ReconcilerOptions {
  readonly database: Database;
  readonly runtime: EngineRuntime;
  readonly logger: Logger;
  readonly coreConfig: Readonly<Record<string, string>>;
  /** Longest sleep when nothing is due (ms). */
  readonly intervalMs: number;
  /** How often a running engine is checked (ms). */
  readonly checkIntervalMs: number;
  /** A start that is not healthy after this long fails (ms). */
  readonly startTimeoutMs: number;
  /** How long a claim is exclusive (ms); a crashed claimant's engines are free again after it. */
  readonly leaseMs?: number;
  /** Engines worked on at the same time. */
  readonly concurrency?: number;
  readonly context: () => PresentContext;
  /** The latest activity not yet written to the database, for idle checks. */
  readonly pendingActivity?: (uid: string) => Date | undefined;
  /** Called after a commit that enqueued events (wakes the outbox relay). */
  readonly onEvents?: () => void;
}

export interface Reconciler {
  start(): Promise<void>;
  /** Stops claiming and waits for the steps under way. */
  stop(): Promise<void>;
  /** Looks for due work now. */
  wake(): void;
  /** Makes one engine due now (its runtime status changed). */
  poke(uid: string): void;
  /** Steps under way now. */
  readonly inFlight: number;
}

/** The loop's state: what it claims with, what it works on, and how it is woken. */
interface Loop {
  readonly scope: QueueScope;
  readonly step: StepContext;
  readonly logger: Logger;
  readonly concurrency: number;
  readonly intervalMs: number;
  readonly pokes: Set<string>;
  readonly inFlight: Set<Promise<void>>;
  stopped: boolean;
  wakeUp: (() => void) | undefined;
}

export function createReconciler(options: ReconcilerOptions): Reconciler {
  const { runtime } = options;
  const owner = `${runtime.placement}#${randomUUID()}`;
  const loop: Loop = {
    scope: { database: options.database, placement: runtime.placement, owner, leaseMs: options.leaseMs ?? 60_000 },
    step: {
      ...options,
      commit: createCommit({ database: options.database, owner, context: options.context, onEvents: options.onEvents }),
      diskCheckedAt: new Map(),
    },
    logger: options.logger,
    concurrency: options.concurrency ?? 32,
    intervalMs: options.intervalMs,
    pokes: new Set(),
    inFlight: new Set(),
    stopped: true,
    wakeUp: undefined,
  };
  let running: Promise<void> | undefined;
  let unwatch: (() => void) | undefined;
  const poke = (uid: string) => {
    loop.pokes.add(uid);
    wake(loop);
  };
  return {
    get inFlight() {
      return loop.inFlight.size;
    },
    async start() {
      await resumeQueue(loop.scope, runtime.shared === true);
      unwatch = runtime.watch(poke);
      loop.stopped = false;
      running = run(loop);
    },
    async stop() {
      loop.stopped = true;
      unwatch?.();
      unwatch = undefined;
      wake(loop);
      await running;
      await Promise.allSettled([...loop.inFlight]);
    },
    wake: () => wake(loop),
    poke,
  };
}

function wake(loop: Loop): void {
  const wakeUp = loop.wakeUp;
  loop.wakeUp = undefined;
  wakeUp?.();
}

async function run(loop: Loop): Promise<void> {
  while (!loop.stopped) {
    try {
      if (await round(loop)) continue;
      await idle(loop);
    } catch (err) {
      if (loop.stopped) break;
      loop.logger.error("reconciler round failed", { error: err instanceof Error ? err.message : String(err) });
      await new Promise((r) => setTimeout(r, Math.min(1_000, loop.intervalMs)));
    }
  }
}

/** Claims what is due and starts its steps; true when it should look again at once. */
async function round(loop: Loop): Promise<boolean> {
  if (loop.pokes.size > 0) {
    const uids = [...loop.pokes];
    loop.pokes.clear();
    await makeDueNow(loop.scope, uids);
  }
  const free = loop.concurrency - loop.inFlight.size;
  const rows = free > 0 ? await claimDue(loop.scope, free) : [];
  for (const row of rows) {
    const p = work(loop, row).finally(() => {
      loop.inFlight.delete(p);
      wake(loop);
    });
    loop.inFlight.add(p);
  }
  return rows.length > 0 && loop.inFlight.size < loop.concurrency;
}

async function work(loop: Loop, row: EngineRow): Promise<void> {
  try {
    await stepEngine(loop.step, row);
  } catch (err) {
    loop.logger.error("reconcile step failed; retrying", {
      engine: row.name,
      error: err instanceof Error ? err.message : String(err),
    });
    // A failed release leaves the lease to run out, after which the engine is claimed again.
    await retryLater(loop.scope, row.uid, later(1_000)).catch(() => {});
  }
}

/** Sleeps until the earliest due time, at most the interval, or until woken. */
async function idle(loop: Loop): Promise<void> {
  const wait =
    loop.inFlight.size >= loop.concurrency
      ? loop.intervalMs
      : Math.min(loop.intervalMs, Math.max(0, await msUntilNextDue(loop.scope)));
  if (wait <= 0 || loop.stopped || loop.pokes.size > 0) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, wait);
    loop.wakeUp = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  loop.wakeUp = undefined;
}
