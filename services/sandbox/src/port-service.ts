// PortService: which ports of a sandbox the edge forwards (see port-proxy.ts), their names and
// whether anyone may reach them. A port's URLs are derived, never stored, so they follow the
// configured public URL; so is its state: READY whenever its sandbox runs, since the proxy then
// routes to it, whether or not a program listens yet (a client waits for READY before starting
// the program that will listen).
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { sql } from "kysely";
import {
  checkField,
  checkUpdateMask,
  paginate,
  portPattern,
  validateDisplayName,
  validatePortId,
  type FieldTable,
} from "@aiem/kit/aip";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import type { ContentUrls } from "@aiem/kit/config";
import type { Logger } from "@aiem/kit/logger";
import { alreadyExists, failedPrecondition, invalidArgument, notFound, quote, requiredField } from "@aiem/kit/errors";
import { type Port, PortSchema, Port_State } from "@aiem/proto/enginemanager/sandbox/v1/port_pb.js";
import type {
  CreatePortRequest,
  DeletePortRequest,
  GetPortRequest,
  ListPortsRequest,
  UpdatePortRequest,
} from "@aiem/proto/enginemanager/sandbox/v1/port_service_pb.js";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { PortObjects } from "./kubernetes/pod-sandbox-runtime.js";
import { type AccessDeps, type SandboxCall, authorizeSandbox } from "./access.js";
import { decodePort, encodePort, loadPort, sandboxStateName, type PortRow, type SandboxRow } from "./store.js";

export const PORT_RESOURCE_TYPE = "enginemanager.ai/Port";
const UPDATABLE = ["display_name", "public"];

export interface PortUrls {
  /** Reached with the sandbox creator's token. */
  internal(sandboxUid: string, port: number): string;
  /** Reached by anyone, while the port is public. */
  public(sandboxUid: string, port: number): string;
}

/** Each port at an origin of its own (`{port}-{uid}.sandboxes.<base>`), or a path with AIEM_PATH_URLS. */
export function createPortUrls(content: ContentUrls): PortUrls {
  return { internal: content.port, public: content.publicPort };
}

/**
 * A port's state as its sandbox is now: routed while the sandbox runs. The answer to its creation
 * is PENDING, as a port whose route is still being made; every read after says what is.
 */
export function portState(
  sandbox: Pick<SandboxRow, "name" | "state">,
  justCreated = false,
): { state: Port_State; failureReason: string } {
  const S = SandboxEngine_State;
  switch (sandbox.state) {
    case sandboxStateName(S.RUNNING):
      return { state: justCreated ? Port_State.PENDING : Port_State.READY, failureReason: "" };
    case sandboxStateName(S.STARTING):
      return { state: Port_State.PENDING, failureReason: "" };
    case sandboxStateName(S.DELETING):
      return { state: Port_State.DELETING, failureReason: "" };
    default:
      return {
        state: Port_State.FAILED,
        failureReason: `${sandbox.name} is ${sandbox.state}; its ports are served only while it runs`,
      };
  }
}

export interface PortDeps extends AccessDeps {
  readonly urls: PortUrls;
  /** Cuts forwarded connections of a port: all of them, or only those through its public URL. */
  closeConnections(sandboxUid: string, port: number, onlyPublic: boolean): void;
  /**
   * On Kubernetes, each port's objects (a Service, an HTTPRoute while public): made or changed
   * after the port's row, and READY once they exist.
   */
  readonly objects?: PortObjects;
  readonly logger?: Logger;
}

const portTable: FieldTable = {
  port: { type: "int", sql: sql.ref("port") },
  create_time: { type: "timestamp", sql: sql.ref("create_time") },
};

export function createPortHandlers(deps: PortDeps) {
  const { context } = deps;
  const db = () => context.database().db;

  function present(call: SandboxCall, row: PortRow, justCreated = false): Port {
    const port = decodePort(row);
    port.public = row.public;
    port.internalUrl = deps.urls.internal(row.sandbox_uid, row.port);
    port.publicUrl = row.public ? deps.urls.public(row.sandbox_uid, row.port) : "";
    const state = portState(call.row, justCreated);
    const objects = deps.objects;
    if (objects && state.state === Port_State.READY && !objects.ready(row.sandbox_uid, row.port, row.public)) {
      // Not made yet, or made before a change this replica missed: made now, READY once there.
      syncObjects(row);
      state.state = Port_State.PENDING;
    }
    Object.assign(port, state);
    return port;
  }

  /** Makes (or changes) a port's objects in the background; the port reads PENDING until they exist. */
  function syncObjects(row: Pick<PortRow, "sandbox_uid" | "port" | "public">): void {
    const publicUrl = row.public ? deps.urls.public(row.sandbox_uid, row.port) : undefined;
    deps.objects?.ensure(row.sandbox_uid, row.port, publicUrl).catch((error: unknown) =>
      deps.logger?.warn("could not make a port's objects in the cluster", {
        sandbox: row.sandbox_uid,
        port: row.port,
        error: error instanceof Error ? error.message : String(error),
      }),
    );
  }

  async function openPort(ctx: HandlerContext, name: string, field: string, action: Action) {
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

  return {
    async createPort(req: CreatePortRequest, ctx: HandlerContext) {
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

    async getPort(req: GetPortRequest, ctx: HandlerContext) {
      const { call, number } = await openPort(ctx, req.name, "name", Action.GET);
      const row = await loadPort(db(), call.row.uid, number);
      if (!row) throw notFound(req.name, PORT_RESOURCE_TYPE);
      return { port: present(call, row) };
    },

    async listPorts(req: ListPortsRequest, ctx: HandlerContext) {
      const call = await authorizeSandbox(deps, ctx, req.parent, "parent", WorkspaceKind.ports, Action.LIST);
      const page = await paginate(db().selectFrom("ports").selectAll().where("sandbox_uid", "=", call.row.uid), {
        parent: req.parent,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        table: portTable,
        tiebreaker: { name: "port", spec: portTable["port"]! },
        defaultOrderBy: "port",
        tokens: context.tokens(),
        scope: "ports",
      });
      const ports = (page.rows as PortRow[]).map((row) => present(call, row));
      return { ports, nextPageToken: page.nextPageToken };
    },

    async updatePort(req: UpdatePortRequest, ctx: HandlerContext) {
      if (!req.port) throw requiredField("port");
      const { call, number } = await openPort(ctx, req.port.name, "port.name", Action.UPDATE);
      for (const path of req.updateMask?.paths ?? []) {
        const outputOnly = [
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
        if (outputOnly.includes(path)) {
          throw invalidArgument("update_mask", `${quote(path)} is set by the server and cannot be updated`);
        }
      }
      const paths = checkUpdateMask(req.updateMask?.paths, { allowed: UPDATABLE, immutable: ["name"] });
      if (paths.includes("display_name")) checkField("port.display_name", req.port.displayName, validateDisplayName);
      const now = context.now();
      const updated = await context.write(async (trx) => {
        const row = await loadPort(trx, call.row.uid, number, true);
        if (!row) throw notFound(req.port!.name, PORT_RESOURCE_TYPE);
        const port = decodePort(row);
        if (paths.includes("display_name")) port.displayName = req.port!.displayName;
        if (paths.includes("public")) port.public = req.port!.public;
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
      if (!updated.public) deps.closeConnections(call.row.uid, number, true);
      syncObjects(updated);
      return { port: present(call, updated) };
    },

    async deletePort(req: DeletePortRequest, ctx: HandlerContext) {
      const { call, number } = await openPort(ctx, req.name, "name", Action.DELETE);
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
