// The checks every call inside a sandbox makes, in order: a well-formed name, the workspace
// permission, the sandbox's existence, that the caller created it (for other members the same
// NOT_FOUND as a missing sandbox), then (after the request's
// own fields are checked) that it runs. Also the translation of the agent's errors and the
// rules for sandbox paths.
import type { HandlerContext } from "@connectrpc/connect";
import { sandboxEnginePattern } from "@aiem/kit/aip";
import type { Action, WorkspaceKind } from "@aiem/kit/authz";
import {
  Code,
  ConnectError,
  failedPrecondition,
  invalidArgument,
  notFound,
  permissionDenied,
  requiredField,
  unavailable,
} from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import { principalOf } from "@aiem/kit/server";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { Lifecycle } from "./lifecycle.js";
import { pathSegments } from "./path-segments.js";
import type { SandboxHandle } from "./runtime/index.js";
import type { ServiceContext } from "./service-context.js";
import { loadSandbox, sandboxStateName, stateForCalls, type SandboxRow } from "./store.js";

export const SANDBOX_RESOURCE_TYPE = "enginemanager.ai/SandboxEngine";
const MAX_PATH_BYTES = 4096;

export interface AccessDeps {
  readonly context: ServiceContext;
  readonly lifecycle: Lifecycle;
}

/** A sandbox its creator is working in. */
export interface SandboxCall {
  readonly principal: Principal;
  readonly row: SandboxRow;
  readonly workspace: string;
  readonly sandboxId: string;
}

/** Parses the sandbox name, checks the permission and that the caller created the sandbox. */
export async function authorizeSandbox(
  deps: AccessDeps,
  ctx: HandlerContext,
  name: string,
  field: string,
  kind: WorkspaceKind,
  action: Action,
): Promise<SandboxCall> {
  return authorizeSandboxFor(deps, principalOf(ctx), name, field, kind, action);
}

/** authorizeSandbox for a caller authenticated outside an RPC (the plain HTTP routes). */
export async function authorizeSandboxFor(
  deps: AccessDeps,
  principal: Principal,
  name: string,
  field: string,
  kind: WorkspaceKind,
  action: Action,
): Promise<SandboxCall> {
  const { workspace, sandbox_engine: sandboxId } = sandboxEnginePattern.parse(name, field);
  deps.context.policy.check(principal, action, kind, workspace);
  const row = await loadSandbox(deps.context.database().db, workspace, sandboxId);
  if (!row) throw notFound(name, SANDBOX_RESOURCE_TYPE);
  if (row.creator !== principal.name) {
    // Another member learns nothing, not even that the sandbox exists: the same answer as a
    // missing one. Administrators may see the sandbox anyway, so they are told why.
    if (!deps.context.policy.isAdmin(principal)) throw notFound(name, SANDBOX_RESOURCE_TYPE);
    throw permissionDenied(
      `permission denied: only the creator of ${name} may use its files, processes, ports, drive and secure store`,
    );
  }
  await deps.lifecycle.requireServedHere(row);
  // Where every replica reaches every agent, the first call to a replica takes the sandbox over.
  await deps.lifecycle.hold(row);
  deps.lifecycle.touch(row.uid);
  return { principal, row, workspace, sandboxId };
}

/** The agent of a sandbox that must be running for the call. */
export function requireRunning(deps: AccessDeps, call: SandboxCall): SandboxHandle {
  const running = sandboxStateName(SandboxEngine_State.RUNNING);
  const state = stateForCalls(call.row, deps.context.now());
  if (state !== running) {
    throw failedPrecondition(`${call.row.name} is not in running state: it is ${state}`, {
      type: "STATE",
      subject: call.row.name,
      description: `the sandbox engine is ${state}, not ${running}`,
    });
  }
  const handle = deps.lifecycle.handle(call.row);
  if (!handle) throw unavailable(`the agent of ${call.row.name} is being started again; retry shortly`);
  return handle;
}

/**
 * Runs a call on the agent and turns its failures into the API's: `translate` may replace an
 * error (a missing parent directory is FAILED_PRECONDITION to clients); a broken channel is the
 * sandbox having stopped.
 */
export async function viaAgent<T>(
  deps: AccessDeps,
  call: SandboxCall,
  work: () => Promise<T>,
  translate?: (err: ConnectError) => ConnectError | undefined,
): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw agentError(deps, call, err, translate);
  }
}

export function agentError(
  deps: AccessDeps,
  call: Pick<SandboxCall, "row">,
  err: unknown,
  translate?: (err: ConnectError) => ConnectError | undefined,
): ConnectError {
  const e = ConnectError.from(err);
  const replaced = translate?.(e);
  if (replaced) return replaced;
  if (
    (e.code === Code.Unavailable || e.code === Code.Internal || e.code === Code.Canceled) &&
    !deps.lifecycle.handle(call.row)
  ) {
    return failedPrecondition(`${call.row.name} is not in running state: it stopped while the call was running`);
  }
  if (e.code === Code.Unknown || e.code === Code.Internal) {
    deps.context.logger.warn("a sandbox agent call failed", {
      sandbox: call.row.name,
      code: Code[e.code],
      error: e.rawMessage,
    });
    return new ConnectError("the sandbox's agent failed to carry out the call", Code.Internal);
  }
  // The agent's messages name sandbox paths only, never host paths or request contents.
  return new ConnectError(e.rawMessage, e.code);
}

/** A missing parent directory is FAILED_PRECONDITION in the API (the agent says NOT_FOUND). */
export function parentMissing(path: string): (err: ConnectError) => ConnectError | undefined {
  return (err) =>
    err.code === Code.NotFound && err.rawMessage.startsWith(`${path}: parent directory`)
      ? failedPrecondition(`${err.rawMessage}; set create_parent_directories to create it`)
      : undefined;
}

/**
 * Checks a sandbox path field: required, absolute, no `..` segment, not absurdly long. Returns it
 * normalised (repeated slashes and `.` segments dropped), the form the agent's messages use.
 */
export function sandboxPath(field: string, value: string): string {
  if (value === "") throw requiredField(field);
  if (!value.startsWith("/")) throw invalidArgument(field, "must be an absolute path starting with /");
  if (Buffer.byteLength(value) > MAX_PATH_BYTES)
    throw invalidArgument(field, `must be at most ${MAX_PATH_BYTES} bytes`);
  return `/${pathSegments(field, value, "paths cannot leave the sandbox").join("/")}`;
}
