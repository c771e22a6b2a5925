// Generic persistence of catalogue resources: one table per kind (see migrations.ts), typed
// columns computed from the resource by the kind's descriptor, the resource itself as protobuf
// bytes. Every function takes the executor it runs on, so writers pass their transaction.
import { randomUUID } from "node:crypto";
import type { AnyDatabase } from "@aiem/kit/db";
import {
  create,
  fromBinary,
  getOption,
  toBinary,
  type DescField,
  type DescMessage,
  type MessageInitShape,
} from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { sql, type Kysely, type Transaction } from "kysely";
import type { FieldSpec, FieldTable, Tiebreaker } from "@aiem/kit/aip";
import { enqueue } from "@aiem/kit/events";
import { catalogueSubject } from "@aiem/kit/events";
import type { Principal } from "@aiem/kit/identity";
import { FieldBehavior, field_behavior } from "@aiem/proto/google/api/field_behavior_pb.js";
import {
  CatalogueResourceChangedSchema,
  CatalogueResourceDeletedSchema,
} from "@aiem/proto/enginemanager/events/v1/catalogue_events_pb.js";
import { EventSchema } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import { ALL_KINDS, type CatalogueResource, type KindDescriptor } from "./kinds.js";

export type Executor = Kysely<AnyDatabase> | Transaction<AnyDatabase>;

/** The name of the service in events' `source`. */
export const EVENT_SOURCE = "catalogue";

// ---- field behaviours ---------------------------------------------------------------------------

const behaviourCache = new WeakMap<DescMessage, Map<string, FieldBehavior[]>>();

/** The google.api.field_behavior values of each field of a message, by proto (snake_case) name. */
export function fieldBehaviours(schema: DescMessage): Map<string, FieldBehavior[]> {
  let map = behaviourCache.get(schema);
  if (!map) {
    map = new Map(schema.fields.map((f) => [f.name, getOption(f, field_behavior)]));
    behaviourCache.set(schema, map);
  }
  return map;
}

export function fieldsWith(schema: DescMessage, behaviour: FieldBehavior): string[] {
  return [...fieldBehaviours(schema)].filter(([, b]) => b.includes(behaviour)).map(([name]) => name);
}

function fieldByName(schema: DescMessage, name: string): DescField {
  const field = schema.fields.find((f) => f.name === name);
  if (!field) throw new Error(`${schema.typeName} has no field ${name}`);
  return field;
}

/** Clears what clients may not set (AIP-203: output-only values sent back are ignored). */
export function clearOutputOnly(schema: DescMessage, message: Record<string, unknown>): void {
  const defaults = create(schema) as Record<string, unknown>;
  for (const name of fieldsWith(schema, FieldBehavior.OUTPUT_ONLY)) {
    const local = fieldByName(schema, name).localName;
    message[local] = defaults[local];
  }
}

/** Copies the fields named by mask paths (top-level snake_case names) from `from` onto `to`. */
export function applyPaths(
  schema: DescMessage,
  to: Record<string, unknown>,
  from: Record<string, unknown>,
  paths: readonly string[],
): void {
  for (const path of paths) {
    const local = fieldByName(schema, path).localName;
    to[local] = from[local];
  }
}

// ---- rows ---------------------------------------------------------------------------------------

/** The filter/order table of a kind: name, create_time, update_time and its public columns. */
export function fieldTableOf(d: KindDescriptor): FieldTable {
  const table: Record<string, FieldSpec> = {
    name: { type: "string", sql: sql.ref("name") },
  };
  for (const c of d.columns) {
    if (!c.field || c.type === "text[]") continue;
    table[c.field] = { type: c.type, sql: sql.ref(c.column), nullable: c.nullable, durationUnit: c.durationUnit };
  }
  table.create_time = { type: "timestamp", sql: sql.ref("create_time") };
  table.update_time = { type: "timestamp", sql: sql.ref("update_time") };
  // Versions sort by their number (1.11.10 after 1.11.4.1), which no text order of ids gives.
  if (d.family === "version") table.version = { type: "string", sql: sql.ref("version_key"), filterable: false };
  return table;
}

/**
 * The order a list answers in when the caller names none, as the real service lists: profiles by
 * priority (lowest first), then name; versions newest version first; the rest newest first.
 */
export function defaultOrderOf(d: KindDescriptor): string | undefined {
  switch (d.family) {
    case "profile":
      return "priority, name";
    case "version":
      return "version desc";
    default:
      return undefined;
  }
}

/** Names are unique within a table, which makes them the tiebreaker of every order. */
export const nameTiebreaker: Tiebreaker = { name: "name", spec: { type: "string", sql: sql.ref("name") } };

interface Audited {
  createTime?: { seconds: bigint; nanos: number } | undefined;
  updateTime?: { seconds: bigint; nanos: number } | undefined;
  creator: string;
  updater: string;
  creatorDisplayName: string;
  updaterDisplayName: string;
}

/**
 * Server-set audit fields for a creation. A resource never updated has no `update_time` and an
 * empty `updater`, as the real service answers (its stored `update_time` column, for filters and
 * order, is the create time).
 */
export function stampCreate(resource: Audited, principal: Pick<Principal, "name" | "displayName">, now: Date): void {
  resource.createTime = timestampFromDate(now);
  resource.creator = principal.name;
  resource.creatorDisplayName = principal.displayName;
  resource.updateTime = undefined;
  resource.updater = "";
  resource.updaterDisplayName = "";
}

export function stampUpdate(resource: Audited, principal: Pick<Principal, "name" | "displayName">, now: Date): void {
  resource.updateTime = timestampFromDate(now);
  resource.updater = principal.name;
  resource.updaterDisplayName = principal.displayName;
}

function rowOf(d: KindDescriptor, workspace: string, id: string, r: CatalogueResource): Record<string, unknown> {
  const row: Record<string, unknown> = {
    workspace,
    id,
    name: r.name,
    create_time: timestampDate(r.createTime!),
    update_time: timestampDate(r.updateTime ?? r.createTime!),
    resource: toBinary(d.schema, r as never),
  };
  for (const c of d.columns) row[c.column] = c.value(r as never);
  return row;
}

// Arrays go in as an ARRAY[] of bound texts; PGlite and pg agree on that form.
function columnValue(value: unknown): unknown {
  if (Array.isArray(value))
    return value.length === 0 ? sql`'{}'::text[]` : sql`ARRAY[${sql.join(value as string[])}]::text[]`;
  return value;
}

function sqlRow(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, columnValue(v)]));
}

export function decode(d: KindDescriptor, bytes: Uint8Array): CatalogueResource {
  return fromBinary(d.schema, bytes) as CatalogueResource;
}

/** The resource as clients see it. */
export function present(d: KindDescriptor, r: CatalogueResource): CatalogueResource {
  return d.present ? (d.present as (x: CatalogueResource) => CatalogueResource)(r) : r;
}

export async function loadResource(
  exec: Executor,
  d: KindDescriptor,
  workspace: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<CatalogueResource | undefined> {
  let q = exec.selectFrom(d.table).select("resource").where("workspace", "=", workspace).where("id", "=", id);
  if (options.forUpdate) q = q.forUpdate();
  const row = (await q.executeTakeFirst()) as { resource: Uint8Array } | undefined;
  return row ? decode(d, row.resource) : undefined;
}

/** Inserts a new resource; false when the id is taken. */
export async function insertResource(
  trx: Executor,
  d: KindDescriptor,
  workspace: string,
  id: string,
  r: CatalogueResource,
): Promise<boolean> {
  const result = await trx
    .insertInto(d.table)
    .values(sqlRow(rowOf(d, workspace, id, r)))
    .onConflict((oc) => oc.doNothing())
    .returning("id")
    .executeTakeFirst();
  return result !== undefined;
}

export async function updateResource(
  trx: Executor,
  d: KindDescriptor,
  workspace: string,
  id: string,
  r: CatalogueResource,
): Promise<void> {
  const { workspace: _w, id: _i, ...values } = rowOf(d, workspace, id, r);
  await trx.updateTable(d.table).set(sqlRow(values)).where("workspace", "=", workspace).where("id", "=", id).execute();
}

/** Deletes a resource; false when there was none. */
export async function deleteResource(
  trx: Executor,
  d: KindDescriptor,
  workspace: string,
  id: string,
): Promise<boolean> {
  const result = await trx
    .deleteFrom(d.table)
    .where("workspace", "=", workspace)
    .where("id", "=", id)
    .returning("id")
    .executeTakeFirst();
  return result !== undefined;
}

// ---- events -------------------------------------------------------------------------------------

/** Records one event on a resource's replication subject, in the writer's transaction. */
async function enqueueEvent(
  trx: Executor,
  subject: string,
  now: Date,
  payload: MessageInitShape<typeof EventSchema>["payload"],
  tombstone = false,
): Promise<void> {
  const id = randomUUID();
  const event = create(EventSchema, { id, time: timestampFromDate(now), source: EVENT_SOURCE, payload });
  await enqueue(trx, { id, subject, data: toBinary(EventSchema, event), tombstone });
}

/** Records the resource's full current state on its replication subject, in the writer's transaction. */
export async function enqueueChanged(
  trx: Executor,
  d: KindDescriptor,
  workspace: string,
  id: string,
  r: CatalogueResource,
  now: Date,
): Promise<void> {
  await enqueueEvent(trx, catalogueSubject(d.kind, workspace, id), now, {
    case: "catalogueResourceChanged",
    value: create(CatalogueResourceChangedSchema, { resource: { case: d.eventCase, value: present(d, r) } as never }),
  });
}

/** Records a deletion as a tombstone on the resource's subject. */
export async function enqueueDeleted(
  trx: Executor,
  d: KindDescriptor,
  workspace: string,
  id: string,
  name: string,
  now: Date,
): Promise<void> {
  const payload = {
    case: "catalogueResourceDeleted",
    value: create(CatalogueResourceDeletedSchema, { name }),
  } as const;
  await enqueueEvent(trx, catalogueSubject(d.kind, workspace, id), now, payload, true);
}

/**
 * Records every resource's current state on its replication subject again. The in-process bus
 * starts empty with each process, so after a restart the read models of the engine and sandbox
 * services would see nothing; NATS keeps the stream and needs no replay.
 */
export async function republishAll(trx: Executor, now: Date): Promise<number> {
  let count = 0;
  for (const d of ALL_KINDS) {
    const rows = (await trx.selectFrom(d.table).select(["workspace", "id", "resource"]).execute()) as {
      workspace: string;
      id: string;
      resource: Uint8Array;
    }[];
    for (const row of rows) {
      await enqueueChanged(trx, d, row.workspace, row.id, decode(d, row.resource), now);
      count++;
    }
  }
  return count;
}
