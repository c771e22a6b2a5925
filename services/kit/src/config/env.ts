/** Raised at start-up for a missing or invalid setting; the message names the variable. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly variable: string;

  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.variable = variable;
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

interface WithDefault<T> {
  default?: T;
}
interface Optional {
  optional: true;
}

/** An unset or empty variable counts as absent, so `FOO=` in a compose file means "default". */
function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function absent<T>(name: string, options: WithDefault<T> | Optional | undefined): T | undefined {
  if (options && "optional" in options) return undefined;
  if (options && "default" in options && options.default !== undefined) return options.default;
  throw new ConfigError(name, "is required but not set");
}

export function readString(env: Env, name: string, options?: WithDefault<string>): string;
export function readString(env: Env, name: string, options: Optional): string | undefined;
export function readString(env: Env, name: string, options?: WithDefault<string> | Optional): string | undefined {
  return raw(env, name) ?? absent(name, options);
}

export interface IntOptions {
  min?: number;
  max?: number;
}

export function readInt(env: Env, name: string, options?: IntOptions & WithDefault<number>): number;
export function readInt(env: Env, name: string, options: IntOptions & Optional): number | undefined;
export function readInt(
  env: Env,
  name: string,
  options?: IntOptions & (WithDefault<number> | Optional),
): number | undefined {
  const value = raw(env, name);
  if (value === undefined) return absent(name, options);
  if (!/^[-+]?\d+$/.test(value)) throw new ConfigError(name, `must be an integer, got ${JSON.stringify(value)}`);
  const n = Number(value);
  const min = options?.min ?? Number.MIN_SAFE_INTEGER;
  const max = options?.max ?? Number.MAX_SAFE_INTEGER;
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return n;
}

const TRUE = new Set(["1", "true", "yes", "on"]);
const FALSE = new Set(["0", "false", "no", "off"]);

export function readBool(env: Env, name: string, options?: WithDefault<boolean>): boolean;
export function readBool(env: Env, name: string, options: Optional): boolean | undefined;
export function readBool(env: Env, name: string, options?: WithDefault<boolean> | Optional): boolean | undefined {
  const value = raw(env, name)?.toLowerCase();
  if (value === undefined) return absent(name, options);
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  throw new ConfigError(name, `must be true or false, got ${JSON.stringify(value)}`);
}

export interface UrlOptions {
  /** Allowed schemes without the colon, e.g. ["http", "https"]. */
  protocols?: readonly string[];
}

/** Returns the URL as written (validated), so credentials and paths stay exactly as given. */
export function readUrl(env: Env, name: string, options?: UrlOptions & WithDefault<string>): string;
export function readUrl(env: Env, name: string, options: UrlOptions & Optional): string | undefined;
export function readUrl(
  env: Env,
  name: string,
  options?: UrlOptions & (WithDefault<string> | Optional),
): string | undefined {
  const value = raw(env, name);
  if (value === undefined) return absent(name, options);
  checkUrl(name, value, options?.protocols);
  return value;
}

function checkUrl(name: string, value: string, protocols: readonly string[] | undefined): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `must be a URL, got ${JSON.stringify(redact(value))}`);
  }
  const scheme = url.protocol.slice(0, -1);
  if (protocols && !protocols.includes(scheme)) {
    throw new ConfigError(name, `must be a ${protocols.map((p) => `${p}://`).join(" or ")} URL, got ${scheme}://`);
  }
}

/** A comma-separated list of URLs, e.g. several NATS servers. */
export function readUrlList(env: Env, name: string, options?: UrlOptions & WithDefault<string[]>): string[];
export function readUrlList(env: Env, name: string, options: UrlOptions & Optional): string[] | undefined;
export function readUrlList(
  env: Env,
  name: string,
  options?: UrlOptions & (WithDefault<string[]> | Optional),
): string[] | undefined {
  const value = raw(env, name);
  if (value === undefined) return absent(name, options);
  const urls = value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  for (const url of urls) checkUrl(name, url, options?.protocols);
  return urls;
}

export function readEnum<const T extends string>(
  env: Env,
  name: string,
  values: readonly T[],
  options?: WithDefault<T>,
): T;
export function readEnum<const T extends string>(
  env: Env,
  name: string,
  values: readonly T[],
  options: Optional,
): T | undefined;
export function readEnum<const T extends string>(
  env: Env,
  name: string,
  values: readonly T[],
  options?: WithDefault<T> | Optional,
): T | undefined {
  const value = raw(env, name);
  if (value === undefined) return absent(name, options);
  if (!(values as readonly string[]).includes(value)) {
    throw new ConfigError(name, `must be one of ${values.join(", ")}, got ${JSON.stringify(value)}`);
  }
  return value as T;
}

/** Hides a password in a URL we quote back in an error. */
function redact(value: string): string {
  return value.replace(/\/\/([^/@:]*):[^/@]*@/, "//$1:***@");
}
