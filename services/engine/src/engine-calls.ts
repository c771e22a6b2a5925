// What the handlers of the DAI, H2O and notebook engine services share, once per kind: parsing
// names, loading an engine the caller may see, the catalogue references a request names, the
// caller's quotas, and the one transaction every state change runs in (checks on the locked row,
// the new intent, the state event).
import { fromBinary } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { sql } from "kysely";
import {
  daiEngineProfilePattern,
  daiEngineVersionPattern,
  h2oEngineProfilePattern,
  h2oEngineVersionPattern,
  notebookEngineImagePattern,
  notebookEngineProfilePattern,
  type ResourcePattern,
} from "@aiem/kit/aip";
import type { Action } from "@aiem/kit/authz";
import {
  invalidArgument,
  invalidArgumentWorded,
  notFound,
  quote,
  requiredField,
  resourceExhausted,
} from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import { principalOf } from "@aiem/kit/server";
import { caughtUpFirst, isProfileAssignedTo } from "@aiem/kit/catalogue-view";
import type { DAIEngineVersion } from "@aiem/proto/enginemanager/v1/dai_engine_version_pb.js";
import type { NotebookEngineImage } from "@aiem/proto/enginemanager/v1/notebook_engine_image_pb.js";
import { canSee, checkManage } from "./access.js";
import type { ServiceContext } from "./context.js";
import { checkTransition, S, type AnyEngine, type EngineAction, type EngineKind } from "./kinds.js";
import {
  enqueueStateChanged,
  ENGINES,
  kindFieldTable,
  loadByName,
  present,
  type EngineRow,
  type Executor,
} from "./store.js";
import { cumulativeAmount, cumulativeTerms, type AnyProfile, type Resources } from "./validation.js";

/**
 * A request of any kind's call, read by the field names its kind descriptor holds
 * (`req[kind.idLocal]`); the handler maps are typed by each kind's service (engine-service.ts).
 */
// biome-ignore lint/suspicious/noExplicitAny: requests of every kind, their fields read by name from the kind descriptor
export type Req = Record<string, any>;

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

export interface Target {
  readonly workspace: string;
  readonly id: string;
  readonly name: string;
}

type VersionLike = DAIEngineVersion | NotebookEngineImage;

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

/** What every engine call of one kind shares: names, loading, catalogue references, quotas and the state-change transaction. */
export function createEngineCalls(ctx: ServiceContext, kind: EngineKind) {
  const { policy } = ctx;
  const fieldTable = kindFieldTable(kind);
  const db = () => ctx.database().db;
  const f = (field: string) => `${kind.resourceField}.${field}`;

  function parseName(name: string, field = "name"): Target {
    const parts = kind.pattern.parse(name, field) as Record<string, string>;
    return { workspace: parts.workspace!, id: parts[kind.idVar]!, name };
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
    // "<kind> <name> not found" is how the real service words it; clients compare the text.
    if (!profile) throw invalidArgument(field, `${singularOf(kind.profileKind)} ${name} not found`);
    if (!profile.enabled) throw invalidArgument(field, `${quote(name)} is disabled; choose an enabled profile`);
    // A profile assigned to roles the caller holds none of is hidden from them (the catalogue
    // answers 404), so it is named exactly as one that does not exist.
    if (!isProfileAssignedTo(profile, principal.roles))
      throw invalidArgument(field, `${singularOf(kind.profileKind)} ${name} not found`);
    return profile;
  }

  /**
   * The version (an alias resolved) or notebook image named in a request, usable for new engines.
   * `missing` is how the call words one the catalogue does not hold, as the real service does
   * (clients compare the text); by default "<field> <name> not found", as its create calls say.
   */
  function usableVersion(name: string, field: string, missing = missingVersion): VersionLike {
    if (name === "") throw requiredField(field);
    VERSION_PATTERNS[kind.type].parse(name, field);
    const found = ctx.catalogue().get(kind.versionKind, name) as VersionLike | undefined;
    if (!found) throw invalidArgumentWorded(field, missing(name));
    if (kind.versionKind === "notebookEngineImages") {
      if (!(found as NotebookEngineImage).enabled)
        throw invalidArgument(field, `${quote(found.name)} is disabled; choose an enabled image`);
    } else if ((found as DAIEngineVersion).deprecated) {
      throw invalidArgument(field, `${quote(found.name)} is deprecated; choose a version that is not`);
    }
    return found;
  }

  function missingVersion(name: string): string {
    return `${kind.type === "notebookEngines" ? "notebookImage" : kind.versionField} ${name} not found`;
  }

  /**
   * `lookup`'s result, where `lookup` reads catalogue references from the local copy: when it
   * throws, the copy first catches up with the catalogue stream and it runs again, so a reference
   * the catalogue acknowledged before this call is never answered as missing or unusable.
   */
  function withCatalogue<T>(lookup: () => T): Promise<T> {
    let view: ReturnType<typeof ctx.catalogue> | undefined;
    try {
      view = ctx.catalogue();
    } catch {
      view = undefined;
    }
    return caughtUpFirst(view, lookup);
  }

  /**
   * Lets the copy catch up when `lookup` fails, and nothing more: for checks that run later inside
   * a transaction, which should not wait there, and answer for themselves.
   */
  async function catchUpFor(lookup: () => unknown): Promise<void> {
    await withCatalogue(lookup).catch(() => {});
  }

  /** The engine's profile now: from the catalogue when it still exists, else the copy the engine keeps. */
  function currentProfile(row: EngineRow): AnyProfile | undefined {
    const fromCatalogue = ctx.catalogue().get(kind.profileKind, row.profile) as AnyProfile | undefined;
    return fromCatalogue ?? (decodeStored(row) as { profileInfo?: AnyProfile }).profileInfo;
  }

  /** The stored resource: what the row's columns do not hold (copies, config, annotations). */
  // biome-ignore lint/suspicious/noExplicitAny: an engine of any kind, its fields read by name from the kind descriptor
  function decodeStored(row: EngineRow): AnyEngine & Record<string, any> {
    // biome-ignore lint/suspicious/noExplicitAny: an engine of any kind, its fields read by name from the kind descriptor
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
      .execute()) as Array<
      Pick<
        EngineRow,
        "uid" | "type" | "cpu" | "gpu" | "memory_bytes" | "storage_bytes" | "node_count" | "state" | "desired"
      >
    >;
    const others = rows.filter((r) => r.uid !== options.except);
    if (options.willRun && profile.maxRunningEngines !== undefined) {
      const running = others.filter(
        (r) => r.desired === "RUNNING" && r.state !== S.FAILED && r.state !== S.TERMINATED,
      ).length;
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

  // ---- state changes --------------------------------------------------------------------------

  async function change<P = void>(req: Req, hctx: HandlerContext, c: Change<P>): Promise<EngineRow> {
    const principal = principalOf(hctx);
    const t = parseName(req.name);
    policy.check(principal, c.permission, kind.type, t.workspace);
    const run = async (trx: Executor): Promise<EngineRow> => {
      const row = await mustLoad(trx, principal, t, true);
      if (c.manage !== false) checkManage(policy, principal, row);
      checkTransition(kind, c.action, row.name, row.state);
      if (c.already?.(row)) return row;
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

  return {
    ctx,
    kind,
    policy,
    fieldTable,
    db,
    f,
    parseName,
    mustLoad,
    usableProfile,
    usableVersion,
    withCatalogue,
    catchUpFor,
    currentProfile,
    decodeStored,
    checkQuotas,
    resourcesOf,
    change,
    respond,
  };
}

export type EngineCalls = ReturnType<typeof createEngineCalls>;

/** `daiEngineProfiles` → `daiEngineProfile`: a catalogue kind as one of its resources is called. */
function singularOf(collection: string): string {
  return collection.endsWith("s") ? collection.slice(0, -1) : collection;
}
