// ProcessService. The database keeps each process's definition (command, arguments, directory,
// variables and the names of its secret versions) and its state; the agent runs it and keeps its
// output. Secret values are resolved when a process starts, go to the agent's StartProcess and
// nowhere else: not into a row, an event, a log line or a response. A watcher follows every
// running process (process-watcher.ts).
import { fromBinary } from "@bufbuild/protobuf";
import { sql } from "kysely";
import type { FieldTable } from "@aiem/kit/aip";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { failedPrecondition, invalidArgument } from "@aiem/kit/errors";
import { ProcessSchema, Process_State } from "@aiem/proto/enginemanager/sandbox/v1/process_pb.js";
import { type SandboxCall, requireRunning, viaAgent } from "./access.js";
import { type ProcessDeps, type ProcessServiceImpl, openProcess, processKey } from "./process-access.js";
import { startOnAgent } from "./process-agent.js";
import { createCreateProcessHandler } from "./process-create.js";
import { createProcessOutputHandlers } from "./process-output-handlers.js";
import { createWaitProcessHandler } from "./process-wait.js";
import { createProcessWatcher, type ProcessWatcher } from "./process-watcher.js";
import { listSandboxChildren } from "./sandbox-children.js";
import type { SandboxHandle } from "./runtime/index.js";
import {
  PROCESS_STATE_NAMES,
  enqueueProcessState,
  loadProcess,
  presentProcess,
  processStateName,
  processStateOf,
  type ProcessRow,
} from "./store.js";

export type { ProcessDeps } from "./process-access.js";

const P = Process_State;

const processTable: FieldTable = {
  state: { type: "enum", sql: sql.ref("state"), enumValues: PROCESS_STATE_NAMES },
  create_time: { type: "timestamp", sql: sql.ref("create_time") },
  name: { type: "string", sql: sql.ref("name") },
};

export interface ProcessHandlers {
  readonly service: ProcessServiceImpl;
  /** Follows again the running processes of a sandbox whose agent was adopted (see ProcessWatcher). */
  followRunning(sandboxUid: string): Promise<void>;
}

export function createProcessHandlers(deps: ProcessDeps): ProcessHandlers {
  const { context, hub } = deps;
  const db = () => context.database().db;
  const watcher = createProcessWatcher(deps);
  /** Processes being created or started, so two calls cannot both make or start one. */
  const starting = new Set<string>();

  const service: ProcessServiceImpl = {
    ...createCreateProcessHandler(deps, watcher, starting),
    ...createWaitProcessHandler(deps, watcher),
    ...createProcessOutputHandlers(deps),

    async getProcess(req, ctx) {
      const { row } = await openProcess(deps, ctx, req.name, Action.GET);
      return { process: presentProcess(row) };
    },

    async listProcesses(req, ctx) {
      const page = await listSandboxChildren<ProcessRow>(deps, ctx, req, WorkspaceKind.processes, {
        table: processTable,
        tiebreaker: { name: "name", spec: processTable.name! },
      });
      return { processes: page.rows.map(presentProcess), nextPageToken: page.nextPageToken };
    },

    async deleteProcess(req, ctx) {
      const { call, row, key } = await openProcess(deps, ctx, req.name, Action.DELETE);
      let last = row;
      if (processStateOf(row.state) === P.RUNNING && row.agent_id) {
        const handle = deps.lifecycle.handle(call.row);
        if (handle) {
          await handle.client.signalProcess({ processId: row.agent_id, signal: 9 }).catch(() => undefined);
          await Promise.race([watcher.watching(key), new Promise((r) => setTimeout(r, 5_000).unref())]);
          last = (await loadProcess(db(), call.row.uid, row.id)) ?? last;
        }
      }
      await db().deleteFrom("processes").where("sandbox_uid", "=", call.row.uid).where("id", "=", row.id).execute();
      watcher.ended.forget(key);
      hub.notify(key);
      return { process: presentProcess(last) };
    },

    async startProcess(req, ctx) {
      const { call, row, key } = await openProcess(deps, ctx, req.name, Action.UPDATE);
      if (processStateOf(row.state) !== P.PENDING || starting.has(key)) {
        throw failedPrecondition(
          `${row.name} is ${starting.has(key) ? "being started" : row.state}; only a pending process can be started`,
        );
      }
      const handle = requireRunning(deps, call);
      starting.add(key);
      try {
        return { process: presentProcess(await launch(deps, watcher, call, handle, row)) };
      } finally {
        starting.delete(key);
      }
    },

    async sendProcessSignal(req, ctx) {
      const { call, row } = await openProcess(deps, ctx, req.name, Action.UPDATE);
      if (!Number.isInteger(req.signal) || req.signal < 1 || req.signal > 64) {
        throw invalidArgument("signal", `must be a signal number from 1 to 64 (got ${req.signal})`);
      }
      if (processStateOf(row.state) !== P.RUNNING || !row.agent_id) {
        throw failedPrecondition(`${row.name} is ${row.state}; only a running process can be signalled`);
      }
      const handle = requireRunning(deps, call);
      await viaAgent(deps, call, () => handle.client.signalProcess({ processId: row.agent_id!, signal: req.signal }));
      const after = (await loadProcess(db(), call.row.uid, row.id)) ?? row;
      return { process: presentProcess(after) };
    },
  };
  return { service, followRunning: watcher.followRunning };
}

/** Starts a pending process row on the agent and records it running. */
async function launch(
  deps: ProcessDeps,
  watcher: ProcessWatcher,
  call: SandboxCall,
  handle: SandboxHandle,
  row: ProcessRow,
): Promise<ProcessRow> {
  const definition = fromBinary(ProcessSchema, row.resource);
  const { agentId, startTime, asked } = await startOnAgent(deps, call, handle, definition);
  const running: ProcessRow = { ...row, state: processStateName(P.RUNNING), agent_id: agentId, start_time: startTime };
  await deps.context.write(async (trx) => {
    await trx
      .updateTable("processes")
      .set({ state: running.state, agent_id: agentId, start_time: startTime })
      .where("sandbox_uid", "=", row.sandbox_uid)
      .where("id", "=", row.id)
      .execute();
    await enqueueProcessState(trx, call.row, running, P.PENDING, P.RUNNING, startTime);
  });
  watcher.watch(call.row, running, handle, asked);
  deps.hub.notify(processKey(row.sandbox_uid, row.id));
  return running;
}
