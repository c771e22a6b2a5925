// Who sees and who changes an engine (ARCHITECTURE.md, "Identity and permissions"): an engine is
// visible to its creator and to administrators, and a shared notebook engine to everyone with a
// role in its workspace. Changes are for the creator and administrators only. An engine the caller
// cannot see is answered as NOT_FOUND, so its existence does not leak.
import { sql, type Expression, type SqlBool } from "kysely";
import type { Policy } from "@aiem/kit/authz";
import { permissionDenied, quote } from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import type { EngineRow } from "./store.js";

export function canSee(
  policy: Policy,
  principal: Principal,
  row: Pick<EngineRow, "creator" | "type" | "shared" | "workspace">,
): boolean {
  if (policy.isAdmin(principal) || row.creator === principal.name) return true;
  return row.type === "notebookEngines" && row.shared && policy.role(principal, row.workspace) !== undefined;
}

export function canManage(policy: Policy, principal: Principal, row: Pick<EngineRow, "creator">): boolean {
  return policy.isAdmin(principal) || row.creator === principal.name;
}

/** Throws PERMISSION_DENIED unless the caller created the engine or is an administrator. */
export function checkManage(policy: Policy, principal: Principal, row: Pick<EngineRow, "creator" | "name">): void {
  if (!canManage(policy, principal, row)) {
    throw permissionDenied(
      `permission denied: only its creator (${row.creator}) or an administrator may change ${quote(row.name)}`,
    );
  }
}

/** The rows of a list the caller may see (undefined: all of them). */
export function visibleRows(policy: Policy, principal: Principal): Expression<SqlBool> | undefined {
  if (policy.isAdmin(principal)) return undefined;
  return sql<SqlBool>`(creator = ${principal.name} or (type = 'notebookEngines' and shared))`;
}
