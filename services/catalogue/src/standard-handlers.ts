// The standard methods of every catalogue kind: create, get, list, update and delete. Each parses
// its names, authorizes on the workspace, validates the rest, and makes its change in one
// transaction together with the event that replicates it.
import { clone } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { checkField, workspacePattern, type ListRequestFields } from "@aiem/kit/aip";
import { Action } from "@aiem/kit/authz";
import { alreadyExists, notFound, requiredField } from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import { principalOf } from "@aiem/kit/server";
import { generateId } from "./generated-id.js";
import {
  idOf,
  resourceOf,
  type CreateRequest,
  type KindScope,
  type NamedRequest,
  type UpdateRequest,
} from "./kind-scope.js";
import type { CatalogueResource } from "./kinds.js";
import { assertVisibleProfile, checkListsEveryProfile } from "./profile-handlers.js";
import { checkMask, prepare, validateResource } from "./resource-checks.js";
import { listPage } from "./resource-list.js";
import { mustLoad, parseName, resolveVersionId } from "./resource-lookup.js";
import { orEmpty } from "./service-context.js";
import {
  applyPaths,
  clearOutputOnly,
  defaultOrderOf,
  deleteResource,
  enqueueChanged,
  enqueueDeleted,
  insertResource,
  present,
  stampCreate,
  stampUpdate,
  updateResource,
} from "./store.js";
import { aliasesOf, lockVersions, takeAliases } from "./version-aliases.js";

export async function handleCreate(scope: KindScope, req: CreateRequest, ctx: HandlerContext) {
  const { context, d } = scope;
  const principal = principalOf(ctx);
  const { workspace } = workspacePattern.parse(req.parent, "parent");
  context.policy.check(principal, Action.CREATE, d.kind, workspace);
  const resource = clone(d.schema, orEmpty(d.schema, resourceOf(d, req))) as CatalogueResource;
  clearOutputOnly(d.schema, resource as never);
  const id = idOf(d, req);
  const generated = id === "" && d.generatedIdWord !== undefined;
  if (id === "" && !generated) throw requiredField(d.idField);
  if (!generated) checkField(d.idField, id, d.validateId);
  prepare(d, resource);
  // A version created with aliases takes them, from another version of the workspace if need
  // be, as :assignAliases would (the official client's configs declare them on create).
  const version = d.family === "version" ? (resource as CatalogueResource & { aliases: string[] }) : undefined;
  // The name is not part of validation, so a bad request fails before any id is generated.
  validateResource(d, resource, version && ((v) => (version.aliases = aliasesOf(version.aliases, v))));
  const now = context.now();
  stampCreate(resource, principal, now);
  return { [d.resourceLocal]: present(d, await insertNew(scope, { workspace, id, resource, principal, now })) };
}

/**
 * Inserts a validated new resource under `id`, or under a generated id when `id` is empty
 * (another on a collision, up to five tries), with the version aliases it lists.
 */
async function insertNew(
  { context, d }: KindScope,
  fresh: { workspace: string; id: string; resource: CatalogueResource; principal: Principal; now: Date },
): Promise<CatalogueResource> {
  const { workspace, resource, principal, now } = fresh;
  const generated = fresh.id === "";
  const aliases = d.family === "version" ? (resource as CatalogueResource & { aliases: string[] }).aliases : [];
  let id = fresh.id;
  for (let attempt = 0; ; attempt++) {
    if (generated) id = generateId(d.generatedIdWord!, (resource as { displayName?: string }).displayName ?? "");
    resource.name = d.pattern.format({ workspace, [d.idVar]: id });
    const inserted = await context.write(async (trx) => {
      if (aliases.length > 0) await lockVersions(trx, d, workspace);
      if (!(await insertResource(trx, d, workspace, id, resource))) return false;
      if (aliases.length > 0) await takeAliases(trx, d, workspace, id, aliases, principal, now);
      await enqueueChanged(trx, d, workspace, id, resource, now);
      return true;
    });
    if (inserted) return resource;
    if (!generated || attempt >= 4) throw alreadyExists(resource.name, d.resourceType);
  }
}

export async function handleGet({ context, d }: KindScope, req: NamedRequest, ctx: HandlerContext) {
  const t = parseName(d, req.name, "name");
  const principal = principalOf(ctx);
  context.policy.check(principal, Action.GET, d.kind, t.workspace);
  const { resource } = await mustLoad(context.database().db, d, t);
  assertVisibleProfile(context.policy, d, principal, resource, t.name);
  return { [d.resourceLocal]: present(d, resource) };
}

export async function handleList(scope: KindScope, req: ListRequestFields, ctx: HandlerContext) {
  const { context, d } = scope;
  const { workspace } = workspacePattern.parse(req.parent, "parent");
  const principal = principalOf(ctx);
  context.policy.check(principal, Action.LIST, d.kind, workspace);
  checkListsEveryProfile(context.policy, d, principal, workspace);
  const query = context.database().db.selectFrom(d.table).select("resource").where("workspace", "=", workspace);
  return listPage(scope, query, {
    parent: req.parent,
    pageSize: req.pageSize,
    pageToken: req.pageToken,
    filter: req.filter,
    orderBy: req.orderBy,
    defaultOrderBy: defaultOrderOf(d),
    scope: d.kind,
  });
}

export async function handleUpdate({ context, d }: KindScope, req: UpdateRequest, ctx: HandlerContext) {
  const principal = principalOf(ctx);
  const incoming = resourceOf(d, req);
  if (!incoming) throw requiredField(d.resourceField);
  const t = parseName(d, incoming.name, `${d.resourceField}.name`);
  context.policy.check(principal, Action.UPDATE, d.kind, t.workspace);
  const paths = checkMask(d, req.updateMask?.paths);
  const now = context.now();
  const updated = await context.write(async (trx) => {
    const { id, resource } = await mustLoad(trx, d, t, true);
    applyPaths(d.schema, resource as never, incoming as never, paths);
    prepare(d, resource);
    validateResource(d, resource);
    stampUpdate(resource, principal, now);
    await updateResource(trx, d, t.workspace, id, resource);
    await enqueueChanged(trx, d, t.workspace, id, resource, now);
    return resource;
  });
  return { [d.resourceLocal]: present(d, updated) };
}

export async function handleDelete({ context, d }: KindScope, req: NamedRequest, ctx: HandlerContext) {
  const t = parseName(d, req.name, "name");
  context.policy.check(principalOf(ctx), Action.DELETE, d.kind, t.workspace);
  const now = context.now();
  await context.write(async (trx) => {
    const id = await resolveVersionId(trx, d, t.workspace, t.segment);
    if (id === undefined || !(await deleteResource(trx, d, t.workspace, id))) throw notFound(t.name, d.resourceType);
    if (d.family === "version") {
      await trx
        .deleteFrom("version_aliases")
        .where("kind", "=", d.kind)
        .where("workspace", "=", t.workspace)
        .where("version_id", "=", id)
        .execute();
    }
    await enqueueDeleted(trx, d, t.workspace, id, d.pattern.format({ workspace: t.workspace, [d.idVar]: id }), now);
  });
  return {};
}
