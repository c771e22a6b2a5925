// What versions add to the standard methods: :assignAliases, which gives a version exactly the
// aliases asked for (version-aliases.ts).
import type { HandlerContext } from "@connectrpc/connect";
import { Action } from "@aiem/kit/authz";
import { principalOf } from "@aiem/kit/server";
import type { KindScope } from "./kind-scope.js";
import { parseName } from "./resource-lookup.js";
import { decode, present } from "./store.js";
import { assignAliases, checkAliases } from "./version-aliases.js";

export interface AssignAliasesRequest {
  readonly name: string;
  readonly aliases?: readonly string[];
}

export async function handleAssignAliases({ context, d }: KindScope, req: AssignAliasesRequest, ctx: HandlerContext) {
  const principal = principalOf(ctx);
  const t = parseName(d, req.name, "name");
  context.policy.check(principal, Action.ASSIGN_ALIASES, d.kind, t.workspace);
  const aliases = checkAliases(req.aliases ?? []);
  const now = context.now();
  await context.write((trx) => assignAliases(trx, d, t, aliases, principal, now));
  // Every version of the workspace, in the order lists answer: newest version first.
  const rows = (await context
    .database()
    .db.selectFrom(d.table)
    .select("resource")
    .where("workspace", "=", t.workspace)
    .orderBy("version_key", "desc")
    .orderBy("name", "desc")
    .execute()) as Array<{ resource: Uint8Array }>;
  return { [d.pluralLocal]: rows.map((row) => present(d, decode(d, row.resource))) };
}
