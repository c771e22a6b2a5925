// PortService: which ports of a sandbox the edge forwards (see port-proxy.ts), their names and
// whether anyone may reach them. A port's URLs (port-urls.ts) and state (port-state.ts) are
// derived from its sandbox, never stored.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { sql } from "kysely";
import {
  checkField,
  checkUpdateMask,
  portPattern,
  validateDisplayName,
  validatePortId,
  type FieldTable,
} from "@aiem/kit/aip";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { alreadyExists, failedPrecondition, invalidArgument, notFound, quote, requiredField } from "@aiem/kit/errors";
import type { Logger } from "@aiem/kit/logger";
import { type Port, PortSchema } from "@aiem/proto/enginemanager/sandbox/v1/port_pb.js";
import type { PortService } from "@aiem/proto/enginemanager/sandbox/v1/port_service_pb.js";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { type AccessDeps, type SandboxCall, authorizeSandbox } from "./access.js";
import type { PortObjects } from "./kubernetes/pod-sandbox-runtime.js";
import { createPortPresenter } from "./port-presentation.js";
import { listSandboxChildren } from "./sandbox-children.js";
import type { PortUrls } from "./port-urls.js";
import { decodePort, encodePort, loadPort, sandboxStateName, type PortRow } from "./store.js";

export const PORT_RESOURCE_TYPE = "enginemanager.ai/Port";
const UPDATABLE = ["display_name", "public"];

export interface PortDeps extends AccessDeps {
  readonly urls: PortUrls;
  /** Cuts forwarded connections of a port: all of them, or only those through its public URL. */
  closeConnections(sandboxUid: string, port: number, onlyPublic: boolean): void;
  /**
   * On Kubernetes, each port's objects (a Service, an HTTPRoute while public): made or changed
   * after the port's row, and READY once they exist.
   */
  readonly objects?: PortObjects | undefined;
  readonly logger?: Logger | undefined;
}

const portTable: FieldTable = {
  port: { type: "int", sql: sql.ref("port") },
  create_time: { type: "timestamp", sql: sql.ref("create_time") },
};

/** The handlers of PortService, typed by the service so a missing or misspelt one fails the type check. */
export type PortServiceImpl = ServiceImpl<typeof PortService>;

export function createPortHandlers(deps: PortDeps): PortServiceImpl {
  const { context } = deps;
  const db = () => context.database().db;

  const { present, syncObjects } = createPortPresenter(deps);

  return {
    async createPort(req, ctx) {
      const call = await authorizeSandbox(deps, ctx, req.parent, "parent", WorkspaceKind.ports, Action.CREATE);
      if (req.portId === "") throw requiredField("port_id");
      checkField("port_id", req.portId, validatePortId);
      const input = req.port ?? create(PortSchema);
      checkField("port.display_name", input.displayName, validateDisplayName);
      const live = [SandboxEngine_State.STARTING, SandboxEngine_State.RUNNING].map(sandboxStateName);
      if (!live.includes(call.row.state)) {
        throw failedPrecondition(
          `${call.row.name} is ${call.row.state}; ports can be made reachable only while it is starting or running`,
        );
      }
      const number = Number(req.portId);
      const now = context.now();
      const port = create(PortSchema, {
        name: `${call.row.name}/ports/${number}`,
        displayName: input.displayName,
        public: input.public,
        createTime: timestampFromDate(now),
        updateTime: timestampFromDate(now),
        creator: call.principal.name,
        updater: call.principal.name,
        creatorDisplayName: call.principal.displayName,
        updaterDisplayName: call.principal.displayName,
      });
      const row: PortRow = {
        sandbox_uid: call.row.uid,
        port: number,
        name: port.name,
        public: port.public,
        create_time: now,
        resource: encodePort(port),
      };
      const inserted = await db()
        .insertInto("ports")
        .values(row)
        .onConflict((oc) => oc.doNothing())
        .returning("port")
        .executeTakeFirst();
      if (!inserted) throw alreadyExists(port.name, PORT_RESOURCE_TYPE);
      syncObjects(row);
      return { port: present(call, row, true) };
    },

    async getPort(req, ctx) {
      const { call, number } = await openPort(deps, ctx, req.name, "name", Action.GET);
      const row = await loadPort(db(), call.row.uid, number);
      if (!row) throw notFound(req.name, PORT_RESOURCE_TYPE);
      return { port: present(call, row) };
    },

    async listPorts(req, ctx) {
      const page = await listSandboxChildren<PortRow>(deps, ctx, req, WorkspaceKind.ports, {
        table: portTable,
        tiebreaker: { name: "port", spec: portTable.port! },
        defaultOrderBy: "port",
      });
      return { ports: page.rows.map((row) => present(page.call, row)), nextPageToken: page.nextPageToken };
    },

    async updatePort(req, ctx) {
      if (!req.port) throw requiredField("port");
      const { call, number } = await openPort(deps, ctx, req.port.name, "port.name", Action.UPDATE);
      rejectOutputOnly(req.updateMask?.paths ?? []);
      const paths = checkUpdateMask(req.updateMask?.paths, { allowed: UPDATABLE, immutable: ["name"] });
      if (paths.includes("display_name")) checkField("port.display_name", req.port.displayName, validateDisplayName);
      const updated = await updatePortRow(deps, call, number, req.port, paths);
      if (!updated.public) deps.closeConnections(call.row.uid, number, true);
      syncObjects(updated);
      return { port: present(call, updated) };
    },

    async deletePort(req, ctx) {
      const { call, number } = await openPort(deps, ctx, req.name, "name", Action.DELETE);
      const deleted = await db()
        .deleteFrom("ports")
        .where("sandbox_uid", "=", call.row.uid)
        .where("port", "=", number)
        .returning("port")
        .executeTakeFirst();
      if (!deleted) throw notFound(req.name, PORT_RESOURCE_TYPE);
      deps.closeConnections(call.row.uid, number, false);
      await deps.objects?.remove(call.row.uid, number);
      return {};
    },
  };
}

const OUTPUT_ONLY = [
  "internal_url",
  "public_url",
  "create_time",
  "update_time",
  "creator",
  "updater",
  "creator_display_name",
  "updater_display_name",
  "state",
  "failure_reason",
];

/** An update mask naming a field the server sets is refused, naming the field. */
function rejectOutputOnly(paths: readonly string[]): void {
  for (const path of paths) {
    if (OUTPUT_ONLY.includes(path)) {
      throw invalidArgument("update_mask", `${quote(path)} is set by the server and cannot be updated`);
    }
  }
}

/** Parses a port's name and checks the caller's access to its sandbox. */
async function openPort(deps: AccessDeps, ctx: HandlerContext, name: string, field: string, action: Action) {
  const { workspace, sandbox_engine, port } = portPattern.parse(name, field);
  const call = await authorizeSandbox(
    deps,
    ctx,
    `workspaces/${workspace}/sandboxEngines/${sandbox_engine}`,
    field,
    WorkspaceKind.ports,
    action,
  );
  return { call, number: Number(port) };
}

/** Writes the masked fields of `input` into a port, with who changed it and when. */
function updatePortRow(
  deps: AccessDeps,
  call: SandboxCall,
  number: number,
  input: Port,
  paths: readonly string[],
): Promise<PortRow> {
  const now = deps.context.now();
  return deps.context.write(async (trx) => {
    const row = await loadPort(trx, call.row.uid, number, true);
    if (!row) throw notFound(input.name, PORT_RESOURCE_TYPE);
    const port = decodePort(row);
    if (paths.includes("display_name")) port.displayName = input.displayName;
    if (paths.includes("public")) port.public = input.public;
    port.updateTime = timestampFromDate(now);
    port.updater = call.principal.name;
    port.updaterDisplayName = call.principal.displayName;
    const next: PortRow = { ...row, public: port.public, resource: encodePort(port) };
    await trx
      .updateTable("ports")
      .set({ public: next.public, resource: next.resource })
      .where("sandbox_uid", "=", row.sandbox_uid)
      .where("port", "=", row.port)
      .execute();
    return next;
  });
}
