// Field checks shared by the catalogue kinds. A Violations collector gathers every problem of a
// request, so a client fixing a form learns about all its mistakes in one round trip; the
// resulting INVALID_ARGUMENT names each field by its snake_case path.
import type { DescEnum } from "@bufbuild/protobuf";
import type { Duration } from "@bufbuild/protobuf/wkt";
import { durationNanos, validateDisplayName, validateAnnotationKey } from "@aiem/kit/aip";
import { invalidArguments, quote, type FieldViolation } from "@aiem/kit/errors";
import { parse as parseYaml } from "yaml";
import { ImagePullPolicy, ImagePullPolicySchema } from "@aiem/proto/enginemanager/v1/image_pull_policy_pb.js";
import type {
  ProfileConstraintDuration,
  ProfileConstraintNumeric,
} from "@aiem/proto/enginemanager/v1/profile_constraint_pb.js";

/** Longest free-text value (options, class names, resource names) we keep. */
export const MAX_TEXT_LENGTH = 4096;
/** Longest YAML document (pod template specs, tolerations). */
export const MAX_YAML_LENGTH = 64 * 1024;
/** Most entries in a list or map field. */
export const MAX_ITEMS = 256;

export class Violations {
  readonly list: FieldViolation[] = [];

  /** `prefix` is the request field holding the resource, e.g. `dai_engine_profile`. */
  constructor(readonly prefix: string) {}

  path(field: string): string {
    return this.prefix ? `${this.prefix}.${field}` : field;
  }

  add(field: string, description: string): void {
    this.list.push({ field: this.path(field), description });
  }

  /** Throws INVALID_ARGUMENT listing every violation, if there are any. */
  throwIfAny(): void {
    if (this.list.length > 0) throw invalidArguments(this.list);
  }
}

export function checkDisplayName(v: Violations, field: string, value: string): void {
  const problem = validateDisplayName(value);
  if (problem) v.add(field, problem);
}

/** Free text: at most `max` characters and no NUL (PostgreSQL text cannot hold it). */
export function checkText(v: Violations, field: string, value: string, max = MAX_TEXT_LENGTH): void {
  if (value.length > max) v.add(field, `must be at most ${max} characters`);
  else if (value.includes("\0")) v.add(field, "must not contain NUL characters");
}

export function checkRequiredText(v: Violations, field: string, value: string, max = MAX_TEXT_LENGTH): void {
  if (value.trim() === "") v.add(field, "is required");
  else checkText(v, field, value, max);
}

/** A YAML document that is a mapping (`kind: "mapping"`) or a list; empty means none. */
export function checkYaml(v: Violations, field: string, text: string, kind: "mapping" | "list"): void {
  if (text.trim() === "") return;
  if (text.length > MAX_YAML_LENGTH) {
    v.add(field, `must be at most ${MAX_YAML_LENGTH} characters`);
    return;
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    const line = /line (\d+)/.exec((err as Error).message)?.[1];
    v.add(field, `is not valid YAML${line ? ` (line ${line})` : ""}`);
    return;
  }
  const isList = Array.isArray(doc);
  const isMapping = doc !== null && typeof doc === "object" && !isList;
  if (kind === "mapping" && !isMapping) v.add(field, "must be a YAML mapping (a Kubernetes pod template spec)");
  if (kind === "list" && !isList) v.add(field, "must be a YAML list (of Kubernetes tolerations)");
}

/** A value of the enum, unknown numbers (possible in binary requests) included. */
export function checkEnum(v: Violations, field: string, schema: DescEnum, value: number): void {
  if (!schema.values.some((e) => e.number === value)) {
    v.add(
      field,
      `${value} is not a value of ${schema.name}; use one of ${schema.values.map((e) => e.name).join(", ")}`,
    );
  }
}

const IMAGE = /^[A-Za-z0-9][A-Za-z0-9._\-/:@+]*$/;

/** A container image reference such as `ghcr.io/acme/notebook:2024.1`. */
export function checkImage(v: Violations, field: string, value: string): void {
  if (value === "") {
    v.add(field, "is required: a container image reference such as ghcr.io/acme/image:1.0");
    return;
  }
  if (value.length > 1024) {
    v.add(field, "must be at most 1024 characters");
    return;
  }
  if (!IMAGE.test(value)) {
    v.add(field, `${quote(value)} is not a container image reference such as ghcr.io/acme/image:1.0 (no spaces)`);
  }
}

/** The fields of an image or a version that say which container image runs and how it is pulled. */
export interface ImageSource {
  image: string;
  imagePullPolicy: ImagePullPolicy;
  readonly imagePullSecrets: readonly string[];
}

/** Without a pull policy an image pulls only what is missing, as the real service answers. */
export function defaultPullPolicy(r: ImageSource): void {
  if (r.imagePullPolicy === ImagePullPolicy.UNSPECIFIED) r.imagePullPolicy = ImagePullPolicy.IF_NOT_PRESENT;
}

export function validateImageSource(r: ImageSource, v: Violations): void {
  checkImage(v, "image", r.image);
  checkEnum(v, "image_pull_policy", ImagePullPolicySchema, r.imagePullPolicy);
  checkPullSecrets(v, "image_pull_secrets", r.imagePullSecrets);
}

const K8S_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** Names of registry secrets: Kubernetes object names (lowercase, digits, `-` and `.`). */
export function checkPullSecrets(v: Violations, field: string, names: readonly string[]): void {
  if (names.length > MAX_ITEMS) {
    v.add(field, `may hold at most ${MAX_ITEMS} names`);
    return;
  }
  names.forEach((name, i) => {
    if (!K8S_NAME.test(name)) {
      v.add(
        `${field}[${i}]`,
        `${quote(name)} is not a secret name: lowercase letters, digits, - and ., at most 253, starting and ending alphanumeric`,
      );
    }
  });
}

/** Identity-provider role names: non-empty text. */
export function checkRoles(v: Violations, field: string, roles: readonly string[]): void {
  if (roles.length > MAX_ITEMS) {
    v.add(field, `may hold at most ${MAX_ITEMS} roles`);
    return;
  }
  roles.forEach((role, i) => {
    if (role.trim() === "") v.add(`${field}[${i}]`, "must not be empty");
    else checkText(v, `${field}[${i}]`, role, 256);
  });
}

/** A string map whose keys pass `keyRule` (returns a problem or undefined). */
export function checkStringMap(
  v: Violations,
  field: string,
  map: Readonly<Record<string, string>>,
  keyRule: (key: string) => string | undefined,
): void {
  const keys = Object.keys(map);
  if (keys.length > MAX_ITEMS) {
    v.add(field, `may hold at most ${MAX_ITEMS} entries`);
    return;
  }
  for (const key of keys) {
    const problem = keyRule(key);
    if (problem) v.add(`${field}[${quote(key)}]`, `key ${problem}`);
    else checkText(v, `${field}[${quote(key)}]`, map[key]!);
  }
}

export const configKeyRule = (key: string): string | undefined =>
  key === ""
    ? "must not be empty"
    : key.length > 256
      ? "must be at most 256 characters"
      : /[\s\0=]/.test(key)
        ? "must not contain spaces or ="
        : undefined;

export const envNameRule = (key: string): string | undefined =>
  /^[A-Za-z_][A-Za-z0-9_]{0,255}$/.test(key)
    ? undefined
    : "must be an environment variable name: letters, digits and _, not starting with a digit";

export const annotationKeyRule = validateAnnotationKey;

// ---- durations ----------------------------------------------------------------------------------

/** Whole milliseconds, rounded down (what list filters compare). */
export function durationToMs(d: Duration | undefined): bigint | null {
  if (!d) return null;
  const n = durationNanos(d);
  return typeof n === "string" ? null : n / 1_000_000n;
}

export function formatNanos(n: bigint): string {
  const s = n / 1_000_000_000n;
  const frac = n % 1_000_000_000n;
  return frac === 0n ? `${s}s` : `${s}.${frac.toString().padStart(9, "0").replace(/0+$/, "")}s`;
}

/** A duration that must be set (when `required`) and not negative, or above zero with `positive`. */
export function checkDuration(
  v: Violations,
  field: string,
  d: Duration | undefined,
  options: { required?: boolean; positive?: boolean } = {},
): bigint | undefined {
  if (!d) {
    if (options.required) v.add(field, "is required, for example 3600s");
    return undefined;
  }
  const n = durationNanos(d);
  if (typeof n === "string") {
    v.add(field, n);
    return undefined;
  }
  if (n < 0n) v.add(field, `must not be negative (got ${formatNanos(n)})`);
  else if (options.positive && n === 0n) v.add(field, "must be longer than 0s");
  return n;
}

// ---- profile constraints ------------------------------------------------------------------------

/**
 * min <= default <= max (max unset means no upper limit), min at least `floor`, and a cumulative
 * maximum, when set, at least the default (else not even one engine with the default fits).
 */
export function checkNumericConstraint(
  v: Violations,
  field: string,
  c: ProfileConstraintNumeric | undefined,
  floor: bigint,
): void {
  if (!c) return;
  const before = v.list.length;
  if (c.min < floor) v.add(`${field}.min`, `must be at least ${floor} (got ${c.min})`);
  if (c.max !== undefined && c.max < c.min) v.add(`${field}.max`, `must not be below min (${c.max} < ${c.min})`);
  if (v.list.length > before) return;
  if (c.default < c.min) v.add(`${field}.default`, `must not be below min (${c.default} < ${c.min})`);
  else if (c.max !== undefined && c.default > c.max)
    v.add(`${field}.default`, `must not be above max (${c.default} > ${c.max})`);
  if (c.cumulativeMax !== undefined && c.cumulativeMax < c.default) {
    v.add(`${field}.cumulative_max`, `must not be below default (${c.cumulativeMax} < ${c.default})`);
  }
}

/** min and default required, none negative, min <= default <= max (max unset: no upper limit). */
export function checkDurationConstraint(v: Violations, field: string, c: ProfileConstraintDuration | undefined): void {
  if (!c) return;
  const before = v.list.length;
  const min = checkDuration(v, `${field}.min`, c.min, { required: true });
  const def = checkDuration(v, `${field}.default`, c.default, { required: true });
  const max = checkDuration(v, `${field}.max`, c.max);
  if (v.list.length > before || min === undefined || def === undefined) return;
  if (max !== undefined && max < min) {
    v.add(`${field}.max`, `must not be below min (${formatNanos(max)} < ${formatNanos(min)})`);
    return;
  }
  if (def < min) v.add(`${field}.default`, `must not be below min (${formatNanos(def)} < ${formatNanos(min)})`);
  else if (max !== undefined && def > max)
    v.add(`${field}.default`, `must not be above max (${formatNanos(def)} > ${formatNanos(max)})`);
}
