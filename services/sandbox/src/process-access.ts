// What every process call shares: its dependencies, the key a process is announced under, and
// the opening checks (the process's name, the caller's access to its sandbox, the row itself).
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { processPattern } from "@aiem/kit/aip";
import { type Action, WorkspaceKind } from "@aiem/kit/authz";
import { type ConnectError, failedPrecondition, notFound } from "@aiem/kit/errors";
import type { ProcessService } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { type AccessDeps, type SandboxCall, authorizeSandbox } from "./access.js";
import type { ChangeHub } from "./lifecycle.js";
import type { SecretResolver } from "./process-definition.js";
import type { Executor } from "./service-context.js";
import { loadProcess, loadSandboxByUid, sandboxStateName, type ProcessRow } from "./store.js";

export const PROCESS_RESOURCE_TYPE = "enginemanager.ai/Process";

export interface ProcessDeps extends AccessDeps {
  readonly hub: ChangeHub;
  readonly secrets: SecretResolver | undefined;
  readonly keepAliveMs: number;
}

/** The handlers of ProcessService, typed by the service so a missing or misspelt one fails the type check. */
export type ProcessServiceImpl = ServiceImpl<typeof ProcessService>;

export const processKey = (uid: string, id: string) => `process:${uid}/${id}`;

/** A process its sandbox's creator is working with. */
export interface ProcessCall {
  readonly call: SandboxCall;
  readonly row: ProcessRow;
  readonly key: string;
}

/** Parses a process name, checks the caller's access to its sandbox and loads the process. */
export async function openProcess(
  deps: ProcessDeps,
  ctx: HandlerContext,
  name: string,
  action: Action,
): Promise<ProcessCall> {
  const { call, process } = await authorizeProcess(deps, ctx, name, action);
  const row = await loadProcess(deps.context.database().db, call.row.uid, process);
  if (!row) throw notFound(name, PROCESS_RESOURCE_TYPE);
  return { call, row, key: processKey(call.row.uid, process) };
}

/** openProcess without loading the process: its sandbox call and its id. */
export async function authorizeProcess(
  deps: ProcessDeps,
  ctx: HandlerContext,
  name: string,
  action: Action,
): Promise<{ call: SandboxCall; process: string }> {
  const { workspace, sandbox_engine, process } = processPattern.parse(name, "name");
  const call = await authorizeSandbox(
    deps,
    ctx,
    `workspaces/${workspace}/sandboxEngines/${sandbox_engine}`,
    "name",
    WorkspaceKind.processes,
    action,
  );
  return { call, process };
}

/** The sandbox states in which a process can be created, and a pending one can still start. */
export const LIVE_SANDBOX_STATES: readonly string[] = [SandboxEngine_State.STARTING, SandboxEngine_State.RUNNING].map(
  sandboxStateName,
);

/** Throws FAILED_PRECONDITION when a pending process's sandbox can no longer start it. */
export async function requireStartable(db: Executor, sandboxUid: string, row: ProcessRow): Promise<void> {
  const sandbox = await loadSandboxByUid(db, sandboxUid);
  if (!sandbox || !LIVE_SANDBOX_STATES.includes(sandbox.state)) {
    throw failedPrecondition(
      `${row.name} has not started and cannot start: its sandbox engine is ${sandbox?.state ?? "gone"}`,
    );
  }
}

/** Why a process's output cannot be read: its sandbox stopped, or was started again since. */
export function outputUnavailable(call: SandboxCall, row: ProcessRow): ConnectError {
  return failedPrecondition(
    call.row.state === sandboxStateName(SandboxEngine_State.RUNNING)
      ? `the output of ${row.name} was lost when its sandbox engine was started again`
      : `the output of ${row.name} is kept only while its sandbox engine runs; it is ${call.row.state}`,
  );
}
