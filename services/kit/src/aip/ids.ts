// The identifier rules of the API (spec section 5). Each validator returns what is wrong with a
// value as a sentence fragment ("must be ...") or undefined when the value is fine, so callers can
// collect several violations or throw one with checkField().
import { invalidArgument, quote } from "../errors.js";

/** Returns a description of what is wrong with `value`, or undefined when it is valid. */
export type IdValidator = (value: string) => string | undefined;

export const MAX_ID_LENGTH = 63;
export const MAX_DISPLAY_NAME_LENGTH = 63;
export const MAX_ANNOTATION_KEY_LENGTH = 63;
export const MIN_PORT = 1024;
export const MAX_PORT = 65535;

const RESOURCE_ID = /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;
const PROCESS_ID = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
// Workspaces are often named by UUIDs, which may start with a digit.
const WORKSPACE_ID = PROCESS_ID;
// One or more dot-separated numbers, then an optional pre-release of dot-separated
// alphanumeric/hyphen identifiers. Build metadata (`+...`) is not accepted: ids appear in URL
// paths and query strings, where `+` reads as a space.
const VERSION_ID = /^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))*(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;
const ANNOTATION_KEY = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;
const PORT_ID = /^[1-9][0-9]{3,4}$/;
const SECRET_VERSION_ID = /^[1-9][0-9]{0,17}$/;

/** The id rules as regular expressions, for what describes the API (the OpenAPI document). */
export const ID_PATTERNS = {
  resource: RESOURCE_ID,
  process: PROCESS_ID,
  workspace: WORKSPACE_ID,
  version: VERSION_ID,
  port: PORT_ID,
  secretVersion: SECRET_VERSION_ID,
} as const;

const RESOURCE_ID_RULE =
  "must be 1-63 characters of lowercase letters, digits and hyphens, starting with a letter and ending with a letter or digit";

function got(value: string): string {
  return ` (got ${quote(value)})`;
}

/** Engine, profile, image, template and secret ids: `^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`. */
export const validateResourceId: IdValidator = (value) =>
  RESOURCE_ID.test(value) ? undefined : RESOURCE_ID_RULE + got(value);

/** Workspace ids: like resource ids, but may start with a digit (a UUID such as `8cf6b17d-...`). */
export const validateWorkspaceId: IdValidator = (value) =>
  WORKSPACE_ID.test(value)
    ? undefined
    : "must be 1-63 characters of lowercase letters, digits and hyphens, starting and ending with a letter or digit" +
      got(value);

/** Process ids: like resource ids, but may start with a digit. */
export const validateProcessId: IdValidator = (value) =>
  PROCESS_ID.test(value)
    ? undefined
    : "must be 1-63 characters of lowercase letters, digits and hyphens, starting and ending with a letter or digit" +
      got(value);

/**
 * DAI and H2O version ids: one or more numeric segments (no leading zeros) and an optional
 * pre-release, at most 63 characters: `1`, `12`, `1.10`, `1.10.3`, `1.10.3.1`, `1.10.3-alpha`.
 */
export const validateVersionId: IdValidator = (value) => {
  if (value.length > MAX_ID_LENGTH) return `must be at most ${MAX_ID_LENGTH} characters${got(value)}`;
  return VERSION_ID.test(value)
    ? undefined
    : "must be a version of one or more dot-separated numbers and an optional pre-release, such as 12, 1.10, 1.10.3.1 or 1.10.3-alpha" +
        got(value);
};

/** Version aliases: 1-63 lowercase letters, digits, hyphens; start with a letter, end alphanumeric. */
export const validateAlias: IdValidator = (value) =>
  RESOURCE_ID.test(value) ? undefined : RESOURCE_ID_RULE + got(value);

/** The last segment of a version name may be the version id or one of its aliases. */
export const validateVersionIdOrAlias: IdValidator = (value) =>
  validateVersionId(value) === undefined || RESOURCE_ID.test(value)
    ? undefined
    : `must be a version id such as 1.10.3 or an alias such as latest${got(value)}`;

/** True when a version-name segment is an alias rather than a version id (aliases start with a letter). */
export function isAlias(segment: string): boolean {
  return RESOURCE_ID.test(segment);
}

/** Port ids: the port number, 1024-65535, written without leading zeros. */
export const validatePortId: IdValidator = (value) => {
  if (PORT_ID.test(value)) {
    const n = Number(value);
    if (n >= MIN_PORT && n <= MAX_PORT) return undefined;
  }
  return `must be a port number from ${MIN_PORT} to ${MAX_PORT}${got(value)}`;
};

/** Secret version ids: a positive integer assigned by the server, or `latest`. */
export const validateSecretVersionId: IdValidator = (value) =>
  value === "latest" || SECRET_VERSION_ID.test(value)
    ? undefined
    : `must be a positive version number or latest${got(value)}`;

/** Display names: at most 63 characters (Unicode code points, not bytes). */
export const validateDisplayName: IdValidator = (value) => {
  let n = 0;
  for (const _ of value) {
    if (++n > MAX_DISPLAY_NAME_LENGTH) return `must be at most ${MAX_DISPLAY_NAME_LENGTH} characters${got(value)}`;
  }
  return undefined;
};

/** Annotation keys: 1-63 characters, begin and end alphanumeric, dashes, underscores, dots inside. */
export const validateAnnotationKey: IdValidator = (value) =>
  ANNOTATION_KEY.test(value)
    ? undefined
    : "must be 1-63 characters, begin and end with a letter or digit, with only letters, digits, dashes, underscores and dots inside" +
      got(value);

/** Throws INVALID_ARGUMENT naming `field` when `validator` rejects `value`. */
export function checkField(field: string, value: string, validator: IdValidator): void {
  const problem = validator(value);
  if (problem !== undefined) throw invalidArgument(field, problem);
}

/** Throws INVALID_ARGUMENT naming the first bad key, as `field["key"]`, of an annotation map. */
export function checkAnnotations(field: string, annotations: Readonly<Record<string, string>> | undefined): void {
  if (!annotations) return;
  for (const key of Object.keys(annotations)) {
    const problem = validateAnnotationKey(key);
    if (problem !== undefined) throw invalidArgument(`${field}[${quote(key)}]`, `key ${problem}`);
  }
}
