// A List call over one sandbox's children (its ports or its processes): the caller must be
// allowed to list that kind in the sandbox's workspace, and the page holds that sandbox's rows
// only. The kind names the table and the page tokens' scope as well.
import type { HandlerContext } from "@connectrpc/connect";
import { listRequestFields, paginate, type ListOptions, type ListRequestFields } from "@aiem/kit/aip";
import { Action, type WorkspaceKind } from "@aiem/kit/authz";
import { type AccessDeps, type SandboxCall, authorizeSandbox } from "./access.js";

export type SandboxChildKind = typeof WorkspaceKind.ports | typeof WorkspaceKind.processes;

export interface SandboxChildPage<Row> {
  readonly call: SandboxCall;
  readonly rows: Row[];
  readonly nextPageToken: string;
}

export async function listSandboxChildren<Row>(
  deps: AccessDeps,
  ctx: HandlerContext,
  req: ListRequestFields,
  kind: SandboxChildKind,
  paging: Pick<ListOptions, "table" | "tiebreaker" | "defaultOrderBy">,
): Promise<SandboxChildPage<Row>> {
  const { context } = deps;
  const call = await authorizeSandbox(deps, ctx, req.parent, "parent", kind, Action.LIST);
  const rows = context.database().db.selectFrom(kind).selectAll().where("sandbox_uid", "=", call.row.uid);
  const page = await paginate(rows, { ...listRequestFields(req), ...paging, tokens: context.tokens(), scope: kind });
  return { call, rows: page.rows as Row[], nextPageToken: page.nextPageToken };
}
