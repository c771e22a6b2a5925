// SandboxEngineService: records what the caller asked for (a sandbox to run, to terminate, to
// delete) with its event in one transaction, answers at once, and leaves the work to the
// lifecycle. Images and templates are checked against the local copy of the catalogue.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { sql } from "kysely";
import { listRequestFields, paginate, sandboxEnginePattern, workspacePattern, type FieldTable } from "@aiem/kit/aip";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { failedPrecondition, notFound } from "@aiem/kit/errors";
import { principalOf } from "@aiem/kit/server";
import type { CatalogueReadModel } from "@aiem/kit/catalogue-view";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { SandboxEngineService } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_service_pb.js";
import { SANDBOX_RESOURCE_TYPE } from "./access.js";
import { type ChangeHub, type Lifecycle, sandboxKey } from "./lifecycle.js";
import type { LocalSandboxRuntime } from "./runtime/index.js";
import { createCreateSandboxEngineHandler } from "./sandbox-engine-create.js";
import type { ServiceContext } from "./service-context.js";
import {
  SANDBOX_STATE_NAMES,
  loadSandbox,
  markSeenRunning,
  presentSandbox,
  transitionSandbox,
  type SandboxRow,
} from "./store.js";

const S = SandboxEngine_State;

export interface SandboxEngineDeps {
  readonly context: ServiceContext;
  readonly lifecycle: Lifecycle;
  readonly runtime: LocalSandboxRuntime;
  readonly hub: ChangeHub;
  /** The local copy of the catalogue; undefined until the module started. */
  catalogue(): CatalogueReadModel | undefined;
}

const text = (column: string) => ({ type: "string" as const, sql: sql.ref(column) });

/** What ListSandboxEngines filters and sorts on (the request's documented fields). */
export const sandboxTable: FieldTable = {
  name: text("name"),
  sandbox_engine_id: text("id"),
  display_name: text("display_name"),
  state: { type: "enum", sql: sql.ref("state"), enumValues: SANDBOX_STATE_NAMES },
  uid: text("uid"),
  creator: text("creator"),
  creator_display_name: text("creator_display_name"),
  create_time: { type: "timestamp", sql: sql.ref("create_time") },
  sandbox_engine_image: text("sandbox_engine_image"),
  sandbox_engine_template: text("sandbox_engine_template"),
};

/** The handlers of SandboxEngineService, typed by the service so a missing or misspelt one fails the type check. */
export type SandboxEngineServiceImpl = ServiceImpl<typeof SandboxEngineService>;

export function createSandboxEngineHandlers(deps: SandboxEngineDeps): SandboxEngineServiceImpl {
  const { context, lifecycle } = deps;
  const db = () => context.database().db;
  const present = (row: SandboxRow) => presentSandbox(row, lifecycle.idleMs(row), lifecycle.startPhase(row.uid));

  return {
    ...createCreateSandboxEngineHandler(deps, present),

    async getSandboxEngine(req, ctx) {
      const { row } = await openSandboxEngine(deps, ctx, req.name, Action.GET);
      await markSeenRunning(db(), [row]);
      return { sandboxEngine: present(row) };
    },

    async listSandboxEngines(req, ctx) {
      const { workspace } = workspacePattern.parse(req.parent, "parent", { allowWildcard: ["workspace"] });
      const principal = principalOf(ctx);
      context.policy.check(
        principal,
        workspace === "-" ? Action.LIST_ALL : Action.LIST,
        WorkspaceKind.sandboxEngines,
        workspace,
      );
      let query = db().selectFrom("sandbox_engines").selectAll();
      if (workspace !== "-") query = query.where("workspace", "=", workspace);
      if (!context.policy.isAdmin(principal)) query = query.where("creator", "=", principal.name);
      const page = await paginate(query, {
        ...listRequestFields(req),
        table: sandboxTable,
        tiebreaker: { name: "name", spec: sandboxTable.name! },
        tokens: context.tokens(),
        scope: "sandboxEngines",
        totalSize: true,
      });
      await markSeenRunning(db(), page.rows as SandboxRow[]);
      return {
        sandboxEngines: (page.rows as SandboxRow[]).map(present),
        nextPageToken: page.nextPageToken,
        totalSize: page.totalSize ?? 0,
      };
    },

    async deleteSandboxEngine(req, ctx) {
      const { row } = await openSandboxEngine(deps, ctx, req.name, Action.DELETE);
      const all = [S.STARTING, S.RUNNING, S.TERMINATING, S.TERMINATED, S.FAILED, S.DELETING];
      const moved = await context.write((trx) =>
        transitionSandbox(trx, row.uid, all, S.DELETING, context.now(), { desired: "deleted" }),
      );
      if (!moved) throw notFound(req.name, SANDBOX_RESOURCE_TYPE);
      deps.hub.notify(sandboxKey(row.uid));
      void lifecycle.kick(row.uid);
      return { sandboxEngine: present(moved.row) };
    },

    async terminateSandboxEngine(req, ctx) {
      const { row } = await openSandboxEngine(deps, ctx, req.name, Action.TERMINATE);
      const moved = await context.write((trx) =>
        transitionSandbox(trx, row.uid, [S.STARTING, S.RUNNING, S.FAILED], S.TERMINATING, context.now(), {
          desired: "terminated",
        }),
      );
      if (!moved) {
        const current = (await loadSandbox(db(), row.workspace, row.id)) ?? row;
        throw failedPrecondition(
          `${row.name} is ${current.state}; only a starting, running or failed sandbox engine can be terminated`,
          {
            type: "STATE",
            subject: row.name,
            description: `the sandbox engine is ${current.state}`,
          },
        );
      }
      deps.hub.notify(sandboxKey(row.uid));
      void lifecycle.kick(row.uid);
      return { sandboxEngine: present(moved.row) };
    },
  };
}

/**
 * Parses a sandbox engine's name, checks the permission and loads it. A sandbox engine is visible
 * to its creator and to administrators; to other members it does not exist (the same NOT_FOUND as
 * a missing one, so names cannot be probed).
 */
async function openSandboxEngine(deps: SandboxEngineDeps, ctx: HandlerContext, name: string, action: Action) {
  const { context } = deps;
  const { workspace, sandbox_engine: id } = sandboxEnginePattern.parse(name, "name");
  const principal = principalOf(ctx);
  context.policy.check(principal, action, WorkspaceKind.sandboxEngines, workspace);
  const row = await loadSandbox(context.database().db, workspace, id);
  if (!row) throw notFound(name, SANDBOX_RESOURCE_TYPE);
  if (row.creator !== principal.name && !context.policy.isAdmin(principal))
    throw notFound(row.name, SANDBOX_RESOURCE_TYPE);
  return { principal, row };
}
