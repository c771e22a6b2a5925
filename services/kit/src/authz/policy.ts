import { readFile } from "node:fs/promises";
import { Code, ConnectError } from "@connectrpc/connect";
import { parse as parseYaml } from "yaml";
import type { Principal } from "../identity/principal.js";
import { ADMIN_ACTIONS, isCatalogueKind, permissionName, READ_ACTIONS, type Action, type Kind } from "./permissions.js";

/*
 * The one place that answers "may this principal do ACTION on this kind in this workspace".
 *
 *   administrators   everything, everywhere (catalogue writes, MIGRATE_CREATOR, LIST_ALL)
 *   catalogue kinds  GET, LIST, LIST_ASSIGNED for every authenticated user; the rest admin only
 *   members          every action on the workspace's engines, sandboxes, secrets and drive,
 *                    except MIGRATE_CREATOR and LIST_ALL
 *   viewers          GET, LIST, LIST_ASSIGNED there
 *
 * Without a policy file (embedded default) everyone authenticated is a member of every
 * workspace and the administrators are the tokens minted with --admin. With a file, its
 * `admins` are administrators too (as are --admin tokens: whoever can mint them holds the
 * signing key anyway). `users/*` in a list means every authenticated user. Per-resource rules
 * (creator-only sandbox calls, shared notebooks) are the services' own, on top of this.
 */

export type WorkspaceRole = "admin" | "member" | "viewer";

export interface Policy {
  /** The policy file, or undefined for the embedded default. */
  readonly source: string | undefined;
  /** Principal names listed as administrators in the file. */
  readonly admins: ReadonlySet<string>;
  isAdmin(principal: Principal): boolean;
  /** The principal's role in a workspace (`team-a` or `workspaces/team-a`), if any. */
  role(principal: Principal, workspace: string): WorkspaceRole | undefined;
  /** `workspace` is `team-a`, `workspaces/team-a`, or `-` for all workspaces. */
  allows(principal: Principal, action: Action, kind: Kind, workspace: string): boolean;
  /** As allows(), but throws ConnectError PERMISSION_DENIED naming the permission. */
  check(principal: Principal, action: Action, kind: Kind, workspace: string): void;
}

export class PolicyError extends Error {
  override readonly name = "PolicyError";
}

interface Bindings {
  readonly members: ReadonlySet<string>;
  readonly viewers: ReadonlySet<string>;
}

const EVERYONE = "users/*";
const PRINCIPAL = /^users\/[^/\s]+$/;
const WORKSPACE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** Reads the policy once at start; no file means the embedded default. */
export async function createPolicy(policyFile?: string): Promise<Policy> {
  if (policyFile === undefined) return embeddedPolicy();
  let text: string;
  try {
    text = await readFile(policyFile, "utf8");
  } catch (err) {
    throw new PolicyError(`policy file ${policyFile}: cannot be read: ${(err as Error).message}`, { cause: err });
  }
  return parsePolicy(text, policyFile);
}

/** Parses YAML or JSON (JSON is YAML); errors name `source` and the offending entry. */
export function parsePolicy(text: string, source: string): Policy {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new PolicyError(`policy file ${source}: not valid YAML or JSON: ${(err as Error).message}`, { cause: err });
  }
  return policyFromDocument(doc ?? {}, source);
}

export function embeddedPolicy(): Policy {
  return buildPolicy(undefined, new Set(), undefined);
}

export function policyFromDocument(doc: unknown, source: string): Policy {
  const fail = (where: string, problem: string): never => {
    throw new PolicyError(`policy file ${source}: ${where}: ${problem}`);
  };
  if (!isPlainObject(doc)) return fail("top level", "must be a mapping with admins and workspaces");
  for (const key of Object.keys(doc)) {
    if (key !== "admins" && key !== "workspaces") fail(key, "unknown key (expected admins, workspaces)");
  }
  const principals = (value: unknown, where: string): Set<string> => {
    if (value === undefined || value === null) return new Set();
    if (!Array.isArray(value)) return fail(where, "must be a list of principals like users/alice");
    value.forEach((item, i) => {
      if (typeof item !== "string" || !PRINCIPAL.test(item)) {
        fail(`${where}[${i}]`, `${JSON.stringify(item)} is not a principal like users/alice`);
      }
    });
    return new Set(value as string[]);
  };
  const admins = principals(doc.admins, "admins");
  if (admins.has(EVERYONE)) fail("admins", `${EVERYONE} may not be an administrator`);
  const workspaces = new Map<string, Bindings>();
  const ws = doc.workspaces;
  if (ws !== undefined && ws !== null) {
    if (!isPlainObject(ws)) fail("workspaces", "must be a mapping of workspace id to members and viewers");
    for (const [id, entry] of Object.entries(ws as Record<string, unknown>)) {
      const where = `workspaces.${id}`;
      if (!WORKSPACE.test(id)) fail(where, "is not a valid workspace id");
      if (entry !== null && !isPlainObject(entry)) fail(where, "must be a mapping with members and viewers");
      const bindings = (entry ?? {}) as Record<string, unknown>;
      for (const key of Object.keys(bindings)) {
        if (key !== "members" && key !== "viewers") fail(`${where}.${key}`, "unknown key (expected members, viewers)");
      }
      workspaces.set(id, {
        members: principals(bindings.members, `${where}.members`),
        viewers: principals(bindings.viewers, `${where}.viewers`),
      });
    }
  }
  return buildPolicy(source, admins, workspaces);
}

function buildPolicy(
  source: string | undefined,
  admins: ReadonlySet<string>,
  workspaces: Map<string, Bindings> | undefined,
): Policy {
  const isAdmin = (p: Principal) => p.admin || admins.has(p.name);

  const role = (p: Principal, workspace: string): WorkspaceRole | undefined => {
    if (isAdmin(p)) return "admin";
    const id = workspaceId(workspace);
    if (id === "-") return undefined;
    if (!workspaces) return "member";
    const b = workspaces.get(id);
    if (!b) return undefined;
    if (b.members.has(p.name) || b.members.has(EVERYONE)) return "member";
    if (b.viewers.has(p.name) || b.viewers.has(EVERYONE)) return "viewer";
    return undefined;
  };

  const allows = (p: Principal, action: Action, kind: Kind, workspace: string): boolean => {
    if (isAdmin(p)) return true;
    if (ADMIN_ACTIONS.has(action)) return false;
    if (isCatalogueKind(kind)) return READ_ACTIONS.has(action) && workspaceId(workspace) !== "-";
    switch (role(p, workspace)) {
      case "member":
        return true;
      case "viewer":
        return READ_ACTIONS.has(action);
      default:
        return false;
    }
  };

  return {
    source,
    admins,
    isAdmin,
    role,
    allows,
    check(p, action, kind, workspace) {
      if (allows(p, action, kind, workspace)) return;
      throw new ConnectError(
        `permission denied: ${p.name} lacks ${permissionName(kind, action)} on workspaces/${workspaceId(workspace)}`,
        Code.PermissionDenied,
      );
    },
  };
}

function workspaceId(workspace: string): string {
  return workspace.startsWith("workspaces/") ? workspace.slice("workspaces/".length) : workspace;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
