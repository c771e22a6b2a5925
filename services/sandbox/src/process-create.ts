// CreateProcess: a process recorded pending, or (with auto_run) started on the agent first and
// recorded once running, so that a process that cannot start is never created.
import { randomInt } from "node:crypto";
import { checkField, validateProcessId } from "@aiem/kit/aip";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { alreadyExists, failedPrecondition, requiredField } from "@aiem/kit/errors";
import { type Process, Process_State } from "@aiem/proto/enginemanager/sandbox/v1/process_pb.js";
import { type SandboxCall, authorizeSandbox, requireRunning } from "./access.js";
import {
  LIVE_SANDBOX_STATES,
  PROCESS_RESOURCE_TYPE,
  type ProcessDeps,
  type ProcessServiceImpl,
  processKey,
} from "./process-access.js";
import { startOnAgent } from "./process-agent.js";
import { validateProcessDefinition } from "./process-definition.js";
import type { ProcessWatcher } from "./process-watcher.js";
import type { SandboxHandle } from "./runtime/index.js";
import {
  encodeProcess,
  insertProcess,
  loadProcess,
  presentProcess,
  processStateName,
  type ProcessRow,
} from "./store.js";

const P = Process_State;

/** A generated process id is tried this many more times when it is taken. */
const GENERATED_ID_RETRIES = 4;

/**
 * `starting` holds the keys of processes being created or started in this service, so two calls
 * cannot both make or start one.
 */
export function createCreateProcessHandler(
  deps: ProcessDeps,
  watcher: ProcessWatcher,
  starting: Set<string>,
): Pick<ProcessServiceImpl, "createProcess"> {
  const { context, hub } = deps;
  return {
    async createProcess(req, ctx) {
      const call = await authorizeSandbox(deps, ctx, req.parent, "parent", WorkspaceKind.processes, Action.CREATE);
      if (!req.process) throw requiredField("process");
      if (req.processId !== "") checkField("process_id", req.processId, validateProcessId);
      const definition = validateProcessDefinition(req.process);
      const handle = req.autoRun ? requireRunning(deps, call) : undefined;
      if (!handle && !LIVE_SANDBOX_STATES.includes(call.row.state)) {
        throw failedPrecondition(
          `${call.row.name} is ${call.row.state}; processes can be created only while it is starting or running`,
        );
      }
      const now = context.now();
      for (let attempt = 0; ; attempt++) {
        const id = req.processId !== "" ? req.processId : randomId();
        const name = `${call.row.name}/processes/${id}`;
        const key = processKey(call.row.uid, id);
        // Reserved here while it is made, so two calls in this process cannot both make it.
        if (!starting.has(key)) {
          starting.add(key);
          try {
            definition.name = name;
            const row = pendingRow(call, id, definition, now);
            const made = handle
              ? await insertRunning(call, handle, row, definition, req.processId !== "")
              : await insertPending(call, row);
            if (made) {
              hub.notify(key);
              return { process: presentProcess(made) };
            }
          } finally {
            starting.delete(key);
          }
        }
        if (req.processId !== "" || attempt >= GENERATED_ID_RETRIES) throw alreadyExists(name, PROCESS_RESOURCE_TYPE);
      }
    },
  };

  /** Records a pending process; undefined when its id is taken. */
  async function insertPending(call: SandboxCall, row: ProcessRow): Promise<ProcessRow | undefined> {
    const inserted = await context.writeStatement((db) => insertProcess(db, call.row, row, row.create_time));
    return inserted ? row : undefined;
  }

  /**
   * Starts a process on the agent and records it running, followed by a watcher: started first and
   * recorded once running, so a process that cannot start (a secret that cannot be resolved, a
   * missing command) is never created. Undefined when its id is taken (a process started for it
   * is killed then).
   */
  async function insertRunning(
    call: SandboxCall,
    handle: SandboxHandle,
    row: ProcessRow,
    definition: Process,
    chosenId: boolean,
  ): Promise<ProcessRow | undefined> {
    // A chosen id is looked up first, so a taken one starts nothing; a generated one is rarely
    // taken, and the insert says so.
    if (chosenId && (await loadProcess(context.database().db, call.row.uid, row.id))) return undefined;
    const { agentId, startTime, asked } = await startOnAgent(deps, call, handle, definition);
    const running: ProcessRow = {
      ...row,
      state: processStateName(P.RUNNING),
      agent_id: agentId,
      start_time: startTime,
    };
    const inserted = await context.writeStatement((db) => insertProcess(db, call.row, running, startTime));
    if (!inserted) {
      await handle.client.signalProcess({ processId: agentId, signal: 9 }).catch(() => undefined);
      return undefined;
    }
    watcher.watch(call.row, running, handle, asked);
    return running;
  }
}

function pendingRow(call: SandboxCall, id: string, definition: Process, now: Date): ProcessRow {
  return {
    sandbox_uid: call.row.uid,
    id,
    name: definition.name,
    state: processStateName(P.PENDING),
    exit_code: null,
    agent_id: null,
    create_time: now,
    start_time: null,
    end_time: null,
    failure_reason: null,
    resource: encodeProcess(definition),
  };
}

function randomId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  let id = "p-";
  for (let i = 0; i < 10; i++) id += alphabet[randomInt(alphabet.length)];
  return id;
}
