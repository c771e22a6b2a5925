// Committing what a reconcile step observed: compare-and-set on the engine's generation, with the
// lease released and a state event enqueued in the same transaction.
import { sql } from "kysely";
import type { Database } from "@aiem/kit/db";
import { isSettled } from "./kinds.js";
import {
  enqueueStateChanged,
  ENGINES,
  loadByUid,
  type EngineRow,
  type Executor,
  type PresentContext,
} from "./store.js";

export type Patch = Partial<EngineRow>;

/**
 * Commits what a step observed, unless what was asked for changed since the claim; true when it
 * was applied. Recomputes `reconciling`, releases the lease and records a state event when state
 * or reconciling changed.
 */
export type Commit = (
  claimed: EngineRow,
  patch: Patch,
  next: Date | null,
  flags?: { deleted?: boolean },
) => Promise<boolean>;

export interface CommitOptions {
  readonly database: Database;
  /** This reconciler's lease owner. */
  readonly owner: string;
  readonly context: () => PresentContext;
  /** Called after a commit that enqueued events (wakes the outbox relay). */
  readonly onEvents?: (() => void) | undefined;
}

export function createCommit(options: CommitOptions): Commit {
  return async (claimed, patch, next, flags = {}) => {
    let events = false;
    const applied = await options.database.db.transaction().execute(async (trx) => {
      const current = await loadByUid(trx, claimed.uid, { forUpdate: true });
      if (!current) return false;
      if (current.lease_owner !== options.owner || current.generation !== claimed.generation) {
        if (current.lease_owner === options.owner) await releaseNow(trx, current.uid);
        return false;
      }
      if (flags.deleted) {
        await trx.deleteFrom(ENGINES).where("uid", "=", current.uid).execute();
        await enqueueStateChanged(trx, current, current.state, options.context(), { deleted: true });
        events = true;
        return true;
      }
      events = await applyPatch(trx, current, patch, next, options.context);
      return true;
    });
    if (events) options.onEvents?.();
    return applied;
  };
}

/** What was asked for changed while the step worked: the engine is due again at once. */
async function releaseNow(trx: Executor, uid: string): Promise<void> {
  await trx
    .updateTable(ENGINES)
    .set({ lease_owner: null, lease_until: null, next_reconcile_at: sql`now()` })
    .where("uid", "=", uid)
    .execute();
}

/** Writes the patch and releases the lease; true when a state event was enqueued. */
async function applyPatch(
  trx: Executor,
  current: EngineRow,
  patch: Patch,
  next: Date | null,
  context: () => PresentContext,
): Promise<boolean> {
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
  if (changed) await enqueueStateChanged(trx, after, current.state, context());
  return changed;
}
