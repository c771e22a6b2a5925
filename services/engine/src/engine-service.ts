// The handlers of the DAI, H2O and notebook engine services, written once over the kind
// descriptors. Each call parses its names, authorizes on the workspace, finds the engine among
// those the caller may see, checks that the engine's state allows the call (FAILED_PRECONDITION
// naming the state otherwise), and records the new intent in one transaction together with the
// state event. The reconciler carries the intent out.
import { randomUUID } from "node:crypto";
import { create, fromBinary } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { sql } from "kysely";
import {
  checkField,
  checkUpdateMask,
  daiEngineProfilePattern,
  daiEngineVersionPattern,
  h2oEngineProfilePattern,
  h2oEngineVersionPattern,
  notebookEngineImagePattern,
  notebookEngineProfilePattern,
  paginate,
  validateResourceId,
  workspacePattern,
  type ResourcePattern,
} from "@aiem/kit/aip";
import { Action } from "@aiem/kit/authz";
import {
  alreadyExists,
  failedPrecondition,
  invalidArgument,
  notFound,
  permissionDenied,
  quote,
  requiredField,
  resourceExhausted,
} from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import { principalOf } from "@aiem/kit/server";
import { isProfileAssignedTo } from "@aiem/kit/catalogue-view";
import type { DAIEngine } from "@aiem/proto/enginemanager/v1/dai_engine_pb.js";
import type { DAIEngineProfile } from "@aiem/proto/enginemanager/v1/dai_engine_profile_pb.js";
import type { DAIEngineVersion } from "@aiem/proto/enginemanager/v1/dai_engine_version_pb.js";
import { H2OEngineSizeLimitsSchema, H2OEngineSizeSchema } from "@aiem/proto/enginemanager/v1/h2o_engine_size_pb.js";
import type { H2OEngine } from "@aiem/proto/enginemanager/v1/h2o_engine_pb.js";
import type { NotebookEngine } from "@aiem/proto/enginemanager/v1/notebook_engine_pb.js";
import type { NotebookEngineImage } from "@aiem/proto/enginemanager/v1/notebook_engine_image_pb.js";
import type { NotebookEngineProfile } from "@aiem/proto/enginemanager/v1/notebook_engine_profile_pb.js";
import { canSee, checkManage, visibleRows } from "./access.js";
import type { ServiceContext } from "./context.js";
import { compressedDatasetSize, rawDatasetSize } from "./h2o-size.js";
import { checkTransition, S, type AnyEngine, type EngineAction, type EngineKind } from "./kinds.js";
import { compareVersions, idOf } from "./semver.js";
import {
  accessUri,
  durationFromMs,
  encodeResource,
  enqueueStateChanged,
  ENGINES,
  insertEngine,
  kindFieldTable,
  loadByName,
  present,
  uidTiebreaker,
  type EngineRow,
  type Executor,
} from "./store.js";
import {
  checkAnnotations,
  checkDisplayName,
  checkEngineConfig,
  cumulativeAmount,
  cumulativeTerms,
  resolveResources,
  Violations,
  type AnyProfile,
  type RequestedResources,
  type Resources,
} from "./validation.js";

type Req = Record<string, any>;
export type Handler = (req: any, ctx: HandlerContext) => Promise<unknown>;

/** Largest log download (the tail of the log). */
export const MAX_LOG_BYTES = 16 * 1024 * 1024;

const PROFILE_PATTERNS: Record<EngineKind["type"], ResourcePattern<string>> = {
  daiEngines: daiEngineProfilePattern,
  h2oEngines: h2oEngineProfilePattern,
  notebookEngines: notebookEngineProfilePattern,
};
const VERSION_PATTERNS: Record<EngineKind["type"], ResourcePattern<string>> = {
  daiEngines: daiEngineVersionPattern,
  h2oEngines: h2oEngineVersionPattern,
  notebookEngines: notebookEngineImagePattern,
};

interface Target {
  readonly workspace: string;
  readonly id: string;
  readonly name: string;
}

type VersionLike = DAIEngineVersion | NotebookEngineImage;

export function createEngineHandlers(ctx: ServiceContext, kind: EngineKind): Record<string, Handler> {
  const { policy } = ctx;
  const fieldTable = kindFieldTable(kind);
  const db = () => ctx.database().db;
  const f = (field: string) => `${kind.resourceField}.${field}`;

  function parseName(name: string, field = "name"): Target {
    const parts = kind.pattern.parse(name, field) as Record<string, string>;
    return { workspace: parts["workspace"]!, id: parts[kind.idVar]!, name };
  }

  /** The engine, if it exists and the caller may see it; NOT_FOUND otherwise. */
  async function mustLoad(exec: Executor, principal: Principal, t: Target, forUpdate = false): Promise<EngineRow> {
    const row = await loadByName(exec, t.name, { forUpdate });
    if (!row || !canSee(policy, principal, row)) throw notFound(t.name, kind.resourceType);
    return row;
  }

  // ---- catalogue references -----------------------------------------------------------------

  /** The profile named in a request: it must exist, be enabled and be assigned to the caller. */
  function usableProfile(principal: Principal, name: string): AnyProfile {
    const field = f("profile");
    if (name === "") throw requiredField(field);
    PROFILE_PATTERNS[kind.type].parse(name, field);
    const profile = ctx.catalogue().get(kind.profileKind, name) as AnyProfile | undefined;
    if (!profile) throw invalidArgument(field, `${quote(name)} does not exist`);
    if (!profile.enabled) throw invalidArgument(field, `${quote(name)} is disabled; choose an enabled profile`);
    if (!isProfileAssignedTo(profile, principal.roles)) {
      throw permissionDenied(`permission denied: ${principal.name} holds none of the roles the profile ${quote(name)} is assigned to (${f("profile")})`);
    }
    return profile;
  }

  /** The version (an alias resolved) or notebook image named in a request, usable for new engines. */
  function usableVersion(name: string, field: string): VersionLike {
    if (name === "") throw requiredField(field);
    VERSION_PATTERNS[kind.type].parse(name, field);
    const found = ctx.catalogue().get(kind.versionKind, name) as VersionLike | undefined;
    if (!found) throw invalidArgument(field, `${quote(name)} does not exist`);
    if (kind.versionKind === "notebookEngineImages") {
      if (!(found as NotebookEngineImage).enabled) throw invalidArgument(field, `${quote(found.name)} is disabled; choose an enabled image`);
    } else if ((found as DAIEngineVersion).deprecated) {
      throw invalidArgument(field, `${quote(found.name)} is deprecated; choose a version that is not`);
    }
    return found;
  }

  /** The engine's profile now: from the catalogue when it still exists, else the copy the engine keeps. */
  function currentProfile(row: EngineRow): AnyProfile | undefined {
    const fromCatalogue = ctx.catalogue().get(kind.profileKind, row.profile) as AnyProfile | undefined;
    return fromCatalogue ?? ((decodeStored(row) as { profileInfo?: AnyProfile }).profileInfo);
  }

  /** The stored resource: what the row's columns do not hold (copies, config, annotations). */
  function decodeStored(row: EngineRow): AnyEngine & Record<string, any> {
    return fromBinary(kind.schema, row.resource) as AnyEngine & Record<string, any>;
  }

  // ---- quotas ---------------------------------------------------------------------------------

  /**
   * Checks the caller's totals across their engines of `profile` (cumulative maximums) and, when
   * the engine is to run, their running engines (max_running_engines). `except` is the engine
   * being changed, whose old amounts do not count. Runs under a lock per user and profile.
   */
  async function checkQuotas(
    trx: Executor,
    creator: string,
    profile: AnyProfile,
    amounts: Resources | undefined,
    options: { willRun: boolean; except?: string; only?: readonly string[] },
  ): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtext(${`${creator}|${profile.name}`}))`.execute(trx);
    const rows = (await trx
      .selectFrom(ENGINES)
      .select(["uid", "type", "cpu", "gpu", "memory_bytes", "storage_bytes", "node_count", "state", "desired"])
      .where("creator", "=", creator)
      .where("profile", "=", profile.name)
      .execute()) as Array<Pick<EngineRow, "uid" | "type" | "cpu" | "gpu" | "memory_bytes" | "storage_bytes" | "node_count" | "state" | "desired">>;
    const others = rows.filter((r) => r.uid !== options.except);
    if (options.willRun && profile.maxRunningEngines !== undefined) {
      const running = others.filter((r) => r.desired === "RUNNING" && r.state !== S.FAILED && r.state !== S.TERMINATED).length;
      if (running >= profile.maxRunningEngines) {
        throw resourceExhausted(
          `${creator} already runs ${running} engine(s) with the profile ${quote(profile.name)}, which allows ${profile.maxRunningEngines} (max_running_engines); pause or delete one first`,
        );
      }
    }
    if (!amounts) return;
    const counted = others.filter((r) => r.desired !== "DELETED" && r.state !== S.TERMINATED);
    for (const term of cumulativeTerms(kind, profile)) {
      const max = term.constraint?.cumulativeMax;
      if (max === undefined || (options.only && !options.only.includes(term.field))) continue;
      const held = counted.reduce(
        (sum, r) =>
          sum +
          cumulativeAmount(kind, term.column, {
            cpu: r.cpu,
            gpu: r.gpu,
            memoryBytes: r.memory_bytes,
            storageBytes: r.storage_bytes,
            nodeCount: r.node_count,
            maxIdleMs: 0n,
            maxRunningMs: 0n,
          }),
        0n,
      );
      const asked = cumulativeAmount(kind, term.column, amounts);
      if (held + asked > max) {
        throw resourceExhausted(
          `${f(term.field)}: the profile ${quote(profile.name)} allows ${creator} at most ${max} in total across their engines (${term.field}_constraint.cumulative_max); they hold ${held} and this asks for ${asked}`,
        );
      }
    }
  }

  // ---- create ---------------------------------------------------------------------------------

  /** Builds the engine a create would make (checked, not stored). */
  function buildNew(principal: Principal, t: Target, input: AnyEngine): { row: EngineRow; profile: AnyProfile } {
    const v = new Violations(kind.resourceField);
    const i = input as AnyEngine & Record<string, any>;
    checkDisplayName(v, i.displayName ?? "");
    if (kind.type !== "notebookEngines") checkAnnotations(v, (i as DAIEngine | H2OEngine).annotations ?? {});
    if ((i.profile ?? "") === "") v.add("profile", "is required");
    if ((i[kind.versionLocal] ?? "") === "") v.add(kind.versionField, "is required");
    v.throwIfAny();
    const profile = usableProfile(principal, i.profile);
    const version = usableVersion(i[kind.versionLocal], f(kind.versionField));
    const requested: RequestedResources = {
      cpu: i.cpu,
      gpu: i.gpu,
      memoryBytes: i.memoryBytes,
      storageBytes: kind.hasStorage ? i.storageBytes : undefined,
      nodeCount: kind.hasNodeCount ? i.nodeCount : undefined,
      maxIdleDuration: i.maxIdleDuration,
      maxRunningDuration: i.maxRunningDuration,
    };
    const resources = resolveResources(kind, profile, requested, v);
    let config: Record<string, string> = {};
    if (kind.type === "daiEngines") config = checkEngineConfig(v, profile as DAIEngineProfile, (i as DAIEngine).config ?? {});
    v.throwIfAny();

    const now = ctx.now();
    const resource = create(kind.schema) as AnyEngine & Record<string, any>;
    resource.displayName = i.displayName ?? "";
    resource.profileInfo = profile;
    resource[kind.versionInfoLocal] = version;
    switch (kind.type) {
      case "daiEngines": {
        const d = resource as DAIEngine;
        d.annotations = { ...(i as DAIEngine).annotations };
        d.config = config;
        d.dataDirectoryStorageClass = (profile as DAIEngineProfile).dataDirectoryStorageClass;
        break;
      }
      case "h2oEngines":
        (resource as H2OEngine).annotations = { ...(i as H2OEngine).annotations };
        break;
      case "notebookEngines": {
        const n = resource as NotebookEngine;
        n.storageClassName = (profile as NotebookEngineProfile).storageClassName;
        n.updater = principal.name;
        n.updaterDisplayName = principal.displayName;
        break;
      }
    }
    const row: EngineRow = {
      uid: randomUUID(),
      type: kind.type,
      workspace: t.workspace,
      engine_id: t.id,
      name: t.name,
      display_name: resource.displayName,
      creator: principal.name,
      creator_display_name: principal.displayName,
      profile: profile.name,
      version: idOf(version.name),
      version_name: version.name,
      state: S.STARTING,
      desired: "RUNNING",
      reconciling: true,
      shared: kind.type === "notebookEngines" ? (i as NotebookEngine).shared === true : false,
      cpu: resources.cpu,
      gpu: resources.gpu,
      memory_bytes: resources.memoryBytes,
      storage_bytes: resources.storageBytes,
      node_count: resources.nodeCount,
      max_idle_ms: resources.maxIdleMs,
      max_running_ms: resources.maxRunningMs,
      create_time: now,
      update_time: now,
      delete_time: null,
      resume_time: null,
      last_activity_time: now,
      start_time: now,
      launched_at: null,
      failure_reason: "",
      failure_message: "",
      storage_resizing: false,
      total_disk_bytes: null,
      free_disk_bytes: null,
      generation: 1n,
      next_reconcile_at: now,
      lease_owner: null,
      lease_until: null,
      placement: null,
      resource: encodeResource(kind, resource),
    };
    return { row, profile };
  }

  function resourcesOf(row: EngineRow): Resources {
    return {
      cpu: row.cpu,
      gpu: row.gpu,
      memoryBytes: row.memory_bytes,
      storageBytes: row.storage_bytes,
      nodeCount: row.node_count,
      maxIdleMs: row.max_idle_ms,
      maxRunningMs: row.max_running_ms,
    };
  }

  async function createEngine(principal: Principal, t: Target, input: AnyEngine, validateOnly: boolean): Promise<AnyEngine> {
    const { row, profile } = buildNew(principal, t, input);
    if (validateOnly) {
      const exec = db();
      if (await loadByName(exec, t.name)) throw alreadyExists(t.name, kind.resourceType);
      await exec.transaction().execute((trx) => checkQuotas(trx, principal.name, profile, resourcesOf(row), { willRun: true }));
      return present(row, ctx.presentContext());
    }
    await ctx.write(async (trx) => {
      await checkQuotas(trx, principal.name, profile, resourcesOf(row), { willRun: true });
      if (!(await insertEngine(trx, row))) throw alreadyExists(t.name, kind.resourceType);
      await enqueueStateChanged(trx, row, undefined, ctx.presentContext());
    });
    return present(row, ctx.presentContext());
  }

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
    return { [kind.resourceLocal]: await createEngine(principal, { workspace, id, name }, input, req.validateOnly === true) };
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

  // ---- state changes --------------------------------------------------------------------------

  interface Change<P = void> {
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
  }

  async function change<P = void>(req: Req, hctx: HandlerContext, c: Change<P>): Promise<EngineRow> {
    const principal = principalOf(hctx);
    const t = parseName(req.name);
    policy.check(principal, c.permission, kind.type, t.workspace);
    const run = async (trx: Executor): Promise<EngineRow> => {
      const row = await mustLoad(trx, principal, t, true);
      if (c.manage !== false) checkManage(policy, principal, row);
      checkTransition(kind, c.action, row.name, row.state);
      const plan = (await c.check?.(row, trx, principal)) as P;
      const now = ctx.now();
      const patch = c.apply(row, now, plan);
      const after: EngineRow = { ...row, ...patch, update_time: now };
      if (c.activity && after.state === S.RUNNING) after.last_activity_time = now;
      if (c.intent) {
        after.generation = row.generation + 1n;
        after.next_reconcile_at = now;
        after.reconciling = true;
      }
      if (c.validateOnly) return after;
      const { uid: _uid, ...values } = after;
      await trx.updateTable(ENGINES).set(values).where("uid", "=", row.uid).execute();
      if (after.state !== row.state || after.reconciling !== row.reconciling) {
        await enqueueStateChanged(trx, after, row.state, ctx.presentContext());
      }
      return after;
    };
    return c.validateOnly ? db().transaction().execute(run) : ctx.write(run);
  }

  const respond = (row: EngineRow) => ({ [kind.resourceLocal]: present(row, ctx.presentContext()) });

  async function delete_(req: Req, hctx: HandlerContext) {
    const principal = principalOf(hctx);
    const t = parseName(req.name);
    policy.check(principal, Action.DELETE, kind.type, t.workspace);
    if (req.allowMissing === true) {
      const existing = await loadByName(db(), t.name);
      if (!existing || !canSee(policy, principal, existing)) return {};
    }
    const row = await change(req, hctx, {
      action: "delete",
      permission: Action.DELETE,
      validateOnly: req.validateOnly === true,
      intent: true,
      apply: (_row, now) => ({ desired: "DELETED", state: S.DELETING, delete_time: now, launched_at: null }),
    });
    return respond(row);
  }

  async function pause(req: Req, hctx: HandlerContext) {
    return respond(
      await change(req, hctx, {
        action: "pause",
        permission: Action.PAUSE,
        validateOnly: req.validateOnly === true,
        intent: true,
        apply: () => ({ desired: "PAUSED", state: S.PAUSING }),
      }),
    );
  }

  async function resume(req: Req, hctx: HandlerContext) {
    return respond(
      await change(req, hctx, {
        action: "resume",
        permission: Action.RESUME,
        validateOnly: req.validateOnly === true,
        intent: true,
        check: async (row, trx) => {
          const profile = currentProfile(row);
          if (profile) await checkQuotas(trx, row.creator, profile, undefined, { willRun: true, except: row.uid });
        },
        apply: (_row, now) => ({
          desired: "RUNNING",
          state: S.STARTING,
          start_time: now,
          launched_at: null,
          failure_message: "",
          failure_reason: "",
        }),
      }),
    );
  }

  async function terminate(req: Req, hctx: HandlerContext) {
    return respond(
      await change(req, hctx, {
        action: "terminate",
        permission: Action.TERMINATE,
        intent: true,
        apply: () => ({ desired: "TERMINATED", state: S.TERMINATING }),
      }),
    );
  }

  async function resizeStorage(req: Req, hctx: HandlerContext) {
    const requested = typeof req.newStorageBytes === "bigint" ? (req.newStorageBytes as bigint) : BigInt(req.newStorageBytes ?? 0);
    return respond(
      await change(req, hctx, {
        action: "resizeStorage",
        permission: Action.RESIZE_STORAGE,
        intent: true,
        activity: true,
        check: async (row, trx) => {
          if (row.storage_resizing) {
            throw failedPrecondition(`cannot resize the storage of ${quote(row.name)}: a resize is already running`, {
              type: "STATE",
              subject: row.name,
              description: "storage_resizing is true",
            });
          }
          if (requested <= row.storage_bytes) {
            throw invalidArgument("new_storage_bytes", `must be larger than the engine's storage_bytes (${row.storage_bytes}): storage only grows; got ${requested}`);
          }
          const profile = currentProfile(row) as DAIEngineProfile | NotebookEngineProfile | undefined;
          const c = profile?.storageBytesConstraint;
          if (c && (requested < c.min || (c.max !== undefined && requested > c.max))) {
            const range = c.max !== undefined ? `between ${c.min} and ${c.max}` : `at least ${c.min}`;
            throw invalidArgument("new_storage_bytes", `must be ${range} (the profile's storage_bytes_constraint), got ${requested}`);
          }
          if (profile) {
            await checkQuotas(trx, row.creator, profile, { ...resourcesOf(row), storageBytes: requested }, {
              willRun: false,
              except: row.uid,
              only: ["storage_bytes"],
            });
          }
        },
        apply: () => ({ storage_bytes: requested, storage_resizing: true }),
      }),
    );
  }

  async function upgradeVersion(req: Req, hctx: HandlerContext) {
    const target: string = req.newDaiEngineVersion ?? "";
    return respond(
      await change(req, hctx, {
        action: "upgradeVersion",
        permission: Action.UPGRADE_DAI_ENGINE_VERSION,
        activity: true,
        check: (row) => {
          if (target === "") throw requiredField("new_dai_engine_version");
          daiEngineVersionPattern.parse(target, "new_dai_engine_version");
          const v = usableVersion(target, "new_dai_engine_version") as DAIEngineVersion;
          if (compareVersions(idOf(v.name), row.version) <= 0) {
            throw invalidArgument("new_dai_engine_version", `${quote(v.name)} is not newer than the engine's version ${quote(row.version_name)}`);
          }
          return v;
        },
        apply: (row, _now, v) => {
          const resource = decodeStored(row) as DAIEngine;
          resource.daiEngineVersionInfo = v;
          return { version: idOf(v.name), version_name: v.name, resource: encodeResource(kind, resource) };
        },
      }),
    );
  }

  async function migrateCreator(req: Req, hctx: HandlerContext) {
    const newCreator: string = req.newCreator ?? "";
    return respond(
      await change(req, hctx, {
        action: "migrateCreator",
        permission: Action.MIGRATE_CREATOR,
        activity: true,
        check: () => {
          if (newCreator === "") throw requiredField("new_creator");
          if (!/^users\/[^/\s]{1,256}$/.test(newCreator)) throw invalidArgument("new_creator", `${quote(newCreator)} is not a user such as users/alice`);
        },
        apply: () => ({ creator: newCreator, creator_display_name: newCreator.slice("users/".length) }),
      }),
    );
  }

  async function downloadLogs(req: Req, hctx: HandlerContext) {
    const principal = principalOf(hctx);
    const t = parseName(req.name);
    policy.check(principal, Action.DOWNLOAD_LOGS, kind.type, t.workspace);
    const row = await mustLoad(db(), principal, t);
    checkManage(policy, principal, row);
    checkTransition(kind, "downloadLogs", row.name, row.state);
    if (row.state === S.RUNNING) ctx.activity.touch(row.uid);
    return { logs: { contentType: "text/plain; charset=utf-8", data: await ctx.runtime().logs(row.uid, MAX_LOG_BYTES) } };
  }

  async function access(req: Req, hctx: HandlerContext) {
    const principal = principalOf(hctx);
    const t = parseName(req.name);
    policy.check(principal, Action.ACCESS, kind.type, t.workspace);
    const row = await mustLoad(db(), principal, t);
    checkTransition(kind, "access", row.name, row.state);
    ctx.activity.touch(row.uid);
    return { uri: accessUri(row, ctx.publicUrl()) };
  }

  // ---- update ---------------------------------------------------------------------------------

  const SET_ELSEWHERE: Record<string, string> = {
    storage_bytes: "grows through :resizeStorage",
    dai_engine_version: "changes through :upgradeDAIEngineVersion",
    h2o_engine_version: "cannot be changed after create",
    notebook_image: "cannot be changed after create",
    shared: "is set on create only",
    name: "identifies the engine and cannot be changed",
    node_count: "cannot be changed after create",
  };

  function checkMask(paths: readonly string[] | undefined): string[] {
    for (const path of paths ?? []) {
      const reason = Object.hasOwn(SET_ELSEWHERE, path) ? SET_ELSEWHERE[path] : undefined;
      if (reason && !kind.updatable.includes(path) && kind.schema.fields.some((fd) => fd.name === path)) {
        throw invalidArgument("update_mask", `${quote(path)} ${reason}`);
      }
      const field = kind.schema.fields.find((fd) => fd.name === path);
      if (field && !kind.updatable.includes(path)) throw invalidArgument("update_mask", `${quote(path)} is set by the server and cannot be updated`);
    }
    return checkUpdateMask(paths, { allowed: kind.updatable });
  }

  async function update(req: Req, hctx: HandlerContext) {
    const principal = principalOf(hctx);
    const incoming = req[kind.resourceLocal] as (AnyEngine & Record<string, any>) | undefined;
    if (!incoming) throw requiredField(kind.resourceField);
    const t = parseName(incoming.name ?? "", f("name"));
    policy.check(principal, Action.UPDATE, kind.type, t.workspace);
    const paths = checkMask(req.updateMask?.paths);
    const validateOnly = req.validateOnly === true;

    if (req.allowMissing === true) {
      const existing = await loadByName(db(), t.name);
      if (!existing) {
        policy.check(principal, Action.CREATE, kind.type, t.workspace);
        return { [kind.resourceLocal]: await createEngine(principal, t, incoming, validateOnly) };
      }
    }

    const row = await change({ name: t.name }, hctx, {
      action: "update",
      permission: Action.UPDATE,
      validateOnly,
      activity: true,
      check: async (row, trx) => {
        const plan = planUpdate(row, incoming, paths, principal);
        if (plan.quotaFields.length > 0) {
          await checkQuotas(trx, row.creator, plan.profile, plan.resources, { willRun: false, except: row.uid, only: plan.quotaFields });
        }
        return plan;
      },
      apply: (_row, _now, plan) => plan.patch,
    });
    return respond(row);
  }

  function planUpdate(
    row: EngineRow,
    incoming: AnyEngine & Record<string, any>,
    paths: readonly string[],
    principal: Principal,
  ): { patch: Partial<EngineRow>; profile: AnyProfile; resources: Resources; quotaFields: string[] } {
    const has = (p: string) => paths.includes(p);
    const stored = decodeStored(row) as AnyEngine & Record<string, any>;
    const v = new Violations(kind.resourceField);
    const profileChanges = has("profile") && (incoming.profile ?? "") !== row.profile;
    const profile = profileChanges ? usableProfile(principal, incoming.profile ?? "") : (currentProfile(row) ?? (stored.profileInfo as AnyProfile));
    if (has("display_name")) checkDisplayName(v, incoming.displayName ?? "");
    if (has("annotations")) checkAnnotations(v, incoming.annotations ?? {});
    const pick = <T>(path: string, fromIncoming: T, current: T) => (has(path) ? fromIncoming : current);
    const requested: RequestedResources = {
      cpu: pick("cpu", incoming.cpu, row.cpu),
      gpu: pick("gpu", incoming.gpu, row.gpu),
      memoryBytes: pick("memory_bytes", incoming.memoryBytes, row.memory_bytes),
      storageBytes: kind.hasStorage ? row.storage_bytes : undefined,
      nodeCount: kind.hasNodeCount ? (row.node_count ?? undefined) : undefined,
      maxIdleDuration: pick("max_idle_duration", incoming.maxIdleDuration, durationFromMs(row.max_idle_ms)),
      maxRunningDuration: pick("max_running_duration", incoming.maxRunningDuration, durationFromMs(row.max_running_ms)),
    };
    const resources = resolveResources(kind, profile, requested, v, (field) => profileChanges || has(field));
    let config: Record<string, string> | undefined;
    if (kind.type === "daiEngines" && (has("config") || profileChanges)) {
      config = checkEngineConfig(v, profile as DAIEngineProfile, has("config") ? (incoming.config ?? {}) : (stored as DAIEngine).config);
    }
    v.throwIfAny();

    if (has("display_name")) stored.displayName = incoming.displayName ?? "";
    if (has("annotations")) stored.annotations = { ...incoming.annotations };
    if (config) stored.config = config;
    if (profileChanges) {
      stored.profileInfo = profile;
      if (kind.type === "daiEngines") (stored as DAIEngine).dataDirectoryStorageClass = (profile as DAIEngineProfile).dataDirectoryStorageClass;
    }
    if (kind.type === "notebookEngines") {
      stored.updater = principal.name;
      stored.updaterDisplayName = principal.displayName;
    }
    const quotaFields = profileChanges ? cumulativeTerms(kind, profile).map((term) => term.field) : ["cpu", "gpu", "memory_bytes"].filter(has);
    return {
      profile,
      resources,
      quotaFields,
      patch: {
        display_name: stored.displayName,
        profile: profile.name,
        cpu: resources.cpu,
        gpu: resources.gpu,
        memory_bytes: resources.memoryBytes,
        max_idle_ms: resources.maxIdleMs,
        max_running_ms: resources.maxRunningMs,
        resource: encodeResource(kind, stored),
      },
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
      return { h2oEngineSize: create(H2OEngineSizeSchema, size), limits: create(H2OEngineSizeLimitsSchema, req.limits) };
    };
    handlers["CalculateH2OEngineSizeRawDataset"] = async (req: Req, hctx: HandlerContext) => {
      principalOf(hctx);
      const size = rawDatasetSize(BigInt(req.datasetSizeBytes ?? 0), req.limits);
      return { h2oEngineSize: create(H2OEngineSizeSchema, size), limits: create(H2OEngineSizeLimitsSchema, req.limits) };
    };
  }
  return handlers;
}
