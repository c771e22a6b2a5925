// What profiles add to the standard methods: a profile may be restricted to OIDC roles, so only
// administrators list every profile, everyone else lists the ones assigned to them; and a profile
// may be copied, into another workspace too.
import type { HandlerContext } from "@connectrpc/connect";
import { sql } from "kysely";
import { checkField, workspacePattern, type ListRequestFields } from "@aiem/kit/aip";
import { Action, permissionName, type Policy } from "@aiem/kit/authz";
import { alreadyExists, notFound, permissionDenied, requiredField } from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import { principalOf } from "@aiem/kit/server";
import { idOf, type KindFieldsRequest, type KindScope } from "./kind-scope.js";
import type { CatalogueResource, KindDescriptor } from "./kinds.js";
import { listPage } from "./resource-list.js";
import { mustLoad, parseName } from "./resource-lookup.js";
import { enqueueChanged, insertResource, present, stampCreate } from "./store.js";

interface RoleRestricted {
  assignedOidcRolesEnabled: boolean;
  assignedOidcRoles: string[];
}

/** Whether a profile's role restriction (if it is on) admits someone holding `roles`. */
function holdsAssignedRole(profile: RoleRestricted, roles: readonly string[]): boolean {
  return !profile.assignedOidcRolesEnabled || profile.assignedOidcRoles.some((role) => roles.includes(role));
}

/**
 * A profile restricted to roles the caller holds none of is hidden from a non-administrator, as
 * if it did not exist, as the real service answers.
 */
export function assertVisibleProfile(
  policy: Policy,
  d: KindDescriptor,
  principal: Principal,
  resource: CatalogueResource,
  name: string,
): void {
  if (d.family !== "profile" || policy.isAdmin(principal)) return;
  if (!holdsAssignedRole(resource as RoleRestricted, principal.roles)) throw notFound(name, d.resourceType);
}

/**
 * Every profile, restricted ones included, is for administrators to list; everyone else lists the
 * profiles assigned to them (:listAssigned), as the real service answers.
 */
export function checkListsEveryProfile(policy: Policy, d: KindDescriptor, principal: Principal, workspace: string) {
  if (d.family !== "profile" || policy.isAdmin(principal)) return;
  throw permissionDenied(
    `permission denied: ${principal.name} lacks ${permissionName(d.kind, Action.LIST)} on workspaces/${workspace}: ` +
      `only administrators list every profile; list the ones assigned to you with :listAssigned`,
  );
}

export interface CopyRequest extends KindFieldsRequest {
  readonly name: string;
  readonly parent: string;
}

export async function handleCopy({ context, d }: KindScope, req: CopyRequest, ctx: HandlerContext) {
  const principal = principalOf(ctx);
  const source = parseName(d, req.name, "name");
  const { workspace } = workspacePattern.parse(req.parent, "parent");
  const id = idOf(d, req);
  if (id === "") throw requiredField(d.idField);
  context.policy.check(principal, Action.GET, d.kind, source.workspace);
  context.policy.check(principal, Action.CREATE, d.kind, workspace);
  checkField(d.idField, id, d.validateId);
  const now = context.now();
  const copy = await context.write(async (trx) => {
    const { resource } = await mustLoad(trx, d, source);
    resource.name = d.pattern.format({ workspace, [d.idVar]: id });
    stampCreate(resource, principal, now);
    if (!(await insertResource(trx, d, workspace, id, resource))) throw alreadyExists(resource.name, d.resourceType);
    await enqueueChanged(trx, d, workspace, id, resource, now);
    return resource;
  });
  return { [d.resourceLocal]: present(d, copy) };
}

export async function handleListAssigned(scope: KindScope, req: ListRequestFields, ctx: HandlerContext) {
  const { context, d } = scope;
  const principal = principalOf(ctx);
  const { workspace } = workspacePattern.parse(req.parent, "parent");
  context.policy.check(principal, Action.LIST_ASSIGNED, d.kind, workspace);
  const roles = [...new Set(principal.roles)];
  const usable =
    roles.length === 0
      ? sql<boolean>`not assigned_oidc_roles_enabled`
      : sql<boolean>`(not assigned_oidc_roles_enabled or assigned_oidc_roles && ARRAY[${sql.join(roles)}]::text[])`;
  const query = context
    .database()
    .db.selectFrom(d.table)
    .select("resource")
    .where("workspace", "=", workspace)
    .where("enabled", "=", true)
    .where(usable);
  return listPage(scope, query, {
    parent: req.parent,
    pageSize: req.pageSize,
    pageToken: req.pageToken,
    orderBy: "priority, name",
    scope: `${d.kind}:listAssigned`,
  });
}
