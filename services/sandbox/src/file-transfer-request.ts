// What the file transfer routes share: their path, the caller's token, the query's parameters,
// and errors as the REST API's JSON Status.
import { type Action, WorkspaceKind } from "@aiem/kit/authz";
import { type ConnectError, httpStatusOf, invalidArgument, unauthenticated } from "@aiem/kit/errors";
import type { Authenticator, Principal } from "@aiem/kit/identity";
import type { Logger } from "@aiem/kit/logger";
import type { HttpHandler } from "@aiem/kit/server";
import { type AccessDeps, authorizeSandboxFor, type SandboxCall, sandboxPath } from "./access.js";

export type NodeRequest = Parameters<HttpHandler>[0];
export type NodeResponse = Parameters<HttpHandler>[1];

export const FILE_TRANSFER_PATH =
  /^\/v1\/(workspaces\/[^/?#]+\/sandboxEngines\/[^/?#:]+)\/filesystem:(upload|download)$/;

export interface FileTransferDeps extends AccessDeps {
  readonly authenticator: Authenticator;
  readonly logger: Logger;
}

/** Answers `err` as the REST API's JSON Status, with the REST mapping of its code (the edge's transcoder's). */
export function sendError(
  res: NodeResponse,
  err: ConnectError,
  extra: Record<string, string> = {},
  status = httpStatusOf(err.code),
): void {
  if (res.headersSent) {
    // The status line is gone: cutting the body short is how the client learns of it.
    res.destroy();
    return;
  }
  const body = JSON.stringify({ code: err.code, message: err.rawMessage, details: [] });
  res.writeHead(status, {
    ...extra,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
  });
  res.end(body);
}

export function flag(query: URLSearchParams, names: readonly string[], fallback: boolean): boolean {
  for (const name of names) {
    const value = query.get(name);
    if (value === null) continue;
    if (value === "true" || value === "1" || value === "") return true;
    if (value === "false" || value === "0") return false;
    throw invalidArgument(names[0]!, `must be true or false (got ${JSON.stringify(value.slice(0, 32))})`);
  }
  return fallback;
}

export function pathParameter(query: URLSearchParams): string {
  const value = query.get("path") ?? "";
  if (value.includes("\0")) throw invalidArgument("path", "must not contain a NUL character");
  return sandboxPath("path", value);
}

export async function authenticate(deps: FileTransferDeps, req: NodeRequest): Promise<Principal> {
  const header = req.headers.authorization;
  try {
    return await deps.authenticator.authenticate(typeof header === "string" ? header : undefined);
  } catch {
    throw unauthenticated("missing or invalid bearer token");
  }
}

/**
 * The sandbox `name` and the file the query's `path` names, once the caller is known and allowed
 * `action` on it, checked in that order (as ReadFile and WriteFile do).
 */
export async function transferTarget(
  deps: FileTransferDeps,
  req: NodeRequest,
  name: string,
  query: URLSearchParams,
  action: Action,
): Promise<{ call: SandboxCall; path: string }> {
  const principal = await authenticate(deps, req);
  const call = await authorizeSandboxFor(deps, principal, name, "name", WorkspaceKind.sandboxEngines, action);
  return { call, path: pathParameter(query) };
}
