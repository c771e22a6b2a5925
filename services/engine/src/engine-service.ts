// The handlers of the DAI, H2O and notebook engine services, written once over the kind
// descriptors. Each call parses its names, authorizes on the workspace, finds the engine among
// those the caller may see, checks that the engine's state allows the call (FAILED_PRECONDITION
// naming the state otherwise), and records the new intent in one transaction together with the
// state event. The reconciler carries the intent out. The parts: engine-calls.ts (what every call
// shares), engine-create.ts, engine-actions.ts and engine-update.ts; this file wires them.
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { checkField, paginate, validateResourceId, workspacePattern } from "@aiem/kit/aip";
import { Action } from "@aiem/kit/authz";
import { requiredField } from "@aiem/kit/errors";
import { principalOf } from "@aiem/kit/server";
import { H2OEngineSizeLimitsSchema, H2OEngineSizeSchema } from "@aiem/proto/enginemanager/v1/h2o_engine_size_pb.js";
import { visibleRows } from "./access.js";
import type { ServiceContext } from "./context.js";
import { compressedDatasetSize, rawDatasetSize } from "./h2o-size.js";
import type { AnyEngine, EngineKind, EngineServices, EngineType } from "./kinds.js";
import { ENGINES, present, uidTiebreaker, type EngineRow } from "./store.js";
import { createEngineActions } from "./engine-actions.js";
import { createEngineCalls, type Req } from "./engine-calls.js";
import { createEngineCreation } from "./engine-create.js";
import { createEngineUpdate } from "./engine-update.js";

export { MAX_LOG_BYTES } from "./engine-actions.js";

/** The handlers of each kind, typed by the kind's service. */
export type EngineHandlers = { readonly [T in EngineType]: ServiceImpl<EngineServices[T]> };

type Handler = (req: Req, hctx: HandlerContext) => Promise<unknown>;

export function createEngineHandlers<T extends EngineType>(
  ctx: ServiceContext,
  kind: EngineKind<T>,
): EngineHandlers[T] {
  const calls = createEngineCalls(ctx, kind);
  const { policy, fieldTable, db, parseName, mustLoad } = calls;
  const { createEngine } = createEngineCreation(calls);
  const { delete_, pause, resume, terminate, resizeStorage, upgradeVersion, migrateCreator, downloadLogs, access } =
    createEngineActions(calls);
  const { update } = createEngineUpdate(calls, createEngine);

  async function create_(req: Req, hctx: HandlerContext) {
    const principal = principalOf(hctx);
    const { workspace } = workspacePattern.parse(req.parent, "parent");
    const id: string = req[kind.idLocal] ?? "";
    if (id === "") throw requiredField(kind.idField);
    checkField(kind.idField, id, validateResourceId);
    policy.check(principal, Action.CREATE, kind.type, workspace);
    const input = req[kind.resourceLocal] as AnyEngine | undefined;
    if (!input) throw requiredField(kind.resourceField);
    const name = kind.pattern.format({ workspace, [kind.idVar]: id });
    return {
      [kind.resourceLocal]: await createEngine(principal, { workspace, id, name }, input, req.validateOnly === true),
    };
  }

  // ---- get and list ---------------------------------------------------------------------------

  async function get(req: Req, hctx: HandlerContext) {
    const principal = principalOf(hctx);
    const t = parseName(req.name);
    policy.check(principal, Action.GET, kind.type, t.workspace);
    const row = await mustLoad(db(), principal, t);
    return { [kind.resourceLocal]: present(row, ctx.presentContext()) };
  }

  async function list(req: Req, hctx: HandlerContext) {
    const principal = principalOf(hctx);
    const { workspace } = workspacePattern.parse(req.parent, "parent");
    policy.check(principal, Action.LIST, kind.type, workspace);
    let query = db().selectFrom(ENGINES).selectAll().where("workspace", "=", workspace).where("type", "=", kind.type);
    const visible = visibleRows(policy, principal);
    if (visible) query = query.where(visible);
    const page = await paginate(query, {
      parent: req.parent,
      pageSize: req.pageSize,
      pageToken: req.pageToken,
      filter: req.filter,
      orderBy: req.orderBy,
      table: fieldTable,
      tiebreaker: uidTiebreaker,
      tokens: ctx.tokens(),
      scope: kind.type,
      totalSize: true,
    });
    const pctx = ctx.presentContext();
    return {
      [kind.pluralLocal]: page.rows.map((row) => present(row as EngineRow, pctx)),
      nextPageToken: page.nextPageToken,
      totalSize: page.totalSize ?? 0,
    };
  }

  // ---- wiring ---------------------------------------------------------------------------------

  const s = kind.singular;
  const handlers: Record<string, Handler> = {
    [`create${s}`]: create_,
    [`get${s}`]: get,
    [`list${s}s`]: list,
    [`delete${s}`]: delete_,
  };
  if (kind.updatable.length > 0) handlers[`update${s}`] = update;
  if (kind.allowed.pause) handlers[`pause${s}`] = pause;
  if (kind.allowed.resume) handlers[`resume${s}`] = resume;
  if (kind.allowed.terminate) handlers[`terminate${s}`] = terminate;
  if (kind.allowed.resizeStorage) handlers[`resize${s}Storage`] = resizeStorage;
  if (kind.allowed.downloadLogs) handlers[`download${s}Logs`] = downloadLogs;
  if (kind.allowed.upgradeVersion) handlers.upgradeDAIEngineVersion = upgradeVersion;
  if (kind.allowed.migrateCreator) handlers[`migrate${s}Creator`] = migrateCreator;
  if (kind.allowed.access) handlers[`access${s}`] = access;
  if (kind.type === "h2oEngines") {
    handlers.calculateH2OEngineSizeCompressedDataset = async (req: Req, hctx: HandlerContext) => {
      principalOf(hctx);
      const size = compressedDatasetSize(BigInt(req.rowsCount ?? 0), BigInt(req.columnsCount ?? 0), req.limits);
      return {
        h2oEngineSize: create(H2OEngineSizeSchema, size),
        limits: create(H2OEngineSizeLimitsSchema, req.limits),
      };
    };
    handlers.calculateH2OEngineSizeRawDataset = async (req: Req, hctx: HandlerContext) => {
      principalOf(hctx);
      const size = rawDatasetSize(BigInt(req.datasetSizeBytes ?? 0), req.limits);
      return {
        h2oEngineSize: create(H2OEngineSizeSchema, size),
        limits: create(H2OEngineSizeLimitsSchema, req.limits),
      };
    };
  }
  // Built from the kind's descriptor, under the local names of its service's methods; the type
  // checker cannot follow keys made at run time, so the map is given its service's type here, and
  // registration (registerGuarded) still refuses a method without a handler.
  return handlers as unknown as EngineHandlers[T];
}
