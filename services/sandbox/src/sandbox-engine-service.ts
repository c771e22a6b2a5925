// SandboxEngineService: records what the caller asked for (a sandbox to run, to terminate, to
// delete) with its event in one transaction, answers at once, and leaves the work to the
// lifecycle. Images and templates are checked against the local copy of the catalogue.
import { randomUUID } from "node:crypto";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { DurationSchema, durationMs, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { sql } from "kysely";
import {
  checkAnnotations,
  checkField,
  paginate,
  sandboxEngineImagePattern,
  sandboxEngineTemplatePattern,
  sandboxEnginePattern,
  validateDisplayName,
  validateResourceId,
  workspacePattern,
  type FieldTable,
} from "@aiem/kit/aip";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { alreadyExists, failedPrecondition, notFound, requiredField, unavailable } from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import { principalOf } from "@aiem/kit/server";
import { caughtUpFirst, type CatalogueReadModel } from "@aiem/kit/catalogue-view";
import { DEFAULT_SANDBOX_MAX_RUNNING_SECONDS } from "@aiem/kit/catalogue-view";
import {
  SandboxEngineImageInfoSchema,
  SandboxEngineSchema,
  SandboxEngineTemplateInfoSchema,
  SandboxEngine_State,
} from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type {
  CreateSandboxEngineRequest,
  DeleteSandboxEngineRequest,
  GetSandboxEngineRequest,
  ListSandboxEnginesRequest,
  TerminateSandboxEngineRequest,
} from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_service_pb.js";
import { SandboxEngineImageSchema } from "@aiem/proto/enginemanager/v1/sandbox_engine_image_pb.js";
import { SandboxEngineTemplateSchema } from "@aiem/proto/enginemanager/v1/sandbox_engine_template_pb.js";
import { SANDBOX_RESOURCE_TYPE } from "./access.js";
import { type Lifecycle, limitsOf, sandboxKey, type ChangeHub } from "./lifecycle.js";
import { type LocalSandboxRuntime, SandboxRuntimeError } from "./runtime/index.js";
import type { ServiceContext } from "./service-context.js";
import {
  SANDBOX_STATE_NAMES,
  encodeSandbox,
  insertSandbox,
  loadSandbox,
  markSeenRunning,
  presentSandbox,
  sandboxStateName,
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

export function createSandboxEngineHandlers(deps: SandboxEngineDeps) {
  const { context, lifecycle } = deps;
  const db = () => context.database().db;
  const present = (row: SandboxRow) => presentSandbox(row, lifecycle.idleMs(row), lifecycle.startPhase(row.uid));

  /**
   * A sandbox engine is visible to its creator and to administrators; to other members it does
   * not exist (the same NOT_FOUND as a missing one, so names cannot be probed).
   */
  function checkVisible(principal: Principal, row: SandboxRow): void {
    if (row.creator === principal.name || context.policy.isAdmin(principal)) return;
    throw notFound(row.name, SANDBOX_RESOURCE_TYPE);
  }

  async function open(ctx: HandlerContext, name: string, action: Action) {
    const { workspace, sandbox_engine: id } = sandboxEnginePattern.parse(name, "name");
    const principal = principalOf(ctx);
    context.policy.check(principal, action, WorkspaceKind.sandboxEngines, workspace);
    const row = await loadSandbox(db(), workspace, id);
    if (!row) throw notFound(name, SANDBOX_RESOURCE_TYPE);
    checkVisible(principal, row);
    return { principal, row };
  }

  function catalogueEntry<K extends "sandboxEngineImages" | "sandboxEngineTemplates">(
    kind: K,
    field: string,
    name: string,
  ) {
    const catalogue = deps.catalogue();
    if (!catalogue?.isReady()) throw unavailable("the sandbox service is still reading the catalogue; retry shortly");
    const resource = catalogue.get(kind, name);
    const what = kind === "sandboxEngineImages" ? "image" : "template";
    if (!resource) {
      throw failedPrecondition(`${field}: the sandbox engine ${what} ${name} does not exist`, {
        type: "NOT_FOUND",
        subject: name,
        description: `no such ${what}`,
      });
    }
    if (!resource.enabled) {
      throw failedPrecondition(`${field}: the sandbox engine ${what} ${name} is disabled`, {
        type: "DISABLED",
        subject: name,
        description: `the ${what} is disabled`,
      });
    }
    return resource;
  }

  return {
    async createSandboxEngine(req: CreateSandboxEngineRequest, ctx: HandlerContext) {
      const { workspace } = workspacePattern.parse(req.parent, "parent");
      const principal = principalOf(ctx);
      context.policy.check(principal, Action.CREATE, WorkspaceKind.sandboxEngines, workspace);
      if (req.sandboxEngineId === "") throw requiredField("sandbox_engine_id");
      checkField("sandbox_engine_id", req.sandboxEngineId, validateResourceId);
      const input = req.sandboxEngine;
      if (!input) throw requiredField("sandbox_engine");
      checkField("sandbox_engine.display_name", input.displayName, validateDisplayName);
      checkAnnotations("sandbox_engine.annotations", input.annotations);
      for (const [field, value, pattern] of [
        ["sandbox_engine.sandbox_engine_image", input.sandboxEngineImage, sandboxEngineImagePattern],
        ["sandbox_engine.sandbox_engine_template", input.sandboxEngineTemplate, sandboxEngineTemplatePattern],
      ] as const) {
        if (value === "") throw requiredField(field);
        pattern.parse(value, field);
      }
      if (deps.runtime.capabilities.isolation === "unavailable") {
        throw failedPrecondition(
          `sandboxes cannot be isolated on this server: ${deps.runtime.capabilities.isolationUnavailableReason}. ` +
            "An operator who accepts running sandboxes without any isolation can set AIEM_SANDBOX_UNCONFINED=true.",
          { type: "ISOLATION", subject: "bubblewrap", description: "bwrap is not installed" },
        );
      }
      // A reference the catalogue acknowledged before this call is never answered as missing:
      // when one is, the copy catches up with the catalogue stream and looks again.
      const { image, template } = await caughtUpFirst(deps.catalogue(), () => ({
        image: catalogueEntry("sandboxEngineImages", "sandbox_engine.sandbox_engine_image", input.sandboxEngineImage),
        template: catalogueEntry(
          "sandboxEngineTemplates",
          "sandbox_engine.sandbox_engine_template",
          input.sandboxEngineTemplate,
        ),
      }));
      // Field numbers of the infos match the catalogue's messages: the copy is the resource itself.
      const imageInfo = fromBinary(SandboxEngineImageInfoSchema, toBinary(SandboxEngineImageSchema, image));
      const templateInfo = fromBinary(SandboxEngineTemplateInfoSchema, toBinary(SandboxEngineTemplateSchema, template));
      // A template from an event older than its running limit has the catalogue's default.
      templateInfo.maxRunningDuration ??= create(DurationSchema, { seconds: DEFAULT_SANDBOX_MAX_RUNNING_SECONDS });
      const now = context.now();
      const name = sandboxEnginePattern.format({ workspace, sandbox_engine: req.sandboxEngineId });
      const engine = create(SandboxEngineSchema, {
        name,
        displayName: input.displayName,
        uid: randomUUID(),
        creator: principal.name,
        creatorDisplayName: principal.displayName,
        createTime: timestampFromDate(now),
        sandboxEngineImage: image.name,
        sandboxEngineImageInfo: imageInfo,
        sandboxEngineTemplate: template.name,
        sandboxEngineTemplateInfo: templateInfo,
        annotations: input.annotations,
      });
      const runtimeId = lifecycle.claimRuntimeId(engine.uid, limitsOf(templateInfo));
      // A warm sandbox's agent already answers: the sandbox is recorded RUNNING at once (its
      // events still tell STARTING, then RUNNING), so the create itself hands it out.
      const warm = runtimeId !== engine.uid && deps.runtime.isRunning(runtimeId);
      // A new sandbox must fit the host-wide bounds (a warm one holds its share already).
      if (!warm) {
        try {
          deps.runtime.checkCapacity(limitsOf(templateInfo));
        } catch (error) {
          if (error instanceof SandboxRuntimeError && error.code === "resource-exhausted") {
            throw new ConnectError(error.message, Code.ResourceExhausted);
          }
          throw error;
        }
      }
      const row: SandboxRow = {
        workspace,
        id: req.sandboxEngineId,
        name,
        uid: engine.uid,
        display_name: engine.displayName,
        state: sandboxStateName(warm ? S.RUNNING : S.STARTING),
        desired: "running",
        creator: principal.name,
        creator_display_name: principal.displayName,
        sandbox_engine_image: image.name,
        sandbox_engine_template: template.name,
        runtime_id: runtimeId,
        max_idle_ms: BigInt(template.maxIdleDuration ? durationMs(template.maxIdleDuration) : 0),
        max_running_ms: BigInt(durationMs(templateInfo.maxRunningDuration)),
        create_time: now,
        update_time: now,
        last_activity: now,
        start_time: warm ? now : null,
        failure_reason: null,
        // This replica runs it: the warm agent it may have claimed is here, and so is the kick below.
        placement: lifecycle.placement,
        seen_running: false,
        resource: encodeSandbox(engine),
      };
      // A cold start begins before the row is written: the write, the answer and the pass that
      // records it running overlap the agent's start (which the pass then takes over).
      if (!warm) await lifecycle.startEarly(row.uid, runtimeId, limitsOf(templateInfo));
      let inserted: boolean;
      try {
        inserted = await context.write((trx) =>
          insertSandbox(trx, row, warm ? [S.STARTING, S.RUNNING] : [S.STARTING], now),
        );
      } catch (error) {
        lifecycle.discardEarly(row.uid, runtimeId);
        throw error;
      }
      if (!inserted) {
        if (warm) void deps.runtime.destroy(runtimeId).catch(() => undefined);
        else lifecycle.discardEarly(row.uid, runtimeId);
        throw alreadyExists(name, SANDBOX_RESOURCE_TYPE);
      }
      // After the answer is on its way: the pass that takes the start over (or, from a warm
      // sandbox, finds nothing left to do).
      setImmediate(() => void lifecycle.kick(row.uid));
      // The answer to a create says STARTING, as the real service's does, even from a warm
      // sandbox that is running already: clients wait for RUNNING, and the next read says it.
      return {
        sandboxEngine: warm ? present({ ...row, state: sandboxStateName(S.STARTING) }) : present(row),
      };
    },

    async getSandboxEngine(req: GetSandboxEngineRequest, ctx: HandlerContext) {
      const { row } = await open(ctx, req.name, Action.GET);
      await markSeenRunning(db(), [row]);
      return { sandboxEngine: present(row) };
    },

    async listSandboxEngines(req: ListSandboxEnginesRequest, ctx: HandlerContext) {
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
        parent: req.parent,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        filter: req.filter,
        orderBy: req.orderBy,
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

    async deleteSandboxEngine(req: DeleteSandboxEngineRequest, ctx: HandlerContext) {
      const { row } = await open(ctx, req.name, Action.DELETE);
      const all = [S.STARTING, S.RUNNING, S.TERMINATING, S.TERMINATED, S.FAILED, S.DELETING];
      const moved = await context.write((trx) =>
        transitionSandbox(trx, row.uid, all, S.DELETING, context.now(), { desired: "deleted" }),
      );
      if (!moved) throw notFound(req.name, SANDBOX_RESOURCE_TYPE);
      deps.hub.notify(sandboxKey(row.uid));
      void lifecycle.kick(row.uid);
      return { sandboxEngine: present(moved.row) };
    },

    async terminateSandboxEngine(req: TerminateSandboxEngineRequest, ctx: HandlerContext) {
      const { row } = await open(ctx, req.name, Action.TERMINATE);
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
