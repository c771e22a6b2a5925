// Update masks (AIP-134/161 as narrowed by the spec): the mask is required, lists exact
// case-sensitive snake_case paths from a per-resource allow-list, or is the single path `*`.
import { invalidArgument, quote } from "../errors.js";

export interface UpdateMaskRules {
  /** Paths a client may update, in the order `*` expands to. */
  readonly allowed: readonly string[];
  /** Fields that exist but cannot change after create; named in their own error. */
  readonly immutable?: readonly string[];
  /** The request field to name in errors; default `update_mask`. */
  readonly field?: string;
}

/**
 * Checks an update mask and returns the paths to apply: `*` expands to every allowed path;
 * duplicates are dropped. Throws INVALID_ARGUMENT naming the first bad path.
 */
export function checkUpdateMask(paths: readonly string[] | undefined, rules: UpdateMaskRules): string[] {
  const field = rules.field ?? "update_mask";
  if (!paths || paths.length === 0) {
    throw invalidArgument(field, "is required: list the fields to update, or * for all of them");
  }
  if (paths.includes("*")) {
    if (paths.length !== 1) throw invalidArgument(field, "* must be the only path when it is used");
    return [...rules.allowed];
  }
  const seen = new Set<string>();
  const out: string[] = [];
  for (let i = 0; i < paths.length; i++) {
    const path = paths[i]!;
    if (path === "") throw invalidArgument(field, `path ${i + 1} is empty`);
    if (rules.allowed.includes(path)) {
      if (!seen.has(path)) {
        seen.add(path);
        out.push(path);
      }
      continue;
    }
    if (rules.immutable?.includes(path)) throw invalidArgument(field, `${quote(path)} cannot be changed after create`);
    throw invalidArgument(
      field,
      `unknown path ${quote(path)}${hint(path, rules.allowed)}; allowed: ${rules.allowed.join(", ")}`,
    );
  }
  return out;
}

// camelCase or differently-cased paths are the common mistake (JSON names are camelCase).
function hint(path: string, allowed: readonly string[]): string {
  const snake = path.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replace(/^_/, "");
  const lower = path.toLowerCase();
  const match = allowed.find((a) => a === snake || a.toLowerCase() === lower);
  return match ? ` (paths are exact snake_case field names: did you mean ${quote(match)}?)` : "";
}

/** `max_idle_duration` -> `maxIdleDuration`: the protobuf-es / JSON name of a mask path segment. */
export function maskPathToCamelCase(path: string): string {
  return path
    .split(".")
    .map((seg) => seg.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()))
    .join(".");
}
