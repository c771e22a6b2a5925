// Persistence of engines: the row, how it becomes the resource clients see (live durations, URLs,
// upgrade availability and disk sizes are computed when read), the filter/sort field tables, and
// the state-change events written to the outbox in the same transaction as the change.
import { randomUUID } from "node:crypto";
import type { AnyDatabase } from "@aiem/kit/db";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate, type Duration } from "@bufbuild/protobuf/wkt";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { sql, type Expression, type Kysely, type Transaction } from "kysely";
import type { FieldSpec, FieldTable, Tiebreaker } from "@aiem/kit/aip";
import { engineStateSubject, enqueue } from "@aiem/kit/events";
import type { CatalogueReadModel } from "@aiem/kit/catalogue-view";
import { EngineStateChangedSchema } from "@aiem/proto/enginemanager/events/v1/engine_events_pb.js";
import { EventSchema } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import type { DAIEngine } from "@aiem/proto/enginemanager/v1/dai_engine_pb.js";
import { Engine_StateSchema, EngineSchema, type Engine } from "@aiem/proto/enginemanager/v1/engine_pb.js";
import type { H2OEngine } from "@aiem/proto/enginemanager/v1/h2o_engine_pb.js";
import {
  NotebookEngine_FailureReasonSchema,
  type NotebookEngine,
} from "@aiem/proto/enginemanager/v1/notebook_engine_pb.js";
import {
  ENGINE_STATE_NAMES,
  KIND_BY_TYPE,
  S,
  stateNames,
  stateNumber,
  type AnyEngine,
  type Desired,
  type EngineKind,
  type EngineType,
} from "./kinds.js";
import { compareVersions, idOf, workspaceNameOf } from "./semver.js";

export type Executor = Kysely<AnyDatabase> | Transaction<AnyDatabase>;

/** The service name in events' `source`. */
export const EVENT_SOURCE = "engine";

export interface EngineRow {
  uid: string;
  type: EngineType;
  workspace: string;
  engine_id: string;
  name: string;
  display_name: string;
  creator: string;
  creator_display_name: string;
  profile: string;
  version: string;
  version_name: string;
  state: string;
  desired: Desired;
  reconciling: boolean;
  shared: boolean;
  cpu: number;
  gpu: number;
  memory_bytes: bigint;
  storage_bytes: bigint;
  node_count: number | null;
  max_idle_ms: bigint;
  max_running_ms: bigint;
  create_time: Date;
  update_time: Date;
  delete_time: Date | null;
  resume_time: Date | null;
  last_activity_time: Date | null;
  start_time: Date | null;
  launched_at: Date | null;
  failure_reason: string;
  failure_message: string;
  storage_resizing: boolean;
  total_disk_bytes: bigint | null;
  free_disk_bytes: bigint | null;
  generation: bigint;
  next_reconcile_at: Date | null;
  lease_owner: string | null;
  lease_until: Date | null;
  placement: string | null;
  resource: Uint8Array;
}

export const ENGINES = "engines";

/** What turning a row into a resource needs besides the row. */
export interface PresentContext {
  readonly now: Date;
  /** Base URL of the product (no trailing slash), for `api_url`. */
  readonly publicUrl: string;
  /** Where a browser opens an engine (its own origin, or its path with AIEM_PATH_URLS): `login_url`. */
  readonly engineUrl: (uid: string) => string;
  readonly catalogue: CatalogueReadModel | undefined;
  /** Activity through engine URLs not written to the database yet. */
  readonly pendingActivity?: (uid: string) => Date | undefined;
}

/** When the engine was last active, counting activity not yet written. */
function lastActive(row: EngineRow, ctx: PresentContext): Date | null {
  const pending = ctx.pendingActivity?.(row.uid);
  const stored = row.last_activity_time ?? row.resume_time;
  if (!pending) return stored;
  return !stored || pending > stored ? pending : stored;
}

export function durationFromMs(ms: bigint | number): Duration {
  const n = BigInt(ms);
  return create(DurationSchema, { seconds: n / 1000n, nanos: Number(n % 1000n) * 1_000_000 });
}

/** The base path engine traffic takes through the edge. */
export function enginePath(uid: string): string {
  return `/engines/${uid}/`;
}

/** DAI reports disk sizes from 1.10.6 on (spec section 3). */
export const DISK_SIZES_SINCE = "1.10.6";

function elapsed(now: Date, since: Date | null): Duration | undefined {
  if (!since) return undefined;
  return durationFromMs(Math.max(0, now.getTime() - since.getTime()));
}

/** True when a newer, non-deprecated version than `versionName` exists in its workspace. */
export function upgradeAvailable(
  catalogue: CatalogueReadModel | undefined,
  kind: "daiEngineVersions" | "h2oEngineVersions",
  versionName: string,
): boolean {
  if (!catalogue) return false;
  const current = idOf(versionName);
  return catalogue
    .list(kind, workspaceNameOf(versionName))
    .some((v) => !v.deprecated && compareVersions(idOf(v.name), current) > 0);
}

/** The data disk's sizes, which Driverless AI engines report from DISK_SIZES_SINCE while they run. */
function diskSizes(row: EngineRow): { totalDiskSizeBytes?: bigint; freeDiskSizeBytes?: bigint } {
  const sized =
    row.type === "daiEngines" &&
    row.state === S.RUNNING &&
    compareVersions(row.version, DISK_SIZES_SINCE) >= 0 &&
    row.total_disk_bytes !== null;
  if (!sized) return {};
  return { totalDiskSizeBytes: row.total_disk_bytes!, freeDiskSizeBytes: row.free_disk_bytes ?? undefined };
}

/** Where each kind's login URL leads below its name path: H2O Flow's page, Driverless AI's sign-in. */
const LOGIN_PATHS = { h2oEngines: "/flow/index.html", daiEngines: "/oidc/login" } as const;

/**
 * A DAI or H2O engine's URLs, from its creation on, in the real service's shape: the engine's
 * name is its context path (`/workspaces/<ws>/{daiEngines,h2oEngines}/<id>`, which the proxy's
 * name route serves). `api_url`, the root its client libraries take (`h2o.connect(url=...)`, the
 * `driverlessai` client's address), is on the API's origin for programs sending a bearer token;
 * `login_url`, the page a person opens, is the same path at the engine's own origin, where a
 * browser may open it (docs/adr/0210).
 */
export function nameUrls(
  row: Pick<EngineRow, "uid" | "name" | "type">,
  ctx: PresentContext,
): { apiUrl: string; loginUrl: string } {
  const loginPath = row.type === "daiEngines" ? LOGIN_PATHS.daiEngines : LOGIN_PATHS.h2oEngines;
  return {
    apiUrl: `${ctx.publicUrl}/${row.name}`,
    loginUrl: `${new URL(ctx.engineUrl(row.uid)).origin}/${row.name}${loginPath}`,
  };
}

/** The engine as its service returns it. */
export function present(row: EngineRow, ctx: PresentContext): AnyEngine {
  const kind = KIND_BY_TYPE[row.type];
  const e = fromBinary(kind.schema, row.resource) as AnyEngine & Record<string, unknown>;
  const running = row.state === S.RUNNING;
  e.name = row.name;
  e.uid = row.uid;
  e.creator = row.creator;
  e.creatorDisplayName = row.creator_display_name;
  e.displayName = row.display_name;
  e.profile = row.profile;
  e[kind.versionLocal] = row.version_name;
  e.state = stateNumber(kind.stateEnum, row.state);
  e.reconciling = row.reconciling;
  e.cpu = row.cpu;
  e.gpu = row.gpu;
  e.memoryBytes = row.memory_bytes;
  e.maxIdleDuration = durationFromMs(row.max_idle_ms);
  e.maxRunningDuration = durationFromMs(row.max_running_ms);
  e.createTime = timestampFromDate(row.create_time);
  e.updateTime = updateTimeOf(row);
  e.deleteTime = row.delete_time ? timestampFromDate(row.delete_time) : undefined;
  e.resumeTime = row.resume_time ? timestampFromDate(row.resume_time) : undefined;
  e.currentIdleDuration = running ? elapsed(ctx.now, lastActive(row, ctx)) : undefined;
  e.currentRunningDuration = running ? elapsed(ctx.now, row.resume_time) : undefined;
  e.failureMessage = row.state === S.FAILED || row.state === S.TERMINATED ? row.failure_message : "";
  if (kind.hasStorage) {
    (e as DAIEngine | NotebookEngine).storageBytes = row.storage_bytes;
    (e as DAIEngine | NotebookEngine).storageResizing = row.storage_resizing;
  }
  if (kind.hasNodeCount) (e as H2OEngine).nodeCount = row.node_count ?? 1;
  // `api_url` stays on the API's origin: programmatic clients (`h2o`, `driverlessai`) send a
  // bearer token there, and resolvers outside browsers often do not map `*.localhost`; see the
  // edge's content-origins.ts for what that origin serves under `/workspaces/`.
  switch (row.type) {
    case "daiEngines": {
      const d = e as DAIEngine;
      Object.assign(d, nameUrls(row, ctx));
      d.upgradeAvailable = upgradeAvailable(ctx.catalogue, "daiEngineVersions", row.version_name);
      Object.assign(d, diskSizes(row));
      break;
    }
    case "h2oEngines": {
      const h = e as H2OEngine;
      Object.assign(h, nameUrls(row, ctx));
      break;
    }
    case "notebookEngines": {
      const n = e as NotebookEngine;
      n.shared = row.shared;
      n.failureReason =
        row.state === S.FAILED ? stateNumber(NotebookEngine_FailureReasonSchema, row.failure_reason) : 0;
      break;
    }
  }
  return e;
}

/**
 * Whether `caller` may open the engine's web UI from the list, as the real service says it: their
 * own engines, every H2O engine they may list, and notebooks shared with them.
 */
export function visitableBy(row: Pick<EngineRow, "creator" | "type" | "shared">, caller: string): boolean {
  return row.creator === caller || row.type === "h2oEngines" || (row.type === "notebookEngines" && row.shared);
}

/** `update_time`: none until something changed the engine after its creation. */
function updateTimeOf(row: Pick<EngineRow, "create_time" | "update_time">) {
  return row.update_time.getTime() === row.create_time.getTime() ? undefined : timestampFromDate(row.update_time);
}

/** The row as an entry of the mixed Engine list, as `caller` sees it. */
export function presentMixed(row: EngineRow, ctx: PresentContext, caller: { name: string }): Engine {
  const kind = KIND_BY_TYPE[row.type];
  const running = row.state === S.RUNNING;
  const versionExists = ctx.catalogue ? ctx.catalogue.get(kind.versionKind, row.version_name) !== undefined : true;
  let deprecated = false;
  if (kind.versionKind !== "notebookEngineImages" && ctx.catalogue) {
    deprecated = ctx.catalogue.get(kind.versionKind, row.version_name)?.deprecated ?? false;
  }
  return create(EngineSchema, {
    name: row.name,
    uid: row.uid,
    type: kind.engineType,
    state: stateNumber(Engine_StateSchema, row.state),
    reconciling: row.reconciling,
    creator: row.creator,
    creatorDisplayName: row.creator_display_name,
    displayName: row.display_name,
    profile: row.profile,
    version: row.type === "notebookEngines" ? row.version_name : row.version,
    deprecatedVersion: deprecated,
    deletedVersion: !versionExists,
    visitable: visitableBy(row, caller.name),
    loginUrl: row.type === "notebookEngines" ? "" : nameUrls(row, ctx).loginUrl,
    cpu: row.cpu,
    gpu: row.gpu,
    memoryBytes: row.memory_bytes,
    storageBytes: kind.hasStorage ? row.storage_bytes : 0n,
    nodeCount: kind.hasNodeCount ? (row.node_count ?? 1) : undefined,
    maxIdleDuration: durationFromMs(row.max_idle_ms),
    maxRunningDuration: durationFromMs(row.max_running_ms),
    currentIdleDuration: running ? elapsed(ctx.now, lastActive(row, ctx)) : undefined,
    currentRunningDuration: running ? elapsed(ctx.now, row.resume_time) : undefined,
    createTime: timestampFromDate(row.create_time),
    updateTime: updateTimeOf(row),
    deleteTime: row.delete_time ? timestampFromDate(row.delete_time) : undefined,
    resumeTime: row.resume_time ? timestampFromDate(row.resume_time) : undefined,
    storageResizing: kind.hasStorage && row.storage_resizing,
    ...diskSizes(row),
    // Notebook engines have no annotations.
    annotations:
      row.type === "notebookEngines"
        ? {}
        : (fromBinary(kind.schema, row.resource) as DAIEngine | H2OEngine).annotations,
    upgradeAvailable:
      kind.versionKind === "notebookEngineImages"
        ? false
        : upgradeAvailable(ctx.catalogue, kind.versionKind, row.version_name),
  });
}

// ---- filter and sort fields ---------------------------------------------------------------------

// Live durations, in whole milliseconds, while the engine runs; NULL otherwise.
const idleMs = sql`(case when state = ${S.RUNNING} then floor(extract(epoch from (now() - coalesce(last_activity_time, resume_time))) * 1000)::bigint end)`;
const runningMs = sql`(case when state = ${S.RUNNING} then floor(extract(epoch from (now() - resume_time)) * 1000)::bigint end)`;

function commonFields(states: readonly string[]): Record<string, FieldSpec> {
  return {
    name: { type: "string", sql: sql.ref("name") },
    state: { type: "enum", sql: sql.ref("state"), enumValues: states },
    cpu: { type: "int", sql: sql.ref("cpu") },
    gpu: { type: "int", sql: sql.ref("gpu") },
    memory_bytes: { type: "int", sql: sql.ref("memory_bytes") },
    creator: { type: "string", sql: sql.ref("creator") },
    creator_display_name: { type: "string", sql: sql.ref("creator_display_name") },
    create_time: { type: "timestamp", sql: sql.ref("create_time") },
    update_time: { type: "timestamp", sql: sql.ref("update_time") },
    delete_time: { type: "timestamp", sql: sql.ref("delete_time"), nullable: true },
    resume_time: { type: "timestamp", sql: sql.ref("resume_time"), nullable: true },
    reconciling: { type: "bool", sql: sql.ref("reconciling") },
    uid: { type: "string", sql: sql.ref("uid") },
    display_name: { type: "string", sql: sql.ref("display_name") },
    max_idle_duration: { type: "duration", sql: sql.ref("max_idle_ms") },
    max_running_duration: { type: "duration", sql: sql.ref("max_running_ms") },
    current_idle_duration: { type: "duration", sql: idleMs, nullable: true },
    current_running_duration: { type: "duration", sql: runningMs, nullable: true },
  };
}

/** The fields a kind's list filters and sorts on (spec section 3, "Filter and sort fields"). */
export function kindFieldTable(kind: EngineKind): FieldTable {
  const table = commonFields(stateNames(kind));
  table[`${kind.idVar}_id`] = { type: "string", sql: sql.ref("engine_id") };
  if (kind.hasStorage) table.storage_bytes = { type: "int", sql: sql.ref("storage_bytes") };
  if (kind.hasNodeCount) table.node_count = { type: "int", sql: sql.ref("node_count"), nullable: true };
  return table;
}

/**
 * A DAI or H2O version id as text whose byte order is the version order, so `1.10.2` sorts after
 * `1.9.9` and `12` after `2`: each numeric segment as its digit count (two digits) and its digits,
 * then `#` for a release or `!` and the pre-release (`1.10.3-alpha` < `1.10.3` < `1.10.3.1`). The
 * catalogue orders its versions by the same key.
 */
const versionSortKey = sql`((select string_agg(lpad(length(s)::text, 2, '0') || s, '.' order by i) from unnest(string_to_array(split_part(version, '-', 1), '.')) with ordinality as segments(s, i)) || (case when strpos(version, '-') = 0 then '#' else '!' || substr(version, strpos(version, '-') + 1) end)) collate "C"`;

/** The mixed list's `type` values, as the Engine resource names them. */
export const ENGINE_TYPE_NAMES = ["TYPE_DRIVERLESS_AI", "TYPE_H2O", "TYPE_NOTEBOOK"] as const;

/** What the mixed list's fields read from the catalogue right now. */
export interface CatalogueVersions {
  /** The names of every deprecated DAI and H2O version. */
  readonly deprecated: readonly string[];
  /** The names of every DAI and H2O version and notebook image that exists. */
  readonly existing: readonly string[];
}

/**
 * The mixed list's fields: the common ones plus `type`, `engine_id`, `version`,
 * `deprecated_version` and `deleted_version`. Deprecation and deletion live in the catalogue, so
 * they are read from the version names it holds right now.
 */
export function mixedFieldTable(versions: CatalogueVersions): FieldTable {
  const table = commonFields(ENGINE_STATE_NAMES);
  table.type = {
    type: "enum",
    sql: sql`(case type when 'daiEngines' then 'TYPE_DRIVERLESS_AI' when 'h2oEngines' then 'TYPE_H2O' else 'TYPE_NOTEBOOK' end)`,
    enumValues: ENGINE_TYPE_NAMES,
  };
  table.deleted_version = {
    type: "bool",
    sql: versions.existing.length === 0 ? sql`true` : sql`(version_name not in (${sql.join(versions.existing)}))`,
  };
  const deprecatedVersionNames = versions.deprecated;
  // The official client documents `engine_id = "*e*"` for this list.
  table.engine_id = { type: "string", sql: sql.ref("engine_id") };
  table.storage_bytes = { type: "int", sql: sql.ref("storage_bytes") };
  table.version = {
    type: "string",
    sql: sql`(case when type = 'notebookEngines' then version_name else version end)`,
    orderSql: sql`(case when type = 'notebookEngines' then version_name else ${versionSortKey} end)`,
  };
  const deprecated: Expression<unknown> =
    deprecatedVersionNames.length === 0
      ? sql`false`
      : sql`(type <> 'notebookEngines' and version_name in (${sql.join(deprecatedVersionNames)}))`;
  table.deprecated_version = { type: "bool", sql: deprecated };
  return table;
}

/** uids are unique and never reused, which makes them the tiebreaker of every order. */
export const uidTiebreaker: Tiebreaker = { name: "uid", spec: { type: "string", sql: sql.ref("uid") } };

/**
 * The mixed list's tiebreaker: names are unique too, and engines the sort keys do not tell apart
 * come in name order, as the real service lists them.
 */
export const nameTiebreaker: Tiebreaker = { name: "name", spec: { type: "string", sql: sql.ref("name") } };

// ---- reads and writes ---------------------------------------------------------------------------

type LoadOptions = { forUpdate?: boolean };

export const loadByName = (exec: Executor, name: string, options: LoadOptions = {}) =>
  loadBy(exec, "name", name, options);

export const loadByUid = (exec: Executor, uid: string, options: LoadOptions = {}) => loadBy(exec, "uid", uid, options);

async function loadBy(
  exec: Executor,
  column: "name" | "uid",
  value: string,
  options: LoadOptions,
): Promise<EngineRow | undefined> {
  let q = exec.selectFrom(ENGINES).selectAll().where(column, "=", value);
  if (options.forUpdate) q = q.forUpdate();
  return (await q.executeTakeFirst()) as EngineRow | undefined;
}

/** Inserts a new engine; false when the name is taken. */
export async function insertEngine(trx: Executor, row: EngineRow): Promise<boolean> {
  const result = await trx
    .insertInto(ENGINES)
    .values(row)
    .onConflict((oc) => oc.column("name").doNothing())
    .returning("uid")
    .executeTakeFirst();
  return result !== undefined;
}

export async function updateEngine(trx: Executor, uid: string, patch: Partial<EngineRow>): Promise<void> {
  await trx.updateTable(ENGINES).set(patch).where("uid", "=", uid).execute();
}

export function encodeResource(kind: EngineKind, resource: AnyEngine): Uint8Array {
  return toBinary(kind.schema, resource);
}

// ---- events -------------------------------------------------------------------------------------

/**
 * Records an EngineStateChanged for `row` as it is after the change, in the writer's transaction.
 * `row` undefined with `deleted` reports a completed deletion.
 */
export async function enqueueStateChanged(
  trx: Executor,
  row: EngineRow,
  previousState: string | undefined,
  ctx: PresentContext,
  options: { deleted?: boolean } = {},
): Promise<void> {
  const kind = KIND_BY_TYPE[row.type];
  const eventId = randomUUID();
  const deleted = options.deleted === true;
  const snapshot = deleted ? undefined : present(row, ctx);
  const payload = create(EngineStateChangedSchema, {
    engine: row.name,
    uid: row.uid,
    type: kind.engineType,
    previousState: previousState ? stateNumber(Engine_StateSchema, previousState) : 0,
    state: deleted ? 0 : stateNumber(Engine_StateSchema, row.state),
    reconciling: deleted ? false : row.reconciling,
    creator: row.creator,
    failureMessage: !deleted && row.state === S.FAILED ? row.failure_message : "",
    snapshot: snapshot
      ? ({
          case: row.type === "daiEngines" ? "daiEngine" : row.type === "h2oEngines" ? "h2oEngine" : "notebookEngine",
          value: snapshot,
        } as never)
      : { case: undefined },
  });
  const event = create(EventSchema, {
    id: eventId,
    time: timestampFromDate(ctx.now),
    source: EVENT_SOURCE,
    payload: { case: "engineStateChanged", value: payload },
  });
  await enqueue(trx, {
    id: eventId,
    subject: engineStateSubject(row.workspace, row.engine_id),
    data: toBinary(EventSchema, event),
  });
}
