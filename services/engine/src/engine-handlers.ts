// The calls every engine kind's service has, written once over the kind descriptors: create, get
// and list here, the changes of an existing engine in engine-actions.ts and engine-update.ts. Each
// call parses its names, authorizes on the workspace, finds the engine among those the caller may
// see, checks that the engine's state allows the call (FAILED_PRECONDITION naming the state
// otherwise), and records the new intent in one transaction together with the state event. The
// reconciler carries the intent out. Each kind's service is wired, typed by its generated
// requests, in dai-engine-handlers.ts, h2o-engine-handlers.ts and notebook-engine-handlers.ts.
import type { HandlerContext } from "@connectrpc/connect";
import { checkField, listRequestFields, paginate, validateResourceId, workspacePattern } from "@aiem/kit/aip";
import { Action } from "@aiem/kit/authz";
import { requiredField } from "@aiem/kit/errors";
import { principalOf } from "@aiem/kit/server";
import { visibleRows } from "./access.js";
import type { EngineCalls } from "./engine-calls.js";
import { createEngine } from "./engine-create.js";
import type { AnyEngine } from "./kinds.js";
import { ENGINES, present, uidTiebreaker, type EngineRow } from "./store.js";

export { MAX_LOG_BYTES } from "./engine-actions.js";

/** A create, read by the fields every kind's create request has under its own names. */
export interface CreateRequest {
  readonly parent: string;
  /** The new engine's id (`dai_engine_id` and its siblings). */
  readonly id: string;
  /** The new engine (`dai_engine` and its siblings). */
  readonly engine: AnyEngine | undefined;
  readonly validateOnly: boolean;
}

export interface ListRequest {
  readonly parent: string;
  readonly pageSize: number;
  readonly pageToken: string;
  readonly orderBy: string;
  readonly filter: string;
}

export interface EnginePage {
  readonly engines: AnyEngine[];
  readonly nextPageToken: string;
  readonly totalSize: number;
}

export async function createEngineCall(
  calls: EngineCalls,
  req: CreateRequest,
  ctx: HandlerContext,
): Promise<AnyEngine> {
  const { kind } = calls;
  const principal = principalOf(ctx);
  const { workspace } = workspacePattern.parse(req.parent, "parent");
  if (req.id === "") throw requiredField(kind.idField);
  checkField(kind.idField, req.id, validateResourceId);
  calls.policy.check(principal, Action.CREATE, kind.type, workspace);
  if (!req.engine) throw requiredField(kind.resourceField);
  const name = kind.pattern.format({ workspace, [kind.idVar]: req.id });
  return createEngine(calls, principal, { workspace, id: req.id, name }, req.engine, req.validateOnly);
}

export async function getEngine(calls: EngineCalls, req: { readonly name: string }, ctx: HandlerContext) {
  const principal = principalOf(ctx);
  const target = calls.parseName(req.name);
  calls.policy.check(principal, Action.GET, calls.kind.type, target.workspace);
  return calls.present(await calls.mustLoad(calls.db(), principal, target));
}

export async function listEngines(calls: EngineCalls, req: ListRequest, ctx: HandlerContext): Promise<EnginePage> {
  const { context, kind, policy } = calls;
  const principal = principalOf(ctx);
  const { workspace } = workspacePattern.parse(req.parent, "parent");
  policy.check(principal, Action.LIST, kind.type, workspace);
  let query = calls
    .db()
    .selectFrom(ENGINES)
    .selectAll()
    .where("workspace", "=", workspace)
    .where("type", "=", kind.type);
  const visible = visibleRows(policy, principal);
  if (visible) query = query.where(visible);
  const page = await paginate(query, {
    ...listRequestFields(req),
    table: calls.fieldTable,
    tiebreaker: uidTiebreaker,
    tokens: context.tokens(),
    scope: kind.type,
    totalSize: true,
  });
  const presentContext = context.presentContext();
  return {
    engines: page.rows.map((row) => present(row as EngineRow, presentContext)),
    nextPageToken: page.nextPageToken,
    totalSize: page.totalSize ?? 0,
  };
}
