// ProcessService. The database keeps each process's definition (command, arguments, directory,
// variables and the names of its secret versions) and its state; the agent runs it and keeps its
// output. Secret values are resolved when a process starts, go to the agent's StartProcess and
// nowhere else: not into a row, an event, a log line or a response.
//
// A watcher follows every running process: when the agent reports the exit, it records the end
// (state, exit code, end time, and the event); once the agent has sealed the output log it lets
// the waiters go, so that a read after a wait sees every byte the process wrote.
import { randomInt, randomUUID } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { sql } from "kysely";
import { checkField, paginate, processPattern, validateProcessId, type FieldTable } from "@aiem/kit/aip";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import {
  Code,
  ConnectError,
  alreadyExists,
  failedPrecondition,
  invalidArgument,
  notFound,
  outOfRange,
  requiredField,
} from "@aiem/kit/errors";
import { type Process, ProcessSchema, Process_State } from "@aiem/proto/enginemanager/sandbox/v1/process_pb.js";
import {
  type CreateProcessRequest,
  type DeleteProcessRequest,
  type GetProcessRequest,
  type ListProcessesRequest,
  OutputStream,
  type ReadProcessOutputFramesRequest,
  type ReadProcessOutputRequest,
  type SendProcessSignalRequest,
  type StartProcessRequest,
  type StreamProcessOutputRequest,
  type StreamProcessOutputResponseSchema,
  type WaitProcessRequest,
} from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ProcessExit } from "@aiem/proto/enginemanager/agent/v1/agent_service_pb.js";
import { type AccessDeps, type SandboxCall, agentError, authorizeSandbox, requireRunning, viaAgent } from "./access.js";
import { type ChangeHub, sandboxKey } from "./lifecycle.js";
import { processEnvironment, validateProcessDefinition, type SecretResolver } from "./process-definition.js";
import type { SandboxHandle } from "./runtime/index.js";
import {
  PROCESS_STATE_NAMES,
  encodeProcess,
  endProcess,
  enqueueProcessState,
  insertProcess,
  loadProcess,
  loadSandboxByUid,
  presentProcess,
  processStateName,
  processStateOf,
  sandboxStateName,
  type ProcessRow,
  type SandboxRow,
} from "./store.js";

export const PROCESS_RESOURCE_TYPE = "enginemanager.ai/Process";
const P = Process_State;

export type { SecretResolver } from "./process-definition.js";

export interface ProcessDeps extends AccessDeps {
  readonly hub: ChangeHub;
  readonly secrets: SecretResolver | undefined;
  readonly keepAliveMs: number;
}

/** What the agent was asked about a process it started (see askAgent). */
interface AgentAnswers {
  readonly exit: Promise<{ exit?: ProcessExit | undefined }>;
  readonly complete: Promise<boolean>;
  readonly oomKillsBefore: number | undefined;
}

export const processKey = (uid: string, id: string) => `process:${uid}/${id}`;

const waitCancelled = () => new ConnectError("the wait was cancelled; the process was not affected", Code.Canceled);

/** `work`'s result, or CANCELED once `signal` aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(waitCancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(waitCancelled());
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** How often a wait looks at its process again even without news. */
const RECHECK_MS = 2_000;

/**
 * How long, and for how many processes, the row of a process whose end this service recorded is
 * kept for the wait that usually follows at once. Every call inside a sandbox is served by the
 * replica that runs it, and an ended row changes only by being deleted (here, or with its
 * sandbox, which the call's own check finds first), so the kept row is the stored one.
 */
const ENDED_KEEP_MS = 30_000;
const ENDED_KEEP_MAX = 512;

/** The failure reason of a process the kernel killed at the sandbox's memory limit. */
export const OUT_OF_MEMORY = "out of memory: the kernel killed it when the sandbox reached its memory limit";

/** Whether the sandbox's cgroup counted an OOM kill since `before` (unknown without a memory cgroup). */
function oomKilled(handle: SandboxHandle, before: number | undefined): boolean {
  const after = handle.cgroupUsage().oomKills;
  return before !== undefined && after !== undefined && after > before;
}

const processTable: FieldTable = {
  state: { type: "enum", sql: sql.ref("state"), enumValues: PROCESS_STATE_NAMES },
  create_time: { type: "timestamp", sql: sql.ref("create_time") },
  name: { type: "string", sql: sql.ref("name") },
};

type StreamMessage = MessageInitShape<typeof StreamProcessOutputResponseSchema>;

function randomId(): string {
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  let id = "p-";
  for (let i = 0; i < 10; i++) id += alphabet[randomInt(alphabet.length)];
  return id;
}

export function createProcessHandlers(deps: ProcessDeps) {
  const { context, lifecycle, hub } = deps;
  const db = () => context.database().db;
  /** Watchers of running processes, by process key; resolved when the end is recorded and the output sealed. */
  const watches = new Map<string, Promise<ProcessRow | undefined>>();
  /** The agent connection each watcher follows, by process key. */
  const watchedWith = new Map<string, SandboxHandle>();
  /** Processes being started, so two start calls cannot both start one. */
  const starting = new Set<string>();
  /** Rows of processes whose end this service recorded lately, by process key (see ENDED_KEEP_MS). */
  const endedRows = new Map<string, { row: ProcessRow; at: number }>();

  function keepEnded(key: string, row: ProcessRow): void {
    const now = Date.now();
    endedRows.delete(key);
    endedRows.set(key, { row, at: now });
    for (const [k, kept] of endedRows) {
      if (endedRows.size <= ENDED_KEEP_MAX && now - kept.at < ENDED_KEEP_MS) break;
      endedRows.delete(k);
    }
  }

  function keptEnded(key: string): ProcessRow | undefined {
    const kept = endedRows.get(key);
    if (kept && Date.now() - kept.at < ENDED_KEEP_MS) return kept.row;
    endedRows.delete(key);
    return undefined;
  }

  async function openProcess(ctx: HandlerContext, name: string, action: Action) {
    const { workspace, sandbox_engine, process } = processPattern.parse(name, "name");
    const call = await authorizeSandbox(
      deps,
      ctx,
      `workspaces/${workspace}/sandboxEngines/${sandbox_engine}`,
      "name",
      WorkspaceKind.processes,
      action,
    );
    const row = await loadProcess(db(), call.row.uid, process);
    if (!row) throw notFound(name, PROCESS_RESOURCE_TYPE);
    return { call, row, key: processKey(call.row.uid, process) };
  }

  /**
   * Runs a process's definition on the agent; the secret values go there and nowhere else. The
   * agent is asked for the process's end in the same breath (see askAgent).
   */
  async function startOnAgent(
    call: SandboxCall,
    handle: SandboxHandle,
    definition: Process,
  ): Promise<{ agentId: string; startTime: Date; asked: AgentAnswers }> {
    const environment = await processEnvironment(deps.secrets, call.principal, call.row, definition);
    const agentId = randomUUID();
    const startTime = context.now();
    const started = viaAgent(deps, call, () =>
      handle.client.startProcess({
        processId: agentId,
        command: definition.command,
        args: definition.args,
        workingDirectory: definition.workingDirectory,
        environment,
      }),
    );
    const asked = askAgent(handle, agentId, started);
    await started;
    return { agentId, startTime, asked };
  }

  /** Starts a pending process row on the agent and records it running. */
  async function launch(call: SandboxCall, handle: SandboxHandle, row: ProcessRow): Promise<ProcessRow> {
    const { agentId, startTime, asked } = await startOnAgent(call, handle, fromBinary(ProcessSchema, row.resource));
    const running: ProcessRow = {
      ...row,
      state: processStateName(P.RUNNING),
      agent_id: agentId,
      start_time: startTime,
    };
    await context.write(async (trx) => {
      await trx
        .updateTable("processes")
        .set({ state: running.state, agent_id: agentId, start_time: startTime })
        .where("sandbox_uid", "=", row.sandbox_uid)
        .where("id", "=", row.id)
        .execute();
      await enqueueProcessState(trx, call.row, running, P.PENDING, P.RUNNING, startTime);
    });
    watch(call.row, running, handle, asked);
    hub.notify(processKey(row.sandbox_uid, row.id));
    return running;
  }

  /**
   * Asks the agent for a process's exit and, beside it, for the moment its output is complete
   * too, so no call is left to make after the exit (an agent from before `wait_for_output`
   * answers at the exit, and the output stream's end marker is awaited instead). With `started`,
   * asked together with the start, which the agent answers first: its round trips then overlap
   * the start's and the recording of it. An agent that does not wait for a process being started
   * (from before that) answers NOT_FOUND; then the question is asked again once it started.
   */
  function askAgent(handle: SandboxHandle, agentId: string, started?: Promise<unknown>): AgentAnswers {
    const ask = (waitForOutput: boolean) =>
      handle.client.waitProcess({ processId: agentId, waitForOutput }).catch(async (err: unknown) => {
        if (!started || ConnectError.from(err).code !== Code.NotFound) throw err;
        await started;
        return handle.client.waitProcess({ processId: agentId, waitForOutput });
      });
    const exit = ask(false);
    // Never awaited when the start failed or is not recorded (the process is killed then).
    exit.catch(() => undefined);
    return {
      exit,
      complete: ask(true).then(
        (res) => res.outputComplete,
        () => false,
      ),
      // The sandbox's OOM kills so far: one more by the time this process dies of SIGKILL means
      // the kernel chose it when the sandbox reached its memory limit.
      oomKillsBefore: handle.cgroupUsage().oomKills,
    };
  }

  function watch(
    sandbox: SandboxRow,
    row: ProcessRow,
    handle: SandboxHandle,
    asked = askAgent(handle, row.agent_id!),
  ): void {
    const key = processKey(sandbox.uid, row.id);
    const agentId = row.agent_id!;
    const { complete, oomKillsBefore } = asked;
    const done = (async (): Promise<ProcessRow | undefined> => {
      let exit: ProcessExit | undefined;
      for (let attempt = 0; exit === undefined; attempt++) {
        try {
          exit = (await (attempt === 0 ? asked.exit : handle.client.waitProcess({ processId: agentId }))).exit;
          if (!exit) return undefined;
        } catch {
          // The agent went away (the lifecycle ends the process's record), or the call broke
          // while it runs on: then ask again.
          if (lifecycle.handle(sandbox) !== handle || attempt >= 20) return undefined;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      const reported = exit.endTime ? timestampDate(exit.endTime) : context.now();
      const endTime = row.start_time && reported < row.start_time ? row.start_time : reported;
      const state = exit.exitCode === 0 ? P.SUCCEEDED : P.FAILED;
      const exitCode = exit.exitCode;
      const failureReason = exitCode === 137 && oomKilled(handle, oomKillsBefore) ? OUT_OF_MEMORY : undefined;
      const recorded = context
        .writeStatement(
          async (db) =>
            (await endProcess(db, sandbox, row, agentId, state, exitCode, endTime, failureReason)) ??
            loadProcess(db, sandbox.uid, row.id),
        )
        .then(
          (ended) => {
            hub.notify(key);
            return ended;
          },
          (err: unknown) => {
            context.logger.error("could not record a process's end", { process: row.name, error: String(err) });
            return undefined;
          },
        );
      // The exit can come before the last output: waiters go once the log is complete too.
      const sealed = complete.then(async (whole) => {
        if (whole) return;
        try {
          for await (const m of handle.client.streamOutput({ processId: agentId, skipReplay: true }))
            if (m.chunk?.end) break;
        } catch {
          // the agent went away; there is no more output to wait for
        }
      });
      const [ended] = await Promise.all([recorded, sealed]);
      const final = ended && [P.SUCCEEDED, P.FAILED].includes(processStateOf(ended.state));
      if (ended && final && ended.agent_id === agentId) keepEnded(key, ended);
      return ended;
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

  /** Waits until the process has ended and its output is complete (or `signal` aborts). */
  async function settled(call: SandboxCall, first: ProcessRow, signal: AbortSignal): Promise<ProcessRow> {
    const key = processKey(call.row.uid, first.id);
    let row: ProcessRow | undefined = first;
    for (;;) {
      const stop = new AbortController();
      const onAbort = () => stop.abort();
      signal.addEventListener("abort", onAbort, { once: true });
      const next = hub.next([key, sandboxKey(call.row.uid)], stop.signal);
      try {
        row ??= await loadProcess(db(), call.row.uid, first.id);
        if (!row) throw notFound(first.name, PROCESS_RESOURCE_TYPE);
        const state = processStateOf(row.state);
        if (state === P.RUNNING && !watches.has(key)) rewatch(call.row.uid, row);
        const watcher = watches.get(key);
        if ((state === P.SUCCEEDED || state === P.FAILED) && !watcher) return row;
        if (state === P.PENDING) {
          const sandbox = await loadSandboxByUid(db(), call.row.uid);
          const live = [SandboxEngine_State.STARTING, SandboxEngine_State.RUNNING].map(sandboxStateName);
          if (!sandbox || !live.includes(sandbox.state)) {
            throw failedPrecondition(
              `${row.name} has not started and cannot start: its sandbox engine is ${sandbox?.state ?? "gone"}`,
            );
          }
        }
        if (signal.aborted) throw waitCancelled();
        // A running process with a watcher: its result is the ended row, once the output is complete.
        // Checked again now and then, whatever was (or was not) announced.
        const recheck = new Promise<undefined>((r) => setTimeout(r, RECHECK_MS, undefined).unref());
        const ended = await Promise.race([...(watcher ? [watcher] : []), next.then(() => undefined), recheck]);
        if (signal.aborted) throw waitCancelled();
        row = ended && !watches.has(key) ? ended : undefined;
        if (row && processStateOf(row.state) !== P.SUCCEEDED && processStateOf(row.state) !== P.FAILED) row = undefined;
      } finally {
        signal.removeEventListener("abort", onAbort);
        stop.abort();
      }
    }
  }

  /** Follows a running process again when nothing does (its watcher gave up while the agent ran on). */
  function rewatch(sandboxUid: string, row: ProcessRow): void {
    void loadSandboxByUid(db(), sandboxUid).then((sandbox) => {
      const handle = sandbox ? deps.lifecycle.handle(sandbox) : undefined;
      if (sandbox && handle && row.agent_id && !watches.has(processKey(sandboxUid, row.id)))
        watch(sandbox, row, handle);
    });
  }

  /**
   * Follows again the processes of a sandbox whose agent was adopted after a restart of the
   * service: they ran on meanwhile; their ends (also those that came during the outage) are
   * recorded as for any other.
   */
  async function followRunning(sandboxUid: string): Promise<void> {
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
  }

  function outputUnavailable(call: SandboxCall, row: ProcessRow): ConnectError {
    return failedPrecondition(
      call.row.state === sandboxStateName(SandboxEngine_State.RUNNING)
        ? `the output of ${row.name} was lost when its sandbox engine was started again`
        : `the output of ${row.name} is kept only while its sandbox engine runs; it is ${call.row.state}`,
    );
  }

  async function* streamOutput(req: StreamProcessOutputRequest, ctx: HandlerContext): AsyncGenerator<StreamMessage> {
    const { call, row: first, key } = await openProcess(ctx, req.name, Action.GET);
    const startOffset = req.startOffset;
    if (startOffset < 0n) throw invalidArgument("start_offset", "must not be negative");
    if (req.skipReplay && startOffset !== 0n)
      throw invalidArgument("skip_replay", "cannot be combined with a non-zero start_offset");
    lifecycle.enter(call.row.uid);
    try {
      let row = first;
      // A pending process has written nothing yet: wait for its start, keeping the stream alive.
      while (processStateOf(row.state) === P.PENDING) {
        if (startOffset > 0n) throw outOfRange("start_offset", `${startOffset} is beyond the 0 bytes written so far`);
        const sandbox = await loadSandboxByUid(db(), call.row.uid);
        const live = [SandboxEngine_State.STARTING, SandboxEngine_State.RUNNING].map(sandboxStateName);
        if (!sandbox || !live.includes(sandbox.state)) {
          throw failedPrecondition(
            `${row.name} has not started and cannot start: its sandbox engine is ${sandbox?.state ?? "gone"}`,
          );
        }
        const timeout = AbortSignal.timeout(deps.keepAliveMs);
        await hub.next([key, sandboxKey(call.row.uid)], AbortSignal.any([timeout, ctx.signal]));
        if (ctx.signal.aborted) return;
        const again = await loadProcess(db(), call.row.uid, row.id);
        if (!again) throw notFound(req.name, PROCESS_RESOURCE_TYPE);
        row = again;
        if (timeout.aborted && processStateOf(row.state) === P.PENDING) yield { keepAlive: true, offset: 0n };
      }
      const sandbox = (await loadSandboxByUid(db(), call.row.uid)) ?? call.row;
      const current = { ...call, row: sandbox };
      const handle = deps.lifecycle.handle(sandbox);
      if (!handle || sandbox.state !== sandboxStateName(SandboxEngine_State.RUNNING) || !row.agent_id)
        throw outputUnavailable(current, row);
      const agentId = row.agent_id;
      try {
        for await (const m of handle.client.streamOutput(
          { processId: agentId, startOffset, skipReplay: req.skipReplay },
          { signal: ctx.signal },
        )) {
          const chunk = m.chunk;
          if (!chunk) continue;
          lifecycle.touch(call.row.uid);
          if (chunk.end) return;
          yield {
            stream: chunk.stream,
            data: chunk.data,
            offset: chunk.offset,
            droppedBytes: chunk.droppedBytes,
            keepAlive: chunk.keepAlive,
          };
        }
      } catch (err) {
        if (ctx.signal.aborted) return;
        throw agentError(deps, current, err, (e) =>
          e.code === Code.NotFound ? outputUnavailable(current, row) : undefined,
        );
      }
    } finally {
      lifecycle.leave(call.row.uid);
    }
  }

  return {
    followRunning,

    async createProcess(req: CreateProcessRequest, ctx: HandlerContext) {
      const call = await authorizeSandbox(deps, ctx, req.parent, "parent", WorkspaceKind.processes, Action.CREATE);
      if (!req.process) throw requiredField("process");
      if (req.processId !== "") checkField("process_id", req.processId, validateProcessId);
      const definition = validateProcessDefinition(req.process);
      const live = [SandboxEngine_State.STARTING, SandboxEngine_State.RUNNING].map(sandboxStateName);
      const handle = req.autoRun ? requireRunning(deps, call) : undefined;
      if (!handle && !live.includes(call.row.state)) {
        throw failedPrecondition(
          `${call.row.name} is ${call.row.state}; processes can be created only while it is starting or running`,
        );
      }
      const now = context.now();
      for (let attempt = 0; ; attempt++) {
        const id = req.processId !== "" ? req.processId : randomId();
        const name = `${call.row.name}/processes/${id}`;
        const key = processKey(call.row.uid, id);
        const taken = () => {
          if (req.processId !== "" || attempt >= 4) throw alreadyExists(name, PROCESS_RESOURCE_TYPE);
        };
        // Reserved here while it is made, so two calls in this process cannot both make it.
        if (starting.has(key)) {
          taken();
          continue;
        }
        definition.name = name;
        const row: ProcessRow = {
          sandbox_uid: call.row.uid,
          id,
          name,
          state: processStateName(P.PENDING),
          exit_code: null,
          agent_id: null,
          create_time: now,
          start_time: null,
          end_time: null,
          failure_reason: null,
          resource: encodeProcess(definition),
        };
        starting.add(key);
        try {
          if (handle) {
            if (req.processId !== "" && (await loadProcess(db(), call.row.uid, id)))
              throw alreadyExists(name, PROCESS_RESOURCE_TYPE);
            // Started first and recorded once running: a process that cannot start (a secret that
            // cannot be resolved, a missing command) is never created.
            const { agentId, startTime, asked } = await startOnAgent(call, handle, definition);
            const running: ProcessRow = {
              ...row,
              state: processStateName(P.RUNNING),
              agent_id: agentId,
              start_time: startTime,
            };
            const inserted = await context.writeStatement((db) => insertProcess(db, call.row, running, startTime));
            if (!inserted) {
              await handle.client.signalProcess({ processId: agentId, signal: 9 }).catch(() => undefined);
              taken();
              continue;
            }
            watch(call.row, running, handle, asked);
            hub.notify(key);
            return { process: presentProcess(running) };
          }
          const inserted = await context.writeStatement((db) => insertProcess(db, call.row, row, now));
          if (!inserted) {
            taken();
            continue;
          }
          hub.notify(key);
          return { process: presentProcess(row) };
        } finally {
          starting.delete(key);
        }
      }
    },

    async getProcess(req: GetProcessRequest, ctx: HandlerContext) {
      const { row } = await openProcess(ctx, req.name, Action.GET);
      return { process: presentProcess(row) };
    },

    async listProcesses(req: ListProcessesRequest, ctx: HandlerContext) {
      const call = await authorizeSandbox(deps, ctx, req.parent, "parent", WorkspaceKind.processes, Action.LIST);
      const page = await paginate(db().selectFrom("processes").selectAll().where("sandbox_uid", "=", call.row.uid), {
        parent: req.parent,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        filter: req.filter,
        table: processTable,
        tiebreaker: { name: "name", spec: processTable.name! },
        tokens: context.tokens(),
        scope: "processes",
      });
      return { processes: (page.rows as ProcessRow[]).map(presentProcess), nextPageToken: page.nextPageToken };
    },

    async deleteProcess(req: DeleteProcessRequest, ctx: HandlerContext) {
      const { call, row, key } = await openProcess(ctx, req.name, Action.DELETE);
      let last = row;
      if (processStateOf(row.state) === P.RUNNING && row.agent_id) {
        const handle = deps.lifecycle.handle(call.row);
        if (handle) {
          await handle.client.signalProcess({ processId: row.agent_id, signal: 9 }).catch(() => undefined);
          await Promise.race([watches.get(key), new Promise((r) => setTimeout(r, 5_000).unref())]);
          last = (await loadProcess(db(), call.row.uid, row.id)) ?? last;
        }
      }
      await db().deleteFrom("processes").where("sandbox_uid", "=", call.row.uid).where("id", "=", row.id).execute();
      endedRows.delete(key);
      hub.notify(key);
      return { process: presentProcess(last) };
    },

    async startProcess(req: StartProcessRequest, ctx: HandlerContext) {
      const { call, row, key } = await openProcess(ctx, req.name, Action.UPDATE);
      if (processStateOf(row.state) !== P.PENDING || starting.has(key)) {
        throw failedPrecondition(
          `${row.name} is ${starting.has(key) ? "being started" : row.state}; only a pending process can be started`,
        );
      }
      const handle = requireRunning(deps, call);
      starting.add(key);
      try {
        return { process: presentProcess(await launch(call, handle, row)) };
      } finally {
        starting.delete(key);
      }
    },

    async waitProcess(req: WaitProcessRequest, ctx: HandlerContext) {
      const { workspace, sandbox_engine, process } = processPattern.parse(req.name, "name");
      const call = await authorizeSandbox(
        deps,
        ctx,
        `workspaces/${workspace}/sandboxEngines/${sandbox_engine}`,
        "name",
        WorkspaceKind.processes,
        Action.GET,
      );
      // A process this service follows needs no read: its watcher holds the ended row once the
      // end is recorded and the output complete. Otherwise (or when that came out otherwise) the
      // database decides.
      const watcher = watches.get(processKey(call.row.uid, process));
      if (watcher) {
        const ended = await lifecycle.busy(call.row.uid, () => untilAborted(watcher, ctx.signal));
        if (ended && (processStateOf(ended.state) === P.SUCCEEDED || processStateOf(ended.state) === P.FAILED))
          return { process: presentProcess(ended) };
      } else {
        const kept = keptEnded(processKey(call.row.uid, process));
        if (kept) return { process: presentProcess(kept) };
      }
      const row = await loadProcess(db(), call.row.uid, process);
      if (!row) throw notFound(req.name, PROCESS_RESOURCE_TYPE);
      // Ended and followed by no watcher (the common case: the exit was asked for with the start):
      // settled() would answer the same at once, after setting up a wait for news.
      const state = processStateOf(row.state);
      if ((state === P.SUCCEEDED || state === P.FAILED) && !watches.has(processKey(call.row.uid, process)))
        return { process: presentProcess(row) };
      const done = await lifecycle.busy(call.row.uid, () => settled(call, row, ctx.signal));
      return { process: presentProcess(done) };
    },

    async sendProcessSignal(req: SendProcessSignalRequest, ctx: HandlerContext) {
      const { call, row } = await openProcess(ctx, req.name, Action.UPDATE);
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

    async readProcessOutput(req: ReadProcessOutputRequest, ctx: HandlerContext) {
      const { call, row } = await openProcess(ctx, req.name, Action.GET);
      if (processStateOf(row.state) === P.PENDING || !row.agent_id)
        return { data: new Uint8Array(0), droppedBytes: 0n };
      const handle = deps.lifecycle.handle(call.row);
      if (!handle || call.row.state !== sandboxStateName(SandboxEngine_State.RUNNING))
        throw outputUnavailable(call, row);
      const stream = req.outputStream === OutputStream.UNSPECIFIED ? OutputStream.STDOUT : req.outputStream;
      const res = await viaAgent(
        deps,
        call,
        () => handle.client.readOutput({ processId: row.agent_id!, stream }),
        (e) => (e.code === Code.NotFound ? outputUnavailable(call, row) : undefined),
      );
      return { data: res.data, droppedBytes: res.droppedBytes };
    },

    async readProcessOutputFrames(req: ReadProcessOutputFramesRequest, ctx: HandlerContext) {
      const { call, row } = await openProcess(ctx, req.name, Action.GET);
      if (processStateOf(row.state) === P.PENDING || !row.agent_id) return { frames: [], droppedBytes: 0n };
      const handle = deps.lifecycle.handle(call.row);
      if (!handle || call.row.state !== sandboxStateName(SandboxEngine_State.RUNNING))
        throw outputUnavailable(call, row);
      const res = await viaAgent(
        deps,
        call,
        () => handle.client.readOutputFrames({ processId: row.agent_id! }),
        (e) => (e.code === Code.NotFound ? outputUnavailable(call, row) : undefined),
      );
      return {
        frames: res.frames.map((f) => ({ stream: f.stream, data: f.data, offset: f.offset })),
        droppedBytes: res.droppedBytes,
      };
    },

    streamProcessOutput: streamOutput,
  };
}
