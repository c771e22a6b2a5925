// Resource names (AIP-122): a small pattern engine over `collection/{variable}` patterns, and the
// pattern of every resource kind of the API. Parsing checks both the shape and each id against the
// rules of spec section 5, so a service never queries the database with a malformed name.
import { invalidArgument, quote } from "../errors.js";
import {
  type IdValidator,
  validatePortId,
  validateProcessId,
  validateResourceId,
  validateSecretVersionId,
  validateVersionIdOrAlias,
  validateWorkspaceId,
} from "./ids.js";

/** The variable names of a pattern, e.g. "workspace" | "dai_engine". */
export type PatternVariables<P extends string> = P extends `${string}{${infer V}}${infer Rest}`
  ? V | PatternVariables<Rest>
  : never;

export type ResourceNameParts<V extends string> = { readonly [K in V]: string };

export interface ParseNameOptions<V extends string> {
  /**
   * Variables that may be `-`, meaning "any" (AIP-159), e.g. `workspaces/-` to list across
   * workspaces. Off by default: a `-` in a get or update is a mistake.
   */
  readonly allowWildcard?: readonly V[];
}

export interface ResourcePattern<V extends string> {
  /** The pattern text, e.g. `workspaces/{workspace}/daiEngines/{dai_engine}`. */
  readonly pattern: string;
  /** Variable names in order of appearance. */
  readonly variables: readonly V[];
  /** The collection id of the last segment pair, e.g. `daiEngines`; empty for a bare variable. */
  readonly collection: string;
  /**
   * Parses and validates `name`. Throws INVALID_ARGUMENT naming `field` (default `name`) when the
   * name is empty, has the wrong shape, or an id breaks its rule.
   */
  parse(name: string, field?: string, options?: ParseNameOptions<V>): ResourceNameParts<V>;
  /** Like parse() but returns undefined instead of throwing. */
  tryParse(name: string, options?: ParseNameOptions<V>): ResourceNameParts<V> | undefined;
  /** True when `name` parses. */
  matches(name: string, options?: ParseNameOptions<V>): boolean;
  /** Builds a name. Throws a plain Error on an empty value or one holding `/` (a programming error). */
  format(parts: ResourceNameParts<V>): string;
}

type Segment = { readonly literal: string } | { readonly variable: string; readonly validate: IdValidator };

/**
 * Creates a pattern from `collection/{variable}` segments. Each variable is checked with the
 * validator given for it, or by default the workspace id rule for `{workspace}` and the resource
 * id rule for the others.
 */
export function createResourcePattern<const P extends string>(
  pattern: P,
  validators: Partial<Record<PatternVariables<P>, IdValidator>> = {},
): ResourcePattern<PatternVariables<P>> {
  type V = PatternVariables<P>;
  const segments: Segment[] = pattern.split("/").map((text) => {
    const m = /^\{([a-z][a-z0-9_]*)\}$/.exec(text);
    if (m) {
      const variable = m[1]!;
      const validate =
        (validators as Record<string, IdValidator | undefined>)[variable] ??
        (variable === "workspace" ? validateWorkspaceId : validateResourceId);
      return { variable, validate };
    }
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(text))
      throw new Error(`bad resource pattern segment ${quote(text)} in ${pattern}`);
    return { literal: text };
  });
  const variables = segments.flatMap((s) => ("variable" in s ? [s.variable as V] : []));
  const last = segments.length >= 2 ? segments[segments.length - 2] : undefined;
  const collection = last && "literal" in last ? last.literal : "";

  function check(name: string, options?: ParseNameOptions<V>): ResourceNameParts<V> | string {
    if (typeof name !== "string" || name === "") return "is required";
    const parts = name.split("/");
    if (parts.length !== segments.length) return `${quote(name)} is not a name of the form ${pattern}`;
    const out: Record<string, string> = {};
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i]!;
      const value = parts[i]!;
      if ("literal" in seg) {
        if (value !== seg.literal) return `${quote(name)} is not a name of the form ${pattern}`;
        continue;
      }
      if (value === "-" && options?.allowWildcard?.includes(seg.variable as V)) {
        out[seg.variable] = value;
        continue;
      }
      const problem = seg.validate(value);
      if (problem !== undefined)
        return `the {${seg.variable}} segment of ${quote(name)} ${problem.replace(/ \(got .*\)$/, "")}`;
      out[seg.variable] = value;
    }
    return out as ResourceNameParts<V>;
  }

  return {
    pattern,
    variables,
    collection,
    parse(name, field = "name", options) {
      const result = check(name, options);
      if (typeof result === "string") throw invalidArgument(field, result);
      return result;
    },
    tryParse(name, options) {
      const result = check(name, options);
      return typeof result === "string" ? undefined : result;
    },
    matches(name, options) {
      return typeof check(name, options) !== "string";
    },
    format(parts) {
      return segments
        .map((seg) => {
          if ("literal" in seg) return seg.literal;
          const value = (parts as Record<string, string | undefined>)[seg.variable];
          if (!value || value.includes("/")) {
            throw new Error(`cannot format ${pattern}: bad value ${quote(String(value))} for {${seg.variable}}`);
          }
          return value;
        })
        .join("/");
    },
  };
}

const byId = { workspace: validateWorkspaceId };

export const workspacePattern = createResourcePattern("workspaces/{workspace}", byId);

export const daiEnginePattern = createResourcePattern("workspaces/{workspace}/daiEngines/{dai_engine}");
export const h2oEnginePattern = createResourcePattern("workspaces/{workspace}/h2oEngines/{h2o_engine}");
export const notebookEnginePattern = createResourcePattern("workspaces/{workspace}/notebookEngines/{notebook_engine}");
export const sandboxEnginePattern = createResourcePattern("workspaces/{workspace}/sandboxEngines/{sandbox_engine}");

export const daiEngineProfilePattern = createResourcePattern(
  "workspaces/{workspace}/daiEngineProfiles/{dai_engine_profile}",
);
export const h2oEngineProfilePattern = createResourcePattern(
  "workspaces/{workspace}/h2oEngineProfiles/{h2o_engine_profile}",
);
export const notebookEngineProfilePattern = createResourcePattern(
  "workspaces/{workspace}/notebookEngineProfiles/{notebook_engine_profile}",
);

// Version names accept an alias in place of the id (`workspaces/global/daiEngineVersions/latest`).
export const daiEngineVersionPattern = createResourcePattern(
  "workspaces/{workspace}/daiEngineVersions/{dai_engine_version}",
  { dai_engine_version: validateVersionIdOrAlias },
);
export const h2oEngineVersionPattern = createResourcePattern(
  "workspaces/{workspace}/h2oEngineVersions/{h2o_engine_version}",
  { h2o_engine_version: validateVersionIdOrAlias },
);

export const notebookEngineImagePattern = createResourcePattern(
  "workspaces/{workspace}/notebookEngineImages/{notebook_engine_image}",
);
export const sandboxEngineImagePattern = createResourcePattern(
  "workspaces/{workspace}/sandboxEngineImages/{sandbox_engine_image}",
);
export const sandboxEngineTemplatePattern = createResourcePattern(
  "workspaces/{workspace}/sandboxEngineTemplates/{sandbox_engine_template}",
);

export const portPattern = createResourcePattern(
  "workspaces/{workspace}/sandboxEngines/{sandbox_engine}/ports/{port}",
  {
    port: validatePortId,
  },
);
export const processPattern = createResourcePattern(
  "workspaces/{workspace}/sandboxEngines/{sandbox_engine}/processes/{process}",
  { process: validateProcessId },
);

export const secretPattern = createResourcePattern("workspaces/{workspace}/secrets/{secret}");
export const secretVersionPattern = createResourcePattern(
  "workspaces/{workspace}/secrets/{secret}/versions/{version}",
  {
    version: validateSecretVersionId,
  },
);

/** Every resource pattern by kind, for code that handles names generically (authz, the edge). */
export const resourcePatterns = {
  workspace: workspacePattern,
  daiEngine: daiEnginePattern,
  h2oEngine: h2oEnginePattern,
  notebookEngine: notebookEnginePattern,
  sandboxEngine: sandboxEnginePattern,
  daiEngineProfile: daiEngineProfilePattern,
  h2oEngineProfile: h2oEngineProfilePattern,
  notebookEngineProfile: notebookEngineProfilePattern,
  daiEngineVersion: daiEngineVersionPattern,
  h2oEngineVersion: h2oEngineVersionPattern,
  notebookEngineImage: notebookEngineImagePattern,
  sandboxEngineImage: sandboxEngineImagePattern,
  sandboxEngineTemplate: sandboxEngineTemplatePattern,
  port: portPattern,
  process: processPattern,
  secret: secretPattern,
  secretVersion: secretVersionPattern,
} as const;

/** The workspace id of any workspace-scoped name, without validating the rest (for authz routing). */
export function workspaceOf(name: string): string | undefined {
  const m = /^workspaces\/([^/]+)(\/|$)/.exec(name);
  return m ? m[1] : undefined;
}
