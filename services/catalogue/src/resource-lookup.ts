// Finding the resource a request names: its name parsed into workspace and id, a version's alias
// resolved to the version it stands for.
import { isAlias } from "@aiem/kit/aip";
import { notFound } from "@aiem/kit/errors";
import type { CatalogueResource, KindDescriptor } from "./kinds.js";
import { loadResource, type Executor } from "./store.js";

export interface Target {
  readonly workspace: string;
  /** The id segment as given: a version id, or for versions possibly an alias. */
  readonly segment: string;
  readonly name: string;
}

export function parseName(d: KindDescriptor, name: string, field: string): Target {
  const parts = d.pattern.parse(name, field) as Record<string, string>;
  return { workspace: parts.workspace!, segment: parts[d.idVar]!, name };
}

/** The version id an alias stands for, or the segment itself when it is not an alias. */
export async function resolveVersionId(
  exec: Executor,
  d: KindDescriptor,
  workspace: string,
  segment: string,
): Promise<string | undefined> {
  if (d.family !== "version" || !isAlias(segment)) return segment;
  const row = (await exec
    .selectFrom("version_aliases")
    .select("version_id")
    .where("kind", "=", d.kind)
    .where("workspace", "=", workspace)
    .where("alias", "=", segment)
    .executeTakeFirst()) as { version_id: string } | undefined;
  return row?.version_id;
}

/** Loads the resource a request names (aliases resolved), or throws NOT_FOUND with that name. */
export async function mustLoad(
  exec: Executor,
  d: KindDescriptor,
  t: Target,
  forUpdate = false,
): Promise<{ id: string; resource: CatalogueResource }> {
  const id = await resolveVersionId(exec, d, t.workspace, t.segment);
  const resource = id === undefined ? undefined : await loadResource(exec, d, t.workspace, id, { forUpdate });
  if (!resource || id === undefined) throw notFound(t.name, d.resourceType);
  return { id, resource };
}
