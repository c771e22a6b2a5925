// A version's aliases (`latest`, `stable`): unique in their workspace, so giving one to a version
// takes it from the version that held it, which is republished without it.
import { sql } from "kysely";
import { validateAlias } from "@aiem/kit/aip";
import type { Principal } from "@aiem/kit/identity";
import type { CatalogueResource, KindDescriptor } from "./kinds.js";
import { mustLoad, type Target } from "./resource-lookup.js";
import { enqueueChanged, loadResource, stampUpdate, updateResource, type Executor } from "./store.js";
import { Violations } from "./validation.js";

/** Most aliases one version may hold. */
export const MAX_ALIASES = 64;

export function checkAliases(aliases: readonly string[]): string[] {
  const v = new Violations("");
  const unique = aliasesOf(aliases, v);
  v.throwIfAny();
  return unique;
}

/** The aliases without repeats, sorted, as the real service answers them; problems are added to `v`. */
export function aliasesOf(aliases: readonly string[], v: Violations): string[] {
  if (aliases.length > MAX_ALIASES) v.add("aliases", `may hold at most ${MAX_ALIASES} aliases`);
  aliases.forEach((alias, i) => {
    const problem = validateAlias(alias);
    if (problem) v.add(`aliases[${i}]`, problem);
  });
  return [...new Set(aliases)].sort();
}

/** Locks the versions of a workspace in name order, so concurrent alias changes cannot deadlock. */
export async function lockVersions(trx: Executor, d: KindDescriptor, workspace: string): Promise<void> {
  await sql`select 1 from ${sql.table(d.table)} where workspace = ${workspace} order by name for update`.execute(trx);
}

/**
 * Points `aliases` at version `id` (whose stored resource already lists them, or is about to):
 * each other version of the workspace holding one of them loses it and is republished, and the
 * alias rows of `id` become exactly `aliases`. The caller holds lockVersions.
 */
export async function takeAliases(
  trx: Executor,
  d: KindDescriptor,
  workspace: string,
  id: string,
  aliases: string[],
  principal: Principal,
  now: Date,
): Promise<number> {
  const taken =
    aliases.length === 0
      ? []
      : ((await trx
          .selectFrom("version_aliases")
          .select(["alias", "version_id"])
          .where("kind", "=", d.kind)
          .where("workspace", "=", workspace)
          .where("alias", "in", aliases)
          .where("version_id", "<>", id)
          .execute()) as Array<{ alias: string; version_id: string }>);
  const losers = new Map<string, string[]>();
  for (const row of taken) losers.set(row.version_id, [...(losers.get(row.version_id) ?? []), row.alias]);
  for (const [loserId, lost] of losers) {
    const loser = (await loadResource(trx, d, workspace, loserId)) as
      | (CatalogueResource & { aliases: string[] })
      | undefined;
    if (!loser) continue;
    loser.aliases = loser.aliases.filter((a) => !lost.includes(a));
    stampUpdate(loser, principal, now);
    await updateResource(trx, d, workspace, loserId, loser);
    await enqueueChanged(trx, d, workspace, loserId, loser, now);
  }
  await trx
    .deleteFrom("version_aliases")
    .where("kind", "=", d.kind)
    .where("workspace", "=", workspace)
    .where((eb) => eb.or([eb("version_id", "=", id), ...(aliases.length ? [eb("alias", "in", aliases)] : [])]))
    .execute();
  if (aliases.length > 0) {
    await trx
      .insertInto("version_aliases")
      .values(aliases.map((alias) => ({ kind: d.kind, workspace, alias, version_id: id })))
      .execute();
  }
  return losers.size;
}

/**
 * Gives the version exactly `aliases`; an alias another version of the workspace holds moves
 * here, and that version is republished without it. The versions of the workspace are locked in
 * name order first, so concurrent assignments cannot deadlock.
 */
export async function assignAliases(
  trx: Executor,
  d: KindDescriptor,
  t: Target,
  aliases: string[],
  principal: Principal,
  now: Date,
): Promise<void> {
  await lockVersions(trx, d, t.workspace);
  const { id, resource } = await mustLoad(trx, d, t);
  const version = resource as CatalogueResource & { aliases: string[] };
  const same = version.aliases.length === aliases.length && version.aliases.every((a, i) => a === aliases[i]);
  const moved = await takeAliases(trx, d, t.workspace, id, aliases, principal, now);
  if (same && moved === 0) return;
  version.aliases = aliases;
  stampUpdate(version, principal, now);
  await updateResource(trx, d, t.workspace, id, version);
  await enqueueChanged(trx, d, t.workspace, id, version, now);
}
