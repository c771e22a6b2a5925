// An engine-like table, its field table and deterministic rows, shared by the list tests and
// bench/kit-list.bench.ts. Test support only; services define their own tables.
import { type Kysely, sql } from "kysely";
import type { AnyDatabase } from "../db/index.js";
import type { FieldTable } from "./fields.js";
import type { Tiebreaker } from "./order-by.js";

export const ENGINE_STATES = [
  "STATE_UNSPECIFIED",
  "STATE_STARTING",
  "STATE_RUNNING",
  "STATE_PAUSING",
  "STATE_PAUSED",
  "STATE_FAILED",
  "STATE_DELETING",
] as const;

export interface EngineRow {
  id: string;
  workspace: string;
  dai_engine_id: string;
  name: string;
  display_name: string;
  state: string;
  cpu: number;
  gpu: number;
  memory_bytes: bigint;
  creator: string;
  /** RFC 3339 in UTC with exactly six fraction digits, so strings sort like times. */
  create_time: string;
  delete_time: string | null;
  reconciling: boolean;
  max_idle_ms: bigint;
}

export const engineFields: FieldTable = {
  name: { type: "string", sql: sql.ref("name") },
  dai_engine_id: { type: "string", sql: sql.ref("dai_engine_id") },
  display_name: { type: "string", sql: sql.ref("display_name") },
  state: { type: "enum", sql: sql.ref("state"), enumValues: ENGINE_STATES },
  cpu: { type: "int", sql: sql.ref("cpu") },
  gpu: { type: "int", sql: sql.ref("gpu") },
  memory_bytes: { type: "int", sql: sql.ref("memory_bytes") },
  creator: { type: "string", sql: sql.ref("creator") },
  create_time: { type: "timestamp", sql: sql.ref("create_time") },
  delete_time: { type: "timestamp", sql: sql.ref("delete_time"), nullable: true },
  reconciling: { type: "bool", sql: sql.ref("reconciling") },
  max_idle_duration: { type: "duration", sql: sql.ref("max_idle_ms") },
};

export const engineTiebreaker: Tiebreaker = { name: "id", spec: { type: "string", sql: sql.ref("id") } };

/** Creates the table (text in the "C" collation so JavaScript string order matches). */
export async function createEngineTable(db: Kysely<AnyDatabase>, table = "engines"): Promise<void> {
  await sql`
    create table ${sql.id(table)} (
      id text collate "C" primary key,
      workspace text collate "C" not null,
      dai_engine_id text collate "C" not null,
      name text collate "C" not null,
      display_name text collate "C" not null default '',
      state text not null,
      cpu integer not null,
      gpu integer not null,
      memory_bytes bigint not null,
      creator text collate "C" not null,
      create_time timestamptz not null,
      delete_time timestamptz,
      reconciling boolean not null,
      max_idle_ms bigint not null
    )`.execute(db);
  await sql`create index ${sql.id(`${table}_ws_ct`)} on ${sql.id(table)} (workspace, create_time, id)`.execute(db);
}

/** Small deterministic PRNG (mulberry32) so failures reproduce. */
export function createRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const AWKWARD_NAMES = [
  "100% sure",
  "100%",
  "1000 engines",
  "a_b",
  "axb",
  "a\\b",
  "x*y",
  "xy",
  "'; DROP TABLE engines; --",
  '" OR 1=1 --',
  "caf\u00e9",
  "",
  "e",
];

function isoMicros(epochMicros: bigint): string {
  const ms = epochMicros / 1000n;
  const base = new Date(Number(ms)).toISOString(); // ...sss Z
  return `${base.slice(0, 23)}${(epochMicros % 1000n).toString().padStart(3, "0")}Z`;
}

/**
 * `count` rows in `workspaces`, created over about two months. Create times have microsecond
 * parts and repeat in runs, so ties and sub-millisecond order are exercised.
 */
export function makeEngineRows(count: number, seed = 1, workspaces = ["w1", "w2"]): EngineRow[] {
  const rnd = createRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const start = 1_704_067_200_000_000n; // 2024-01-01T00:00:00Z in microseconds
  const rows: EngineRow[] = [];
  let t = start;
  for (let i = 0; i < count; i++) {
    if (rnd() > 0.2) t += BigInt(Math.floor(rnd() * 60_000_000_000 * (1000 / Math.max(count, 1000))) + 1);
    const workspace = pick(workspaces);
    const id = `e${i.toString().padStart(6, "0")}`;
    const display = rnd() < 0.3 ? pick(AWKWARD_NAMES) : `engine ${pick(["alpha", "beta", "gamma", "delta"])} ${i % 97}`;
    const deleted = rnd() < 0.25 ? isoMicros(t + BigInt(Math.floor(rnd() * 86_400_000_000))) : null;
    rows.push({
      id,
      workspace,
      dai_engine_id: id,
      name: `workspaces/${workspace}/daiEngines/${id}`,
      display_name: display,
      state: pick(ENGINE_STATES),
      cpu: 1 + Math.floor(rnd() * 8),
      gpu: Math.floor(rnd() * 3),
      memory_bytes: BigInt(1 + Math.floor(rnd() * 64)) * 1024n ** 3n,
      creator: pick(["users/alice", "users/bob", "users/carol"]),
      create_time: isoMicros(t),
      delete_time: deleted,
      reconciling: rnd() < 0.4,
      max_idle_ms: BigInt(pick([600, 1800, 3600, 7200, 86400])) * 1000n + (rnd() < 0.1 ? 500n : 0n),
    });
  }
  return rows;
}

/** Inserts rows in batches. */
export async function insertEngineRows(
  db: Kysely<AnyDatabase>,
  rows: readonly EngineRow[],
  table = "engines",
): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) {
    await db
      .insertInto(table)
      .values(rows.slice(i, i + 1000).map((r) => ({ ...r })))
      .execute();
  }
}
