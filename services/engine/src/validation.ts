// Checks of engine requests against the rules of spec section 5: values within the profile's
// constraints (unset ones take the profile's defaults), durations, display names, annotations,
// and the DAI configuration with its precedence, editability and reserved keys. A Violations
// collector reports every problem of a request at once, each under its snake_case path.
import type { Duration } from "@bufbuild/protobuf/wkt";
import { durationNanos, validateAnnotationKey, validateDisplayName } from "@aiem/kit/aip";
import { invalidArguments, quote, type FieldViolation } from "@aiem/kit/errors";
import { DEFAULT_CONSTRAINTS } from "@aiem/kit/catalogue-view";
import {
  DAIEngineProfile_ConfigEditability,
  type DAIEngineProfile,
} from "@aiem/proto/enginemanager/v1/dai_engine_profile_pb.js";
import type { H2OEngineProfile } from "@aiem/proto/enginemanager/v1/h2o_engine_profile_pb.js";
import type { NotebookEngineProfile } from "@aiem/proto/enginemanager/v1/notebook_engine_profile_pb.js";
import type {
  ProfileConstraintDuration,
  ProfileConstraintNumeric,
} from "@aiem/proto/enginemanager/v1/profile_constraint_pb.js";
import type { EngineKind } from "./kinds.js";

export type AnyProfile = DAIEngineProfile | H2OEngineProfile | NotebookEngineProfile;

/** Most entries of an engine's `annotations` or `config`. */
export const MAX_MAP_ENTRIES = 256;
/** Longest annotation or configuration value. */
export const MAX_VALUE_LENGTH = 4096;

export class Violations {
  readonly list: FieldViolation[] = [];

  /** `prefix` is the request field holding the engine, e.g. `dai_engine`. */
  constructor(readonly prefix: string) {}

  add(field: string, description: string): void {
    this.list.push({ field: this.prefix ? `${this.prefix}.${field}` : field, description });
  }

  get any(): boolean {
    return this.list.length > 0;
  }

  throwIfAny(): void {
    if (this.list.length > 0) throw invalidArguments(this.list);
  }
}

// ---- durations ----------------------------------------------------------------------------------

/** Whole milliseconds of a valid, non-negative Duration; a problem description otherwise. */
export function durationMs(d: Duration): bigint | string {
  const total = durationNanos(d);
  if (typeof total === "string") return total;
  if (total < 0n) return "must not be negative";
  return total / 1_000_000n;
}

export function formatMs(ms: bigint): string {
  const s = ms / 1000n;
  const frac = ms % 1000n;
  return frac === 0n ? `${s}s` : `${s}.${frac.toString().padStart(3, "0").replace(/0+$/, "")}s`;
}

// ---- resources ----------------------------------------------------------------------------------

/** What a create or update asks for; undefined means "the profile's default". */
export interface RequestedResources {
  cpu?: number | undefined;
  gpu?: number | undefined;
  memoryBytes?: bigint | undefined;
  storageBytes?: bigint | undefined;
  nodeCount?: number | undefined;
  maxIdleDuration?: Duration | undefined;
  maxRunningDuration?: Duration | undefined;
}

export interface Resources {
  cpu: number;
  gpu: number;
  memoryBytes: bigint;
  storageBytes: bigint;
  nodeCount: number | null;
  maxIdleMs: bigint;
  maxRunningMs: bigint;
}

function numericWithin(
  v: Violations,
  field: string,
  constraintName: string,
  c: ProfileConstraintNumeric,
  value: bigint,
): void {
  // Worded as the real service words it ("validation error: max constraint violated: cpu (20)
  // must be <= 3"); clients compare these texts.
  if (value < c.min) {
    v.add(
      field,
      `validation error: min constraint violated: ${field} (${value}) must be >= ${c.min} (the profile's ${constraintName})`,
    );
  } else if (c.max !== undefined && value > c.max) {
    v.add(
      field,
      `validation error: max constraint violated: ${field} (${value}) must be <= ${c.max} (the profile's ${constraintName})`,
    );
  }
}

/** A duration as Go prints it (`10h0m0s`, `30m0s`, `45s`, `1.5s`, `250ms`), as the real service words limits. */
export function formatGoDuration(ms: bigint): string {
  if (ms === 0n) return "0s";
  if (ms < 1000n) return `${ms}ms`;
  const h = ms / 3_600_000n;
  const m = (ms % 3_600_000n) / 60_000n;
  const rest = ms % 60_000n;
  const sec = formatMs(rest);
  if (h > 0n) return `${h}h${m}m${sec}`;
  if (m > 0n) return `${m}m${sec}`;
  return sec;
}

function durationWithin(
  v: Violations,
  field: string,
  constraintName: string,
  c: ProfileConstraintDuration,
  ms: bigint,
): void {
  const min = c.min ? durationMs(c.min) : 0n;
  const max = c.max ? durationMs(c.max) : undefined;
  if (typeof min !== "bigint" || typeof max === "string") return;
  if (ms < min) {
    v.add(
      field,
      `validation error: ${field} (${formatGoDuration(ms)}) must be >= ${formatGoDuration(min)} (the profile's ${constraintName})`,
    );
  } else if (max !== undefined && ms > max) {
    v.add(
      field,
      `validation error: ${field} (${formatGoDuration(ms)}) must be <= ${formatGoDuration(max)} (the profile's ${constraintName})`,
    );
  }
}

function resolveDuration(
  v: Violations,
  field: string,
  constraintName: string,
  c: ProfileConstraintDuration,
  value: Duration | undefined,
  check: boolean,
): bigint {
  if (value === undefined) {
    const def = c.default ? durationMs(c.default) : 0n;
    return typeof def === "bigint" ? def : 0n;
  }
  const ms = durationMs(value);
  if (typeof ms === "string") {
    v.add(field, ms);
    return 0n;
  }
  if (check) durationWithin(v, field, constraintName, c, ms);
  return ms;
}

const INT32_MAX = 2_147_483_647n;

/**
 * Fills unset resources with the profile's defaults and checks each value against the profile's
 * constraints, adding a violation per field that is outside. `check` limits the checks to some
 * fields (an update checks what it changes; values kept from before are not judged again).
 */
export function resolveResources(
  kind: EngineKind,
  profile: AnyProfile,
  req: RequestedResources,
  v: Violations,
  check: (field: string) => boolean = () => true,
): Resources {
  const cpuC = profile.cpuConstraint ?? DEFAULT_CONSTRAINTS.cpu();
  const gpuC = profile.gpuConstraint ?? DEFAULT_CONSTRAINTS.gpu();
  const memC = profile.memoryBytesConstraint ?? DEFAULT_CONSTRAINTS.memoryBytes();
  const idleC = profile.maxIdleDurationConstraint ?? DEFAULT_CONSTRAINTS.maxIdleDuration();
  const runC = profile.maxRunningDurationConstraint ?? DEFAULT_CONSTRAINTS.maxRunningDuration();
  const small = (
    field: string,
    constraintName: string,
    c: ProfileConstraintNumeric,
    value: number | undefined,
  ): number => {
    const n = value === undefined ? c.default : BigInt(value);
    if (value !== undefined && check(field)) numericWithin(v, field, constraintName, c, n);
    return Number(n > INT32_MAX ? INT32_MAX : n);
  };
  const big = (
    field: string,
    constraintName: string,
    c: ProfileConstraintNumeric,
    value: bigint | undefined,
  ): bigint => {
    const n = value === undefined ? c.default : value;
    if (value !== undefined && check(field)) numericWithin(v, field, constraintName, c, n);
    return n;
  };
  const out: Resources = {
    cpu: small("cpu", "cpu_constraint", cpuC, req.cpu),
    gpu: small("gpu", "gpu_constraint", gpuC, req.gpu),
    memoryBytes: big("memory_bytes", "memory_bytes_constraint", memC, req.memoryBytes),
    storageBytes: 0n,
    nodeCount: null,
    maxIdleMs: resolveDuration(
      v,
      "max_idle_duration",
      "max_idle_duration_constraint",
      idleC,
      req.maxIdleDuration,
      check("max_idle_duration"),
    ),
    maxRunningMs: resolveDuration(
      v,
      "max_running_duration",
      "max_running_duration_constraint",
      runC,
      req.maxRunningDuration,
      check("max_running_duration"),
    ),
  };
  if (kind.hasStorage) {
    const storageC =
      (profile as DAIEngineProfile | NotebookEngineProfile).storageBytesConstraint ??
      DEFAULT_CONSTRAINTS.storageBytes();
    out.storageBytes = big("storage_bytes", "storage_bytes_constraint", storageC, req.storageBytes);
  }
  if (kind.hasNodeCount) {
    const nodeC = (profile as H2OEngineProfile).nodeCountConstraint ?? DEFAULT_CONSTRAINTS.nodeCount();
    out.nodeCount = small("node_count", "node_count_constraint", nodeC, req.nodeCount);
  }
  return out;
}

/** The numeric constraints of a profile with what each engine adds to the caller's total. */
export function cumulativeTerms(
  kind: EngineKind,
  profile: AnyProfile,
): Array<{ field: string; constraint: ProfileConstraintNumeric | undefined; column: string }> {
  const terms: Array<{ field: string; constraint: ProfileConstraintNumeric | undefined; column: string }> = [
    { field: "cpu", constraint: profile.cpuConstraint, column: "cpu" },
    { field: "gpu", constraint: profile.gpuConstraint, column: "gpu" },
    { field: "memory_bytes", constraint: profile.memoryBytesConstraint, column: "memory_bytes" },
  ];
  if (kind.hasStorage)
    terms.push({
      field: "storage_bytes",
      constraint: (profile as DAIEngineProfile).storageBytesConstraint,
      column: "storage_bytes",
    });
  if (kind.hasNodeCount)
    terms.push({
      field: "node_count",
      constraint: (profile as H2OEngineProfile).nodeCountConstraint,
      column: "node_count",
    });
  return terms;
}

/**
 * What one engine adds to a cumulative total: its value, and for H2O engines, whose cpu, gpu and
 * memory are per node, that value times its node count.
 */
export function cumulativeAmount(kind: EngineKind, column: string, r: Resources): bigint {
  const nodes = BigInt(r.nodeCount ?? 1);
  switch (column) {
    case "cpu":
      return BigInt(r.cpu) * (kind.hasNodeCount ? nodes : 1n);
    case "gpu":
      return BigInt(r.gpu) * (kind.hasNodeCount ? nodes : 1n);
    case "memory_bytes":
      return r.memoryBytes * (kind.hasNodeCount ? nodes : 1n);
    case "storage_bytes":
      return r.storageBytes;
    case "node_count":
      return nodes;
    default:
      return 0n;
  }
}

// ---- names, labels and maps ---------------------------------------------------------------------

export function checkDisplayName(v: Violations, value: string): void {
  const problem = validateDisplayName(value);
  if (problem) v.add("display_name", problem);
}

function checkValue(v: Violations, field: string, value: string): void {
  if (value.length > MAX_VALUE_LENGTH) v.add(field, `must be at most ${MAX_VALUE_LENGTH} characters`);
}

export function checkAnnotations(v: Violations, annotations: Readonly<Record<string, string>>): void {
  const keys = Object.keys(annotations);
  if (keys.length > MAX_MAP_ENTRIES) {
    v.add("annotations", `may hold at most ${MAX_MAP_ENTRIES} entries`);
    return;
  }
  for (const key of keys) {
    const problem = validateAnnotationKey(key);
    if (problem) v.add(`annotations[${quote(key)}]`, `key ${problem}`);
    else checkValue(v, `annotations[${quote(key)}]`, annotations[key]!);
  }
}

// ---- DAI configuration --------------------------------------------------------------------------

/**
 * DAI configuration keys the engine manager sets itself for every engine: where the server
 * listens and keeps its data (the manager owns the volume and the URL), how users log in (through
 * the edge, with the manager's tokens), and what follows from the engine's resources. A value for
 * one of them from any layer would break the engine or misstate its resources, so such keys are
 * dropped without an error (spec section 5).
 */
export const RESERVED_DAI_CONFIG_KEYS: ReadonlySet<string> = new Set([
  "ip",
  "port",
  "base_url",
  "data_directory",
  "log_directory",
  "authentication_method",
  "local_htpasswd_file",
  "enable_triton_server_local",
  "max_cores",
  "num_gpus_per_experiment",
  "max_memory_bytes",
  "disk_limit_gb",
]);

/** The map without reserved keys. */
export function withoutReserved(config: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(config)) if (!RESERVED_DAI_CONFIG_KEYS.has(key)) out[key] = value;
  return out;
}

/**
 * Checks an engine's own `config` against the profile's `config_editability` and returns it with
 * reserved keys dropped. Unspecified editability means FULL (docs/adr/0053).
 */
export function checkEngineConfig(
  v: Violations,
  profile: DAIEngineProfile,
  config: Readonly<Record<string, string>>,
): Record<string, string> {
  const cleaned = withoutReserved(config);
  const keys = Object.keys(cleaned);
  if (keys.length > MAX_MAP_ENTRIES) {
    v.add("config", `may hold at most ${MAX_MAP_ENTRIES} entries`);
    return cleaned;
  }
  for (const key of keys) {
    if (key === "" || /[\s=]/.test(key) || key.length > 256)
      v.add(`config[${quote(key)}]`, "key must be 1-256 characters without spaces or =");
    else checkValue(v, `config[${quote(key)}]`, cleaned[key]!);
  }
  switch (profile.configEditability) {
    case DAIEngineProfile_ConfigEditability.DISABLED:
      if (keys.length > 0) {
        v.add(
          "config",
          `must be empty: the profile ${quote(profile.name)} does not let users set configuration (config_editability CONFIG_EDITABILITY_DISABLED)`,
        );
      }
      break;
    case DAIEngineProfile_ConfigEditability.BASE_CONFIG_ONLY:
      for (const key of keys) {
        if (!Object.hasOwn(profile.baseConfiguration, key)) {
          v.add(
            `config[${quote(key)}]`,
            `is not in the base configuration of the profile ${quote(profile.name)}, which lets users set only those keys (config_editability CONFIG_EDITABILITY_BASE_CONFIG_ONLY)`,
          );
        }
      }
      break;
    default:
      break;
  }
  return cleaned;
}

/**
 * The configuration an engine runs with. Precedence, highest first: the profile's
 * `configuration_override`, the server's core configuration, the engine's `config`, the profile's
 * `base_configuration`; reserved keys are dropped from every layer.
 */
export function effectiveConfig(
  profile: Pick<DAIEngineProfile, "baseConfiguration" | "configurationOverride">,
  engineConfig: Readonly<Record<string, string>>,
  coreConfig: Readonly<Record<string, string>>,
): Record<string, string> {
  return withoutReserved({
    ...profile.baseConfiguration,
    ...engineConfig,
    ...coreConfig,
    ...profile.configurationOverride,
  });
}
