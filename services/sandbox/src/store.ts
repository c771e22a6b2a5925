// Rows of the sandbox schema, their conversion to the API's messages, and the events that record
// their changes. Every writer passes its transaction, so a change and its event commit together.
import { randomUUID } from "node:crypto";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { durationFromMs, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type OutboxMessage, eventSubject, enqueue, enqueueWhen } from "@aiem/kit/events";
import { sql } from "kysely";
import { EventSchema } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import {
  ProcessStateChangedSchema,
  SandboxEngineStateChangedSchema,
} from "@aiem/proto/enginemanager/events/v1/sandbox_events_pb.js";
import { type Port, PortSchema, Port_State } from "@aiem/proto/enginemanager/sandbox/v1/port_pb.js";
import { type Process, ProcessSchema, Process_State } from "@aiem/proto/enginemanager/sandbox/v1/process_pb.js";
import {
  type SandboxEngine,
  SandboxEngineSchema,
  SandboxEngine_PendingReason,
  SandboxEngine_State,
} from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { Executor } from "./service-context.js";

/** The name of the service in events' `source`. */
export const EVENT_SOURCE = "sandbox";

/** What the reconciler drives a sandbox towards. */
export type Desired = "running" | "terminated" | "deleted";

export interface SandboxRow {
  workspace: string;
  id: string;
  name: string;
  uid: string;
  display_name: string;
  state: string;
  desired: Desired;
  creator: string;
  creator_display_name: string;
  sandbox_engine_image: string;
  sandbox_engine_template: string;
  runtime_id: string;
  max_idle_ms: bigint;
  /** The template's running limit; 0 means none. */
  max_running_ms: bigint;
  create_time: Date;
  update_time: Date;
  last_activity: Date;
  /** When the sandbox first became RUNNING; its running limit counts from here. */
  start_time: Date | null;
  failure_reason: string | null;
  /** The replica whose host runs the agent (its runtime's placement); null until one takes it. */
  placement: string | null;
  /**
   * Whether a read (GetSandboxEngine, ListSandboxEngines) has shown the sandbox RUNNING. Until one
   * has, and for SEEN_RUNNING_GRACE_MS after its creation at most, calls into it answer that it is
   * not in running state, as they do while it starts.
   */
  seen_running: boolean;
  resource: Uint8Array;
}

export interface ProcessRow {
  sandbox_uid: string;
  id: string;
  name: string;
  state: string;
  exit_code: number | null;
  agent_id: string | null;
  create_time: Date;
  start_time: Date | null;
  end_time: Date | null;
  /** Why a failed process ended, where more is known than its exit code. */
  failure_reason: string | null;
  resource: Uint8Array;
}

export interface PortRow {
  sandbox_uid: string;
  port: number;
  name: string;
  public: boolean;
  create_time: Date;
  resource: Uint8Array;
}

// ---- enums as stored (their full names, as the API's JSON and filters spell them) ---------------

const SANDBOX_STATES: Record<SandboxEngine_State, string> = {
  [SandboxEngine_State.UNSPECIFIED]: "STATE_UNSPECIFIED",
  [SandboxEngine_State.STARTING]: "STATE_STARTING",
  [SandboxEngine_State.RUNNING]: "STATE_RUNNING",
  [SandboxEngine_State.TERMINATING]: "STATE_TERMINATING",
  [SandboxEngine_State.TERMINATED]: "STATE_TERMINATED",
  [SandboxEngine_State.FAILED]: "STATE_FAILED",
  [SandboxEngine_State.DELETING]: "STATE_DELETING",
};
const SANDBOX_STATE_OF = new Map(Object.entries(SANDBOX_STATES).map(([k, v]) => [v, Number(k) as SandboxEngine_State]));

const PROCESS_STATES: Record<Process_State, string> = {
  [Process_State.UNSPECIFIED]: "STATE_UNSPECIFIED",
  [Process_State.PENDING]: "STATE_PENDING",
  [Process_State.RUNNING]: "STATE_RUNNING",
  [Process_State.SUCCEEDED]: "STATE_SUCCEEDED",
  [Process_State.FAILED]: "STATE_FAILED",
};
const PROCESS_STATE_OF = new Map(Object.entries(PROCESS_STATES).map(([k, v]) => [v, Number(k) as Process_State]));

export const sandboxStateName = (s: SandboxEngine_State): string => SANDBOX_STATES[s];
export const sandboxStateOf = (name: string): SandboxEngine_State =>
  SANDBOX_STATE_OF.get(name) ?? SandboxEngine_State.UNSPECIFIED;
export const processStateName = (s: Process_State): string => PROCESS_STATES[s];
export const processStateOf = (name: string): Process_State => PROCESS_STATE_OF.get(name) ?? Process_State.UNSPECIFIED;
export const SANDBOX_STATE_NAMES: readonly string[] = Object.values(SANDBOX_STATES).filter(
  (s) => s !== "STATE_UNSPECIFIED",
);
export const PROCESS_STATE_NAMES: readonly string[] = Object.values(PROCESS_STATES).filter(
  (s) => s !== "STATE_UNSPECIFIED",
);

// ---- sandbox engines ----------------------------------------------------------------------------

/**
 * How far a starting sandbox has got; the runtime reports the launch, or (on Kubernetes) what it
 * waits for in the API's own words; the rest is the state.
 */
export type StartPhase =
  | "creating"
  | "launched"
  | { readonly reason: SandboxEngine_PendingReason; readonly message: string };

const PENDING: Partial<Record<SandboxEngine_State, [SandboxEngine_PendingReason, string]>> = {
  [SandboxEngine_State.STARTING]: [
    SandboxEngine_PendingReason.CREATING_RESOURCES,
    "setting up the sandbox's isolated environment",
  ],
  [SandboxEngine_State.TERMINATING]: [
    SandboxEngine_PendingReason.DELETING_RESOURCES,
    "stopping the sandbox's processes and removing its resources",
  ],
  [SandboxEngine_State.DELETING]: [
    SandboxEngine_PendingReason.DELETING_RESOURCES,
    "stopping the sandbox's processes and removing its files",
  ],
};

/**
 * The sandbox engine as clients see it. The stored resource holds what never changes (names,
 * snapshots, annotations); state comes from its column, the idle time is computed now, and the
 * pending reason follows from the state and, while starting, from `phase`.
 */
export function presentSandbox(row: SandboxRow, idleMs: number, phase: StartPhase = "creating"): SandboxEngine {
  const engine = fromBinary(SandboxEngineSchema, row.resource);
  engine.state = sandboxStateOf(row.state);
  engine.currentIdleDuration = durationFromMs(Math.max(0, Math.floor(idleMs)));
  const starting = engine.state === SandboxEngine_State.STARTING;
  const pending =
    starting && typeof phase === "object"
      ? ([phase.reason, phase.message] as const)
      : starting && phase === "launched"
        ? ([SandboxEngine_PendingReason.WAITING_READINESS, "waiting for the sandbox's agent to answer"] as const)
        : PENDING[engine.state];
  engine.pendingReason = pending?.[0] ?? SandboxEngine_PendingReason.UNSPECIFIED;
  engine.pendingMessage = pending?.[1] ?? "";
  engine.failureReason = engine.state === SandboxEngine_State.FAILED ? (row.failure_reason ?? "") : "";
  // Sandboxes created before templates had a running limit were never limited. Copies of
  // templates from before the catalogue showed unset numbers as 0 get the same treatment, since
  // the official client reads them without a null check.
  const info = engine.sandboxEngineTemplateInfo;
  if (info) {
    if (!info.maxRunningDuration) info.maxRunningDuration = durationFromMs(Number(row.max_running_ms));
    info.milliCpuLimit ??= 0;
    info.milliCpuRequest ??= info.milliCpuLimit;
    info.memoryBytesRequest ??= info.memoryBytesLimit;
    info.storageBytes ??= 0n;
  }
  return engine;
}

export function encodeSandbox(engine: SandboxEngine): Uint8Array {
  const stored = create(SandboxEngineSchema, engine);
  stored.state = SandboxEngine_State.UNSPECIFIED;
  stored.currentIdleDuration = undefined;
  stored.pendingReason = SandboxEngine_PendingReason.UNSPECIFIED;
  stored.pendingMessage = "";
  stored.failureReason = "";
  return toBinary(SandboxEngineSchema, stored);
}

/**
 * How long after its creation a sandbox that no read has shown RUNNING yet still refuses calls
 * into it. Clients of the real service, where a sandbox takes seconds to start, read its state
 * before they use it; one that never reads is served after this long.
 */
export const SEEN_RUNNING_GRACE_MS = 10_000;

/**
 * The state calls into the sandbox go by: RUNNING only once a read showed it (or the grace
 * passed), so that a create answered STARTING is never followed by calls that work before the
 * caller saw it run, however fast (or warm) it started.
 */
export function stateForCalls(row: SandboxRow, now: Date): string {
  const running = sandboxStateName(SandboxEngine_State.RUNNING);
  if (row.state !== running || row.seen_running) return row.state;
  return now.getTime() - row.create_time.getTime() >= SEEN_RUNNING_GRACE_MS
    ? running
    : sandboxStateName(SandboxEngine_State.STARTING);
}

/** Records that a read showed these sandboxes RUNNING (see stateForCalls). */
export async function markSeenRunning(exec: Executor, rows: readonly SandboxRow[]): Promise<void> {
  const running = sandboxStateName(SandboxEngine_State.RUNNING);
  const uids = rows.filter((r) => r.state === running && !r.seen_running).map((r) => r.uid);
  if (uids.length === 0) return;
  await exec
    .updateTable("sandbox_engines")
    .set({ seen_running: true })
    .where("uid", "in", uids)
    .where("state", "=", running)
    .execute();
}

export async function loadSandbox(
  exec: Executor,
  workspace: string,
  id: string,
  forUpdate = false,
): Promise<SandboxRow | undefined> {
  let q = exec.selectFrom("sandbox_engines").selectAll().where("workspace", "=", workspace).where("id", "=", id);
  if (forUpdate) q = q.forUpdate();
  return (await q.executeTakeFirst()) as SandboxRow | undefined;
}

export async function loadSandboxByUid(
  exec: Executor,
  uid: string,
  forUpdate = false,
): Promise<SandboxRow | undefined> {
  let q = exec.selectFrom("sandbox_engines").selectAll().where("uid", "=", uid);
  if (forUpdate) q = q.forUpdate();
  return (await q.executeTakeFirst()) as SandboxRow | undefined;
}

/**
 * Moves a sandbox to `state` (and optionally `desired`) when it is still in one of `from`, and
 * records the change as an event. Returns the updated row, or undefined when it was elsewhere.
 */
export async function transitionSandbox(
  trx: Executor,
  uid: string,
  from: readonly SandboxEngine_State[],
  to: SandboxEngine_State,
  now: Date,
  changes: { desired?: Desired; failureReason?: string | null; lastActivity?: Date; startTime?: Date } = {},
): Promise<{ row: SandboxRow; previous: SandboxEngine_State } | undefined> {
  const row = await loadSandboxByUid(trx, uid, true);
  if (!row) return undefined;
  const previous = sandboxStateOf(row.state);
  if (!from.includes(previous)) return undefined;
  const values: Record<string, unknown> = { state: sandboxStateName(to), update_time: now };
  if (changes.desired !== undefined) values.desired = changes.desired;
  if (changes.failureReason !== undefined) values.failure_reason = changes.failureReason;
  if (changes.lastActivity !== undefined) values.last_activity = changes.lastActivity;
  if (changes.startTime !== undefined) values.start_time = changes.startTime;
  await trx.updateTable("sandbox_engines").set(values).where("uid", "=", uid).execute();
  const updated: SandboxRow = {
    ...row,
    state: sandboxStateName(to),
    update_time: now,
    ...(changes.desired !== undefined ? { desired: changes.desired } : {}),
    ...(changes.failureReason !== undefined ? { failure_reason: changes.failureReason } : {}),
    ...(changes.lastActivity !== undefined ? { last_activity: changes.lastActivity } : {}),
    ...(changes.startTime !== undefined ? { start_time: changes.startTime } : {}),
  };
  if (previous !== to) await enqueueSandboxState(trx, updated, previous, now, 0);
  return { row: updated, previous };
}

/**
 * STARTING -> RUNNING with its event, in one statement: the start's last step, on a cold start's
 * path. `row` is the row as the pass that started the agent read it; the statement matches only
 * while the sandbox is still STARTING, and nothing else changes a starting sandbox's other columns.
 */
export async function recordSandboxRunning(
  exec: Executor,
  row: SandboxRow,
  now: Date,
): Promise<SandboxRow | undefined> {
  const running = sandboxStateName(SandboxEngine_State.RUNNING);
  const update = exec
    .updateTable("sandbox_engines")
    .set({ state: running, update_time: now, last_activity: now, start_time: now })
    .where("uid", "=", row.uid)
    .where("state", "=", sandboxStateName(SandboxEngine_State.STARTING))
    .returning("uid");
  const updated: SandboxRow = { ...row, state: running, update_time: now, last_activity: now, start_time: now };
  const event = sandboxStateMessage(updated, SandboxEngine_State.STARTING, now, 0);
  const result = await sql<{
    uid: string;
  }>`with moved as (${update}), event as (${enqueueWhen("moved", event)}) select uid from moved`.execute(exec);
  return result.rows.length > 0 ? updated : undefined;
}

/** Records a sandbox engine's state change; `row` undefined-state means the deletion finished. */
export async function enqueueSandboxState(
  trx: Executor,
  row: SandboxRow,
  previous: SandboxEngine_State,
  now: Date,
  idleMs: number,
  deleted = false,
): Promise<void> {
  await enqueue(trx, sandboxStateMessage(row, previous, now, idleMs, deleted));
}

/**
 * Inserts a new sandbox engine row with the events of the states it went through (one for a
 * cold start's STARTING, two when a warm sandbox makes it RUNNING at once), in one statement.
 * False when the name is taken: then nothing is written.
 */
export async function insertSandbox(
  exec: Executor,
  row: SandboxRow,
  states: readonly SandboxEngine_State[],
  now: Date,
): Promise<boolean> {
  const insert = exec
    .insertInto("sandbox_engines")
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .returning("uid");
  let previous = SandboxEngine_State.UNSPECIFIED;
  const events = states.map((state) => {
    const message = sandboxStateMessage({ ...row, state: sandboxStateName(state) }, previous, now, 0);
    previous = state;
    return message;
  });
  const result = await sql<{
    uid: string;
  }>`with inserted as (${insert}), events as (${enqueueWhen("inserted", ...events)}) select uid from inserted`.execute(
    exec,
  );
  return result.rows.length > 0;
}

function sandboxStateMessage(
  row: SandboxRow,
  previous: SandboxEngine_State,
  now: Date,
  idleMs: number,
  deleted = false,
): OutboxMessage {
  const id = randomUUID();
  const event = create(EventSchema, {
    id,
    time: timestampFromDate(now),
    source: EVENT_SOURCE,
    payload: {
      case: "sandboxEngineStateChanged",
      value: create(SandboxEngineStateChangedSchema, {
        sandboxEngine: row.name,
        uid: row.uid,
        previousState: previous,
        state: deleted ? SandboxEngine_State.UNSPECIFIED : sandboxStateOf(row.state),
        creator: row.creator,
        snapshot: deleted ? undefined : presentSandbox(row, idleMs),
      }),
    },
  });
  return { id, subject: eventSubject("sandboxes", row.workspace, row.id, "state"), data: toBinary(EventSchema, event) };
}

// ---- processes ----------------------------------------------------------------------------------

/** The process as clients see it: the stored definition with the state columns laid over it. */
export function presentProcess(row: ProcessRow): Process {
  const p = fromBinary(ProcessSchema, row.resource);
  p.state = processStateOf(row.state);
  p.exitCode = row.exit_code ?? undefined;
  p.createTime = timestampFromDate(row.create_time);
  p.startTime = row.start_time ? timestampFromDate(row.start_time) : undefined;
  p.endTime = row.end_time ? timestampFromDate(row.end_time) : undefined;
  p.failureReason = row.failure_reason ?? "";
  return p;
}

export function encodeProcess(p: Process): Uint8Array {
  const stored = create(ProcessSchema, {
    name: p.name,
    command: p.command,
    args: p.args,
    workingDirectory: p.workingDirectory,
    environmentVariables: p.environmentVariables,
    secretEnvironmentVariables: p.secretEnvironmentVariables,
  });
  return toBinary(ProcessSchema, stored);
}

export async function loadProcess(
  exec: Executor,
  sandboxUid: string,
  id: string,
  forUpdate = false,
): Promise<ProcessRow | undefined> {
  let q = exec.selectFrom("processes").selectAll().where("sandbox_uid", "=", sandboxUid).where("id", "=", id);
  if (forUpdate) q = q.forUpdate();
  return (await q.executeTakeFirst()) as ProcessRow | undefined;
}

/** Records a process's state change. Never carries its command, arguments or environment. */
export async function enqueueProcessState(
  trx: Executor,
  sandbox: Pick<SandboxRow, "workspace" | "id">,
  row: Pick<ProcessRow, "id" | "name" | "exit_code">,
  previous: Process_State,
  state: Process_State,
  time: Date,
): Promise<void> {
  await enqueue(trx, processStateMessage(sandbox, row, previous, state, time));
}

/**
 * Inserts a new process row and its state event in one statement (one round trip on the hot
 * path of every process start). False when the id is taken: then neither is written.
 */
export async function insertProcess(
  exec: Executor,
  sandbox: Pick<SandboxRow, "workspace" | "id">,
  row: ProcessRow,
  time: Date,
): Promise<boolean> {
  const insert = exec
    .insertInto("processes")
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .returning("id");
  const event = processStateMessage(sandbox, row, Process_State.UNSPECIFIED, processStateOf(row.state), time);
  const result = await sql<{
    id: string;
  }>`with inserted as (${insert}), event as (${enqueueWhen("inserted", event)}) select id from inserted`.execute(exec);
  return result.rows.length > 0;
}

/**
 * Records the end of a running process and its state event in one statement, when the row is
 * still the running process the agent knows as `agentId`. Returns the ended row, or undefined
 * when it is not (ended otherwise, started again, deleted).
 */
export async function endProcess(
  exec: Executor,
  sandbox: Pick<SandboxRow, "uid" | "workspace" | "id">,
  row: Pick<ProcessRow, "id" | "name">,
  agentId: string,
  state: Process_State,
  exitCode: number,
  endTime: Date,
  failureReason?: string,
): Promise<ProcessRow | undefined> {
  const update = exec
    .updateTable("processes")
    .set({
      state: processStateName(state),
      exit_code: exitCode,
      end_time: endTime,
      failure_reason: failureReason ?? null,
    })
    .where("sandbox_uid", "=", sandbox.uid)
    .where("id", "=", row.id)
    .where("agent_id", "=", agentId)
    .where("state", "=", processStateName(Process_State.RUNNING))
    .returningAll();
  const event = processStateMessage(sandbox, { ...row, exit_code: exitCode }, Process_State.RUNNING, state, endTime);
  const result =
    await sql<ProcessRow>`with ended as (${update}), event as (${enqueueWhen("ended", event)}) select * from ended`.execute(
      exec,
    );
  return result.rows[0];
}

function processStateMessage(
  sandbox: Pick<SandboxRow, "workspace" | "id">,
  row: Pick<ProcessRow, "id" | "name" | "exit_code">,
  previous: Process_State,
  state: Process_State,
  time: Date,
): OutboxMessage {
  const id = randomUUID();
  const event = create(EventSchema, {
    id,
    time: timestampFromDate(time),
    source: EVENT_SOURCE,
    payload: {
      case: "processStateChanged",
      value: create(ProcessStateChangedSchema, {
        process: row.name,
        previousState: previous,
        state,
        exitCode: row.exit_code ?? undefined,
        time: timestampFromDate(time),
      }),
    },
  });
  return {
    id,
    subject: eventSubject("sandboxes", sandbox.workspace, sandbox.id, "processes", row.id, "state"),
    data: toBinary(EventSchema, event),
  };
}

/** The failure reason of a process that was running when its sandbox stopped. */
export const SANDBOX_STOPPED = "its sandbox stopped while it ran (the process was killed with it)";

/**
 * Ends every running process of a sandbox whose agent stopped: they were killed with it (SIGKILL,
 * exit code 137). Pending processes stay pending; they cannot start until the sandbox runs.
 */
export async function failLiveProcesses(trx: Executor, sandbox: SandboxRow, now: Date): Promise<ProcessRow[]> {
  const rows = (await trx
    .selectFrom("processes")
    .selectAll()
    .where("sandbox_uid", "=", sandbox.uid)
    .where("state", "in", [processStateName(Process_State.RUNNING)])
    .forUpdate()
    .execute()) as ProcessRow[];
  for (const row of rows) {
    const ended: ProcessRow = {
      ...row,
      state: processStateName(Process_State.FAILED),
      exit_code: 137,
      end_time: now,
      failure_reason: SANDBOX_STOPPED,
    };
    await trx
      .updateTable("processes")
      .set({ state: ended.state, exit_code: 137, end_time: now, failure_reason: SANDBOX_STOPPED })
      .where("sandbox_uid", "=", row.sandbox_uid)
      .where("id", "=", row.id)
      .execute();
    await enqueueProcessState(trx, sandbox, ended, Process_State.RUNNING, Process_State.FAILED, now);
  }
  return rows;
}

// ---- ports --------------------------------------------------------------------------------------

export function decodePort(row: PortRow): Port {
  return fromBinary(PortSchema, row.resource);
}

export function encodePort(port: Port): Uint8Array {
  const stored = create(PortSchema, port);
  // Derived when read: the URLs from the configured public URL, the state from the sandbox.
  stored.internalUrl = "";
  stored.publicUrl = "";
  stored.state = Port_State.UNSPECIFIED;
  stored.failureReason = "";
  return toBinary(PortSchema, stored);
}

export async function loadPort(
  exec: Executor,
  sandboxUid: string,
  port: number,
  forUpdate = false,
): Promise<PortRow | undefined> {
  let q = exec.selectFrom("ports").selectAll().where("sandbox_uid", "=", sandboxUid).where("port", "=", port);
  if (forUpdate) q = q.forUpdate();
  return (await q.executeTakeFirst()) as PortRow | undefined;
}
