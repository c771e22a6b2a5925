// A watcher follows every running process: when the agent reports the exit, it records the end
// (state, exit code, end time, and the event); once the agent has sealed the output log it lets
// the waiters go, so that a read after a wait sees every byte the process wrote.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ProcessExit } from "@aiem/proto/enginemanager/agent/v1/agent_service_pb.js";
import { Process_State } from "@aiem/proto/enginemanager/sandbox/v1/process_pb.js";
import { createEndedProcesses, type EndedProcesses } from "./ended-processes.js";
import { type ProcessDeps, processKey } from "./process-access.js";
import { type AgentAnswers, askAgent } from "./process-agent.js";
import type { SandboxHandle } from "./runtime/index.js";
import {
  endProcess,
  loadProcess,
  loadSandboxByUid,
  processStateName,
  processStateOf,
  type ProcessRow,
  type SandboxRow,
} from "./store.js";

const P = Process_State;

/** The failure reason of a process the kernel killed at the sandbox's memory limit. */
export const OUT_OF_MEMORY = "out of memory: the kernel killed it when the sandbox reached its memory limit";

export interface ProcessWatcher {
  /** Follows a running process until its end is recorded and its output complete. */
  watch(sandbox: SandboxRow, row: ProcessRow, handle: SandboxHandle, asked?: AgentAnswers): void;
  /** The watcher of a process, by process key: resolves with its ended row (or undefined). */
  watching(key: string): Promise<ProcessRow | undefined> | undefined;
  /** Follows a running process again when nothing does (its watcher gave up while the agent ran on). */
  rewatch(sandboxUid: string, row: ProcessRow): void;
  /**
   * Follows again the processes of a sandbox whose agent was adopted after a restart of the
   * service: they ran on meanwhile; their ends (also those that came during the outage) are
   * recorded as for any other.
   */
  followRunning(sandboxUid: string): Promise<void>;
  /** Rows of processes whose end a watcher recorded lately. */
  readonly ended: EndedProcesses;
}

export function createProcessWatcher(deps: ProcessDeps): ProcessWatcher {
  const { context, lifecycle, hub } = deps;
  const db = () => context.database().db;
  /** Watchers of running processes, by process key; resolved when the end is recorded and the output sealed. */
  const watches = new Map<string, Promise<ProcessRow | undefined>>();
  /** The agent connection each watcher follows, by process key. */
  const watchedWith = new Map<string, SandboxHandle>();
  const ended = createEndedProcesses();

  function watch(sandbox: SandboxRow, row: ProcessRow, handle: SandboxHandle, asked?: AgentAnswers): void {
    const key = processKey(sandbox.uid, row.id);
    const agentId = row.agent_id!;
    const answers = asked ?? askAgent(handle, agentId);
    const done = (async (): Promise<ProcessRow | undefined> => {
      const exit = await awaitExit(deps, sandbox, handle, agentId, answers);
      if (!exit) return undefined;
      const recorded = recordEnd(deps, sandbox, row, exit, oomKilled(handle, answers.oomKillsBefore));
      // The exit can come before the last output: waiters go once the log is complete too.
      const [endedRow] = await Promise.all([recorded, outputSealed(handle, agentId, answers.complete)]);
      const final = endedRow && [P.SUCCEEDED, P.FAILED].includes(processStateOf(endedRow.state));
      if (endedRow && final && endedRow.agent_id === agentId) ended.keep(key, endedRow);
      return endedRow;
    })().finally(() => {
      if (watches.get(key) === done) {
        watches.delete(key);
        watchedWith.delete(key);
      }
      hub.notify(key);
    });
    watches.set(key, done);
    watchedWith.set(key, handle);
  }

  return {
    watch,
    watching: (key) => watches.get(key),
    rewatch(sandboxUid, row) {
      void loadSandboxByUid(db(), sandboxUid).then((sandbox) => {
        const handle = sandbox ? lifecycle.handle(sandbox) : undefined;
        if (sandbox && handle && row.agent_id && !watches.has(processKey(sandboxUid, row.id)))
          watch(sandbox, row, handle);
      });
    },
    async followRunning(sandboxUid) {
      const sandbox = await loadSandboxByUid(db(), sandboxUid);
      const handle = sandbox ? lifecycle.handle(sandbox) : undefined;
      if (!sandbox || !handle) return;
      const rows = (await db()
        .selectFrom("processes")
        .selectAll()
        .where("sandbox_uid", "=", sandboxUid)
        .where("state", "=", processStateName(P.RUNNING))
        .execute()) as ProcessRow[];
      for (const row of rows) {
        // A watcher of the agent's previous hold ends as its connection closed; this one replaces it.
        if (row.agent_id && watchedWith.get(processKey(sandboxUid, row.id)) !== handle) watch(sandbox, row, handle);
      }
    },
    ended,
  };
}

/** The process's exit as the agent reports it; undefined when the agent went away meanwhile. */
async function awaitExit(
  deps: ProcessDeps,
  sandbox: SandboxRow,
  handle: SandboxHandle,
  agentId: string,
  asked: AgentAnswers,
): Promise<ProcessExit | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      return (await (attempt === 0 ? asked.exit : handle.client.waitProcess({ processId: agentId }))).exit;
    } catch {
      // The agent went away (the lifecycle ends the process's record), or the call broke
      // while it runs on: then ask again.
      if (deps.lifecycle.handle(sandbox) !== handle || attempt >= 20) return undefined;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Records a process's end and announces it; the row as stored after, or undefined when that failed. */
function recordEnd(
  deps: ProcessDeps,
  sandbox: SandboxRow,
  row: ProcessRow,
  exit: ProcessExit,
  outOfMemory: boolean,
): Promise<ProcessRow | undefined> {
  const { context } = deps;
  const agentId = row.agent_id!;
  const reported = exit.endTime ? timestampDate(exit.endTime) : context.now();
  const endTime = row.start_time && reported < row.start_time ? row.start_time : reported;
  const state = exit.exitCode === 0 ? P.SUCCEEDED : P.FAILED;
  const exitCode = exit.exitCode;
  const failureReason = exitCode === 137 && outOfMemory ? OUT_OF_MEMORY : undefined;
  return context
    .writeStatement(
      async (db) =>
        (await endProcess(db, sandbox, row, agentId, state, exitCode, endTime, failureReason)) ??
        loadProcess(db, sandbox.uid, row.id),
    )
    .then(
      (ended) => {
        deps.hub.notify(processKey(sandbox.uid, row.id));
        return ended;
      },
      (err: unknown) => {
        context.logger.error("could not record a process's end", { process: row.name, error: String(err) });
        return undefined;
      },
    );
}

/** Resolves once the agent has the process's whole output (or went away). */
async function outputSealed(handle: SandboxHandle, agentId: string, complete: Promise<boolean>): Promise<void> {
  if (await complete) return;
  try {
    for await (const m of handle.client.streamOutput({ processId: agentId, skipReplay: true })) if (m.chunk?.end) break;
  } catch {
    // the agent went away; there is no more output to wait for
  }
}

/** Whether the sandbox's cgroup counted an OOM kill since `before` (unknown without a memory cgroup). */
function oomKilled(handle: SandboxHandle, before: number | undefined): boolean {
  const after = handle.cgroupUsage().oomKills;
  return before !== undefined && after !== undefined && after > before;
}
