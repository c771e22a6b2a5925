// The one transaction every state change of an engine runs in: checks on the locked row, the new
// values and intent, and the state event.
import type { HandlerContext } from "@connectrpc/connect";
import type { Action } from "@aiem/kit/authz";
import type { Principal } from "@aiem/kit/identity";
import { principalOf } from "@aiem/kit/server";
import { checkManage } from "./access.js";
import type { ServiceContext } from "./context.js";
import { checkTransition, S, type EngineAction, type EngineKind } from "./kinds.js";
import { enqueueStateChanged, ENGINES, type EngineRow, type Executor } from "./store.js";

export interface Change<P = void> {
  readonly action: EngineAction;
  readonly permission: Action;
  readonly validateOnly?: boolean;
  /** Extra checks on the locked row, before anything is written; returns what apply needs. */
  readonly check?: (row: EngineRow, trx: Executor, principal: Principal) => Promise<P> | P;
  /** The new values; `intent` bumps the generation and makes the reconciler look at once. */
  readonly apply: (row: EngineRow, now: Date, plan: P) => Partial<EngineRow>;
  readonly intent?: boolean;
  /** Whether the call counts as activity on the engine (resets its idle time). */
  readonly activity?: boolean;
  /** Who may make the change: the creator and administrators (default), or only administrators. */
  readonly manage?: boolean;
  /** True when the engine is where the call would take it: nothing is written. */
  readonly already?: (row: EngineRow) => boolean;
}

/** What a change needs of the engine calls of its kind. */
export interface ChangeScope {
  readonly context: ServiceContext;
  readonly kind: EngineKind;
  parseName(name: string): { readonly workspace: string; readonly name: string };
  mustLoad(
    exec: Executor,
    principal: Principal,
    target: { readonly name: string },
    forUpdate?: boolean,
  ): Promise<EngineRow>;
}

/** Makes change `c` to the engine called `name`, in one transaction; the engine as it is after. */
export async function changeEngine<P = void>(
  scope: ChangeScope,
  name: string,
  ctx: HandlerContext,
  c: Change<P>,
): Promise<EngineRow> {
  const { context, kind } = scope;
  const principal = principalOf(ctx);
  const target = scope.parseName(name);
  context.policy.check(principal, c.permission, kind.type, target.workspace);
  const run = async (trx: Executor): Promise<EngineRow> => {
    const row = await scope.mustLoad(trx, principal, target, true);
    if (c.manage !== false) checkManage(context.policy, principal, row);
    checkTransition(kind, c.action, row.name, row.state);
    if (c.already?.(row)) return row;
    const plan = (await c.check?.(row, trx, principal)) as P;
    const after = changed(row, c, context.now(), plan);
    if (c.validateOnly) return after;
    const { uid: _uid, ...values } = after;
    await trx.updateTable(ENGINES).set(values).where("uid", "=", row.uid).execute();
    if (after.state !== row.state || after.reconciling !== row.reconciling) {
      await enqueueStateChanged(trx, after, row.state, context.presentContext());
    }
    return after;
  };
  return c.validateOnly ? context.database().db.transaction().execute(run) : context.write(run);
}

function changed<P>(row: EngineRow, c: Change<P>, now: Date, plan: P): EngineRow {
  const after: EngineRow = { ...row, ...c.apply(row, now, plan), update_time: now };
  if (c.activity && after.state === S.RUNNING) after.last_activity_time = now;
  if (c.intent) {
    after.generation = row.generation + 1n;
    after.next_reconcile_at = now;
    after.reconciling = true;
  }
  return after;
}
