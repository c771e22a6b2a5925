// The caller's quotas under a profile: its running engines (max_running_engines) and its totals
// across engines (the constraints' cumulative maximums).
import { sql } from "kysely";
import { quote, resourceExhausted } from "@aiem/kit/errors";
import { S, type EngineKind } from "./kinds.js";
import { ENGINES, type EngineRow, type Executor } from "./store.js";
import { cumulativeAmount, cumulativeTerms, type AnyProfile, type Resources } from "./validation.js";

const QUOTA_COLUMNS = [
  "uid",
  "type",
  "cpu",
  "gpu",
  "memory_bytes",
  "storage_bytes",
  "node_count",
  "state",
  "desired",
] as const;
type QuotaRow = Pick<EngineRow, (typeof QUOTA_COLUMNS)[number]>;

export interface QuotaOptions {
  /** The engine is to run: the caller's running engines are counted too. */
  readonly willRun: boolean;
  /** The engine being changed, whose old amounts do not count. */
  readonly except?: string;
  /** Only these constraint fields are checked (those a change touches). */
  readonly only?: readonly string[];
}

/**
 * Checks the caller's totals across their engines of `profile` (cumulative maximums) and, when
 * the engine is to run, their running engines (max_running_engines). Runs under a lock per user
 * and profile.
 */
export async function checkQuotas(
  trx: Executor,
  kind: EngineKind,
  creator: string,
  profile: AnyProfile,
  amounts: Resources | undefined,
  options: QuotaOptions,
): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`${creator}|${profile.name}`}))`.execute(trx);
  const rows = (await trx
    .selectFrom(ENGINES)
    .select([...QUOTA_COLUMNS])
    .where("creator", "=", creator)
    .where("profile", "=", profile.name)
    .execute()) as QuotaRow[];
  const others = rows.filter((r) => r.uid !== options.except);
  if (options.willRun) checkRunningEngines(others, creator, profile);
  if (amounts) checkCumulative(kind, others, creator, profile, amounts, options.only);
}

function checkRunningEngines(others: readonly QuotaRow[], creator: string, profile: AnyProfile): void {
  if (profile.maxRunningEngines === undefined) return;
  const running = others.filter(
    (r) => r.desired === "RUNNING" && r.state !== S.FAILED && r.state !== S.TERMINATED,
  ).length;
  if (running >= profile.maxRunningEngines) {
    throw resourceExhausted(
      `${creator} already runs ${running} engine(s) with the profile ${quote(profile.name)}, which allows ${profile.maxRunningEngines} (max_running_engines); pause or delete one first`,
    );
  }
}

function checkCumulative(
  kind: EngineKind,
  others: readonly QuotaRow[],
  creator: string,
  profile: AnyProfile,
  amounts: Resources,
  only: readonly string[] | undefined,
): void {
  const counted = others.filter((r) => r.desired !== "DELETED" && r.state !== S.TERMINATED);
  for (const term of cumulativeTerms(kind, profile)) {
    const max = term.constraint?.cumulativeMax;
    if (max === undefined || (only && !only.includes(term.field))) continue;
    const held = counted.reduce((sum, r) => sum + cumulativeAmount(kind, term.column, heldResources(r)), 0n);
    const asked = cumulativeAmount(kind, term.column, amounts);
    if (held + asked > max) {
      throw resourceExhausted(
        `${kind.resourceField}.${term.field}: the profile ${quote(profile.name)} allows ${creator} at most ${max} in total across their engines (${term.field}_constraint.cumulative_max); they hold ${held} and this asks for ${asked}`,
      );
    }
  }
}

function heldResources(r: QuotaRow): Resources {
  return {
    cpu: r.cpu,
    gpu: r.gpu,
    memoryBytes: r.memory_bytes,
    storageBytes: r.storage_bytes,
    nodeCount: r.node_count,
    maxIdleMs: 0n,
    maxRunningMs: 0n,
  };
}

export function resourcesOf(row: EngineRow): Resources {
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
