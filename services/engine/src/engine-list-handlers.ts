// The mixed Engine list: DAI, H2O and notebook engines of a workspace in one page, or of every
// workspace with `workspaces/-` (which needs LIST_ALL on the engine manager).
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { listRequestFields, paginate, workspacePattern } from "@aiem/kit/aip";
import { Action } from "@aiem/kit/authz";
import { principalOf } from "@aiem/kit/server";
import { visibleRows } from "./access.js";
import type { ServiceContext } from "./context.js";
import type { EngineService } from "@aiem/proto/enginemanager/v1/engine_service_pb.js";
import {
  ENGINES,
  mixedFieldTable,
  nameTiebreaker,
  presentMixed,
  type CatalogueVersions,
  type EngineRow,
} from "./store.js";

/** The DAI and H2O versions and notebook images the catalogue holds now, for the list's fields. */
export function catalogueVersions(context: ServiceContext): CatalogueVersions {
  const catalogue = context.catalogue();
  const versions = [...catalogue.list("daiEngineVersions"), ...catalogue.list("h2oEngineVersions")];
  return {
    deprecated: versions.filter((v) => v.deprecated).map((v) => v.name),
    existing: [...versions, ...catalogue.list("notebookEngineImages")].map((v) => v.name),
  };
}

export function createEngineListHandlers(context: ServiceContext): ServiceImpl<typeof EngineService> {
  const { policy } = context;
  return {
    async listEngines(req, ctx: HandlerContext) {
      const principal = principalOf(ctx);
      const { workspace } = workspacePattern.parse(req.parent, "parent", { allowWildcard: ["workspace"] });
      const all = workspace === "-";
      policy.check(principal, all ? Action.LIST_ALL : Action.LIST, "engines", workspace);
      let query = context.database().db.selectFrom(ENGINES).selectAll();
      if (!all) query = query.where("workspace", "=", workspace);
      const visible = visibleRows(policy, principal);
      if (visible) query = query.where(visible);
      const page = await paginate(query, {
        ...listRequestFields(req),
        table: mixedFieldTable(catalogueVersions(context)),
        tiebreaker: nameTiebreaker,
        tokens: context.tokens(),
        scope: "engines",
        totalSize: true,
      });
      const presentContext = context.presentContext();
      return {
        engines: page.rows.map((row) => presentMixed(row as EngineRow, presentContext, principal)),
        nextPageToken: page.nextPageToken,
        totalSize: page.totalSize ?? 0,
      };
    },
  };
}
