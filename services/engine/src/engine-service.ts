// The handlers of the DAI, H2O and notebook engine services, written once over the kind
// descriptors. Each call parses its names, authorizes on the workspace, finds the engine among
// those the caller may see, checks that the engine's state allows the call (FAILED_PRECONDITION
// naming the state otherwise), and records the new intent in one transaction together with the
// state event. The reconciler carries the intent out. The parts: engine-calls.ts (what every call
// shares), engine-create.ts, engine-actions.ts and engine-update.ts; this file wires them.
import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { checkField, paginate, validateResourceId, workspacePattern } from "@aiem/kit/aip";
import { Action } from "@aiem/kit/authz";
import { requiredField } from "@aiem/kit/errors";
import { principalOf } from "@aiem/kit/server";
import { H2OEngineSizeLimitsSchema, H2OEngineSizeSchema } from "@aiem/proto/enginemanager/v1/h2o_engine_size_pb.js";
import { visibleRows } from "./access.js";
import type { ServiceContext } from "./context.js";
import { compressedDatasetSize, rawDatasetSize } from "./h2o-size.js";
import type { AnyEngine, EngineKind } from "./kinds.js";
import { ENGINES, present, uidTiebreaker, type EngineRow } from "./store.js";
import { createEngineActions } from "./engine-actions.js";
import { createEngineCalls, type Handler, type Req } from "./engine-calls.js";
import { createEngineCreation } from "./engine-create.js";
import { createEngineUpdate } from "./engine-update.js";

export type { Handler } from "./engine-calls.js";
export { MAX_LOG_BYTES } from "./engine-actions.js";

export function createEngineHandlers(ctx: ServiceContext, kind: EngineKind): Record<string, Handler> {
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
    [`Create${s}`]: create_,
    [`Get${s}`]: get,
    [`List${s}s`]: list,
    [`Delete${s}`]: delete_,
  };
  if (kind.updatable.length > 0) handlers[`Update${s}`] = update;
  if (kind.allowed.pause) handlers[`Pause${s}`] = pause;
  if (kind.allowed.resume) handlers[`Resume${s}`] = resume;
  if (kind.allowed.terminate) handlers[`Terminate${s}`] = terminate;
  if (kind.allowed.resizeStorage) handlers[`Resize${s}Storage`] = resizeStorage;
  if (kind.allowed.downloadLogs) handlers[`Download${s}Logs`] = downloadLogs;
  if (kind.allowed.upgradeVersion) handlers["UpgradeDAIEngineVersion"] = upgradeVersion;
  if (kind.allowed.migrateCreator) handlers[`Migrate${s}Creator`] = migrateCreator;
  if (kind.allowed.access) handlers[`Access${s}`] = access;
  if (kind.type === "h2oEngines") {
    handlers["CalculateH2OEngineSizeCompressedDataset"] = async (req: Req, hctx: HandlerContext) => {
      principalOf(hctx);
      const size = compressedDatasetSize(BigInt(req.rowsCount ?? 0), BigInt(req.columnsCount ?? 0), req.limits);
      return {
        h2oEngineSize: create(H2OEngineSizeSchema, size),
        limits: create(H2OEngineSizeLimitsSchema, req.limits),
      };
    };
    handlers["CalculateH2OEngineSizeRawDataset"] = async (req: Req, hctx: HandlerContext) => {
      principalOf(hctx);
      const size = rawDatasetSize(BigInt(req.datasetSizeBytes ?? 0), req.limits);
      return {
        h2oEngineSize: create(H2OEngineSizeSchema, size),
        limits: create(H2OEngineSizeLimitsSchema, req.limits),
      };
    };
  }
  return handlers;
}
