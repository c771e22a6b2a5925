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
import { sql } from "kysely";
import type { Database } from "@aiem/kit/db";
import type { Logger } from "@aiem/kit/logger";
import { isSettled, KIND_BY_TYPE, S, type Desired } from "./kinds.js";
import { runSpecOf } from "./run-spec.js";
import type { EngineExit, EngineRuntime } from "./runtime/runtime.js";
import { enqueueStateChanged, ENGINES, loadByUid, type EngineRow, type PresentContext } from "./store.js";

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

/** Disk use is measured every this many checks of a running engine. */
const DISK_CHECK_EVERY = 6;

/** Why a pod waits when its volume cannot be had (Kubernetes' event reasons). */
const VOLUME_REASONS = new Set(["FailedMount", "FailedAttachVolume"]);

const STORAGE_ERRORS = new Set(["EACCES", "EPERM", "ENOSPC", "EROFS", "EDQUOT", "EIO", "ENOTDIR"]);

export function createReconciler(options: ReconcilerOptions): Reconciler {
  const { database, runtime, logger } = options;
  const db = database.db;
  const owner = `${runtime.placement}#${randomUUID()}`;
  const leaseMs = options.leaseMs ?? 60_000;
  const concurrency = options.concurrency ?? 32;
  const pokes = new Set<string>();
  const diskCheckedAt = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  let stopped = true;
  let loop: Promise<void> | undefined;
  let wakeUp: (() => void) | undefined;
  let unwatch: (() => void) | undefined;

  const wake = () => {
    const w = wakeUp;
    wakeUp = undefined;
    w?.();
  };

  async function applyPokes(): Promise<void> {
    if (pokes.size === 0) return;
    const uids = [...pokes];
    pokes.clear();
    await db.updateTable(ENGINES).set({ next_reconcile_at: sql`now()` }).where("uid", "in", uids).execute();
  }

  async function claim(limit: number): Promise<EngineRow[]> {
    const result = await sql<EngineRow>`
      update engines
         set lease_owner = ${owner},
             lease_until = now() + make_interval(secs => ${leaseMs / 1000}),
             placement = coalesce(placement, ${runtime.placement})
       where uid in (
         select uid from engines
          where next_reconcile_at <= now()
            and (placement is null or placement = ${runtime.placement})
            and (lease_until is null or lease_until < now())
          order by next_reconcile_at
          limit ${limit}
          for update skip locked)
      returning *`.execute(db);
    return result.rows;
  }

  async function msUntilNextDue(): Promise<number> {
    const r = await sql<{ ms: number | string | null }>`
      select extract(epoch from (min(next_reconcile_at) - now())) * 1000 as ms
        from engines
       where next_reconcile_at is not null
         and (placement is null or placement = ${runtime.placement})
         and (lease_until is null or lease_until < now())`.execute(db);
    const ms = r.rows[0]?.ms;
    return ms === null || ms === undefined ? Infinity : Number(ms);
  }

  type Patch = Partial<EngineRow>;

  /**
   * Commits what a step observed, unless what was asked for changed since the claim. Recomputes
   * `reconciling`, releases the lease and records a state event when state or reconciling changed.
   */
  async function commit(
    claimed: EngineRow,
    patch: Patch,
    next: Date | null,
    flags: { deleted?: boolean } = {},
  ): Promise<boolean> {
    let events = false;
    const applied = await db.transaction().execute(async (trx) => {
      const current = await loadByUid(trx, claimed.uid, { forUpdate: true });
      if (!current) return false;
      if (current.lease_owner !== owner || current.generation !== claimed.generation) {
        if (current.lease_owner === owner) {
          await trx
            .updateTable(ENGINES)
            .set({ lease_owner: null, lease_until: null, next_reconcile_at: sql`now()` })
            .where("uid", "=", current.uid)
            .execute();
        }
        return false;
      }
      if (flags.deleted) {
        await trx.deleteFrom(ENGINES).where("uid", "=", current.uid).execute();
        await enqueueStateChanged(trx, current, current.state, options.context(), { deleted: true });
        events = true;
        return true;
      }
      const after: EngineRow = { ...current, ...patch };
      after.reconciling = !isSettled(after.state, after.desired);
      const changed = after.state !== current.state || after.reconciling !== current.reconciling;
      const now = new Date();
      if (changed) after.update_time = now;
      await trx
        .updateTable(ENGINES)
        .set({
          ...patch,
          reconciling: after.reconciling,
          ...(changed ? { update_time: now } : {}),
          lease_owner: null,
          lease_until: null,
          next_reconcile_at: next,
        })
        .where("uid", "=", current.uid)
        .execute();
      if (changed) {
        await enqueueStateChanged(trx, after, current.state, options.context());
        events = true;
      }
      return true;
    });
    if (events) options.onEvents?.();
    return applied;
  }

  const later = (ms: number) => new Date(Date.now() + ms);

  function failurePatch(row: EngineRow, exit: EngineExit | undefined, fallback: string): Patch {
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

  /**
   * Disk sizes of a running engine: measured when it starts running and after its storage grew,
   * then every few checks (a directory walk is not free, and disk use changes slowly).
   */
  async function refreshDisk(row: EngineRow, patch: Patch): Promise<void> {
    if (!KIND_BY_TYPE[row.type].hasStorage) return;
    const last = diskCheckedAt.get(row.uid) ?? 0;
    const stale = row.total_disk_bytes === null || row.total_disk_bytes !== row.storage_bytes;
    if (!stale && Date.now() - last < DISK_CHECK_EVERY * options.checkIntervalMs) return;
    diskCheckedAt.set(row.uid, Date.now());
    const usage = await runtime.diskUsage(row.uid, row.storage_bytes);
    if (!usage) return;
    if (usage.totalBytes !== row.total_disk_bytes) patch.total_disk_bytes = usage.totalBytes;
    if (usage.freeBytes !== row.free_disk_bytes) patch.free_disk_bytes = usage.freeBytes;
  }

  /** When a running engine's idle or running limit expires (ms since epoch), or Infinity. */
  function limitDue(row: EngineRow): { idle: number; running: number } {
    const pending = options.pendingActivity?.(row.uid);
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

  async function stepRunning(row: EngineRow): Promise<void> {
    const kind = KIND_BY_TYPE[row.type];
    const patch: Patch = {};
    if (row.state === S.FAILED || row.state === S.TERMINATED) return void (await commit(row, patch, null));

    if (row.state === S.STARTING || row.state === S.CONNECTING) {
      if (row.launched_at === null) {
        const status = await runtime.inspect(row.uid);
        if (row.type === "notebookEngines" && row.resume_time !== null && !status.dataPresent) {
          await commit(
            row,
            {
              state: S.TERMINATED,
              desired: "TERMINATED",
              failure_message: "the engine's storage is gone, so it cannot be resumed",
            },
            null,
          );
          return;
        }
        try {
          await runtime.start(runSpecOf(row, options.coreConfig));
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          const patchFail = failurePatch(
            row,
            { cause: "unknown", message: `the engine could not be started: ${(err as Error).message}` },
            "",
          );
          if (row.type === "notebookEngines" && code && STORAGE_ERRORS.has(code))
            patchFail.failure_reason = "FAILURE_REASON_PVC_ACCESS_FAILURE";
          logger.warn("engine start failed", { engine: row.name, error: (err as Error).message });
          await commit(row, patchFail, null);
          return;
        }
        const state = kind.type === "notebookEngines" ? S.STARTING : S.CONNECTING;
        await commit(row, { state, launched_at: new Date() }, later(Math.min(2_000, options.startTimeoutMs)));
        return;
      }
      const status = await runtime.inspect(row.uid);
      switch (status.phase) {
        case "ready": {
          const now = new Date();
          const running: Patch = {
            state: S.RUNNING,
            resume_time: now,
            last_activity_time: now,
            failure_message: "",
            failure_reason: "",
          };
          diskCheckedAt.delete(row.uid);
          await refreshDisk({ ...row, total_disk_bytes: null }, running);
          await commit(
            row,
            running,
            later(
              Math.min(
                options.checkIntervalMs,
                Number(row.max_idle_ms) || Infinity,
                Number(row.max_running_ms) || Infinity,
              ),
            ),
          );
          return;
        }
        case "starting": {
          const since = (row.start_time ?? row.launched_at).getTime();
          if (Date.now() - since > options.startTimeoutMs) {
            await runtime.stop(row.uid);
            const seconds = Math.round(options.startTimeoutMs / 1000);
            // What it waited for, when the runtime knows (no node has its GPU, an image that
            // cannot be pulled), is the reason it failed.
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
            await commit(row, patch, null);
            return;
          }
          await commit(row, {}, later(Math.min(2_000, Math.max(50, since + options.startTimeoutMs - Date.now()))));
          return;
        }
        case "exited":
          await commit(row, failurePatch(row, status.exit, "the engine process ended"), null);
          return;
        case "stopped":
        case "absent":
          await commit(
            row,
            failurePatch(
              row,
              { cause: "unknown", message: "the engine process disappeared while it was starting" },
              "",
            ),
            null,
          );
          return;
      }
    }

    if (row.state === S.RUNNING) {
      const status = await runtime.inspect(row.uid);
      if (status.phase === "stopped") {
        // Stopped by someone else with its data kept (a pod deleted behind our back, a node
        // drained): it should run, so it is started again rather than failed.
        logger.info("a running engine was stopped from outside; starting it again", { engine: row.name });
        await commit(row, { state: S.STARTING, launched_at: null }, new Date());
        return;
      }
      if (status.phase === "exited" || status.phase === "absent") {
        await commit(row, failurePatch(row, status.exit, "the engine process disappeared"), null);
        return;
      }
      const now = Date.now();
      const due = limitDue(row);
      if (now >= due.idle || now >= due.running) {
        const which = now >= due.idle ? "maximum idle duration" : "maximum running duration";
        const desired: Desired = kind.limitAction === "pause" ? "PAUSED" : "TERMINATED";
        logger.info(`engine exceeded its ${which}`, { engine: row.name, action: kind.limitAction });
        await commit(
          row,
          { desired, state: kind.limitAction === "pause" ? S.PAUSING : S.TERMINATING, generation: row.generation + 1n },
          new Date(),
        );
        return;
      }
      await refreshDisk(row, patch);
      await commit(row, patch, new Date(Math.min(now + options.checkIntervalMs, due.idle, due.running)));
      return;
    }
    // PAUSING or TERMINATING while asked to run cannot be produced by the API; settle as stopped.
    await commit(row, {}, null);
  }

  async function stepStopped(row: EngineRow): Promise<void> {
    const target = row.desired === "PAUSED" ? S.PAUSED : S.TERMINATED;
    if (row.state === target || row.state === S.FAILED || row.state === S.TERMINATED) {
      await commit(row, {}, null);
      return;
    }
    await runtime.stop(row.uid);
    await commit(row, { state: target, launched_at: null, total_disk_bytes: null, free_disk_bytes: null }, null);
  }

  async function step(row: EngineRow): Promise<void> {
    try {
      if (row.storage_resizing && row.desired !== "DELETED") {
        await runtime.resizeStorage(row.uid, row.storage_bytes);
        await commit(row, { storage_resizing: false }, new Date());
        return;
      }
      switch (row.desired) {
        case "DELETED":
          await runtime.remove(row.uid);
          diskCheckedAt.delete(row.uid);
          await commit(row, {}, null, { deleted: true });
          return;
        case "PAUSED":
        case "TERMINATED":
          await stepStopped(row);
          return;
        case "RUNNING":
          await stepRunning(row);
          return;
      }
    } catch (err) {
      logger.error("reconcile step failed; retrying", {
        engine: row.name,
        error: err instanceof Error ? err.message : String(err),
      });
      // Back off, keeping the lease claim released so another attempt (or replica) can try.
      await db
        .updateTable(ENGINES)
        .set({ lease_owner: null, lease_until: null, next_reconcile_at: later(1_000) })
        .where("uid", "=", row.uid)
        .where("lease_owner", "=", owner)
        .execute()
        .catch(() => {});
    }
  }

  async function run(): Promise<void> {
    while (!stopped) {
      try {
        await applyPokes();
        const free = concurrency - inFlight.size;
        const rows = free > 0 ? await claim(free) : [];
        for (const row of rows) {
          const p = step(row).finally(() => {
            inFlight.delete(p);
            wake();
          });
          inFlight.add(p);
        }
        if (rows.length > 0 && inFlight.size < concurrency) continue;
        const wait =
          inFlight.size >= concurrency
            ? options.intervalMs
            : Math.min(options.intervalMs, Math.max(0, await msUntilNextDue()));
        if (wait > 0 && !stopped && pokes.size === 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, wait);
            wakeUp = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wakeUp = undefined;
        }
      } catch (err) {
        if (stopped) break;
        logger.error("reconciler round failed", { error: err instanceof Error ? err.message : String(err) });
        await new Promise((r) => setTimeout(r, Math.min(1_000, options.intervalMs)));
      }
    }
  }

  return {
    get inFlight() {
      return inFlight.size;
    },
    async start() {
      // Leases of an earlier life of this runtime instance are void: nothing works on them now.
      // Under a shared placement they may be another live replica's; they run out by themselves.
      if (!runtime.shared) {
        await db
          .updateTable(ENGINES)
          .set({ lease_owner: null, lease_until: null })
          .where("placement", "=", runtime.placement)
          .where("lease_owner", "is not", null)
          .execute();
      }
      // Look at everything that is not settled, and every engine that should run (re-adoption).
      await sql`
        update engines set next_reconcile_at = now()
         where (placement is null or placement = ${runtime.placement})
           and (reconciling or storage_resizing or state = ${S.RUNNING})`.execute(db);
      unwatch = runtime.watch((uid) => {
        pokes.add(uid);
        wake();
      });
      stopped = false;
      loop = run();
    },
    async stop() {
      stopped = true;
      unwatch?.();
      unwatch = undefined;
      wake();
      await loop;
      await Promise.allSettled([...inFlight]);
    },
    wake,
    poke(uid) {
      pokes.add(uid);
      wake();
    },
  };
}
