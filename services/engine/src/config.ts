import {
  ConfigError,
  readCommonEnv,
  readInt,
  readString,
  readUrl,
  type CommonConfig,
  type Env,
} from "@aiem/kit/config";

/** What the engine service needs on top of the common settings. */
export interface EngineSettings {
  /**
   * AIEM_PAGE_TOKEN_KEY: base64 of 32 bytes that signs list page tokens (shared with the
   * catalogue). Unset means the key kept in the data directory (`keys/page-token.key`).
   */
  readonly pageTokenKey: string | undefined;
  /**
   * AIEM_DAI_CORE_CONFIG: a JSON object of Driverless AI configuration keys and string values
   * that every DAI engine gets. It ranks below a profile's `configuration_override` and above the
   * engine's own `config` (spec section 5).
   */
  readonly daiCoreConfig: Readonly<Record<string, string>>;
  /**
   * AIEM_ENGINE_RUNTIME (or AIEM_RUNTIME, its name in the issue tracker and in deployments that
   * set one switch for every service): where engines run. `local` (the default) runs them on this
   * machine; `kubernetes` makes their objects in a cluster (kubeconfig from `KUBECONFIG`, or
   * in-cluster; docs/adr/0161, 0195).
   */
  readonly runtime: "local" | "kubernetes";
  /** AIEM_KUBERNETES_NAMESPACE: the namespace of the engines' objects on Kubernetes (default `default`). */
  readonly kubernetesNamespace?: string;
  /**
   * AIEM_PUBLIC_URL: the base URL users reach the product at, for `login_url`, `api_url` and
   * notebook access URLs. Unset means `http://<AIEM_HOST>:<AIEM_PORT>`. Tests pass a function
   * because the port is known only once the host listens.
   */
  readonly publicUrl: string | (() => string) | undefined;
  /**
   * AIEM_JUPYTER_COMMAND: the Jupyter Notebook executable for notebook engines. Unset means
   * `jupyter-notebook` when it is on the PATH; `none` (or nothing found) means notebook engines
   * run the stand-in server instead of Jupyter.
   */
  readonly jupyterCommand: string | undefined;
  /**
   * AIEM_H2O_SERVER: what H2O engines run. `h2o-3` (the default) runs a real H2O-3 cluster, one
   * JVM per node; an engine fails, naming what is missing, where Java or the jar is not there.
   * `stand-in` runs the stand-in server instead, for tests and machines without Java.
   */
  readonly h2oServer: "h2o-3" | "stand-in";
  /** AIEM_JAVA: the java executable for H2O engines, a path or a name on the PATH (default `java`). */
  readonly javaCommand: string;
  /**
   * AIEM_H2O_JAR: the H2O-3 server jar. Unset means the one the `h2o` package installed in the
   * repository's `.venv` (put there by `npm run setup`).
   */
  readonly h2oJar: string | undefined;
  /** AIEM_ENGINE_RECONCILE_INTERVAL_MS: how often the reconciler looks for due work when nothing woke it. */
  readonly reconcileIntervalMs: number;
  /** AIEM_ENGINE_CHECK_INTERVAL_MS: how often a running engine is checked (process alive, disk use, limits). */
  readonly checkIntervalMs: number;
  /** AIEM_ENGINE_START_TIMEOUT_MS: an engine that does not answer its health check within this fails. */
  readonly startTimeoutMs: number;
  /** AIEM_ENGINE_STOP_TIMEOUT_MS: how long a stopping engine gets after SIGTERM before SIGKILL. */
  readonly stopTimeoutMs: number;
  /** AIEM_ENGINE_ACTIVITY_FLUSH_MS: how often traffic through engine URLs is written as activity. */
  readonly activityFlushMs: number;
  /**
   * AIEM_INTERNAL_KEY: the tickets on notebook access URLs are sealed with a key derived from it,
   * which the edge must share, and the sessions of engine origins with another, which the engine
   * service's replicas share. Unset means the data directory's `keys/internal.key`.
   */
  readonly internalKey?: string | undefined;
}

export type EngineConfig = CommonConfig & EngineSettings;

export const ENGINE_SETTING_DEFAULTS = {
  reconcileIntervalMs: 1_000,
  checkIntervalMs: 5_000,
  startTimeoutMs: 180_000,
  stopTimeoutMs: 10_000,
  activityFlushMs: 1_000,
} as const;

/** Settings for a module built in code (tests, benchmarks): defaults plus what is given. */
export function engineSettings(overrides: Partial<EngineSettings> = {}): EngineSettings {
  return {
    pageTokenKey: undefined,
    daiCoreConfig: {},
    runtime: "local",
    publicUrl: undefined,
    jupyterCommand: undefined,
    h2oServer: "h2o-3",
    javaCommand: "java",
    h2oJar: undefined,
    ...ENGINE_SETTING_DEFAULTS,
    ...overrides,
  };
}

/** Reads and checks the engine service's environment; a bad value is a ConfigError naming its variable. */
export function readEngineEnv(env: Env = process.env): EngineConfig {
  // The engine's own switch wins over the general one.
  const runtimeVariable =
    env.AIEM_ENGINE_RUNTIME === undefined && env.AIEM_RUNTIME !== undefined ? "AIEM_RUNTIME" : "AIEM_ENGINE_RUNTIME";
  const runtime = readString(env, runtimeVariable, { default: "local" });
  if (runtime !== "local" && runtime !== "kubernetes")
    throw new ConfigError(runtimeVariable, `must be "local" or "kubernetes", got ${JSON.stringify(runtime)}`);
  return {
    ...readCommonEnv(env),
    pageTokenKey: readString(env, "AIEM_PAGE_TOKEN_KEY", { optional: true }),
    daiCoreConfig: readCoreConfig(env),
    runtime,
    kubernetesNamespace: readString(env, "AIEM_KUBERNETES_NAMESPACE", { default: "default" }),
    publicUrl: readUrl(env, "AIEM_PUBLIC_URL", { optional: true, protocols: ["http", "https"] })?.replace(/\/+$/, ""),
    jupyterCommand: readString(env, "AIEM_JUPYTER_COMMAND", { optional: true }),
    h2oServer: readH2OServer(env),
    javaCommand: readString(env, "AIEM_JAVA", { default: "java" }),
    h2oJar: readString(env, "AIEM_H2O_JAR", { optional: true }),
    reconcileIntervalMs: readTiming(env, "AIEM_ENGINE_RECONCILE_INTERVAL_MS", "reconcileIntervalMs", 10),
    checkIntervalMs: readTiming(env, "AIEM_ENGINE_CHECK_INTERVAL_MS", "checkIntervalMs", 10),
    startTimeoutMs: readTiming(env, "AIEM_ENGINE_START_TIMEOUT_MS", "startTimeoutMs", 100),
    stopTimeoutMs: readTiming(env, "AIEM_ENGINE_STOP_TIMEOUT_MS", "stopTimeoutMs", 0),
    activityFlushMs: readTiming(env, "AIEM_ENGINE_ACTIVITY_FLUSH_MS", "activityFlushMs", 10),
    internalKey: readString(env, "AIEM_INTERNAL_KEY", { optional: true }),
  };
}

/** One of the engine's timings, in milliseconds: at least `min`, and the setting's default when unset. */
function readTiming(env: Env, variable: string, setting: keyof typeof ENGINE_SETTING_DEFAULTS, min: number): number {
  return readInt(env, variable, { default: ENGINE_SETTING_DEFAULTS[setting], min });
}

function readH2OServer(env: Env): EngineSettings["h2oServer"] {
  const value = readString(env, "AIEM_H2O_SERVER", { default: "h2o-3" });
  if (value !== "h2o-3" && value !== "stand-in")
    throw new ConfigError("AIEM_H2O_SERVER", `must be "h2o-3" or "stand-in", got ${JSON.stringify(value)}`);
  return value;
}

function readCoreConfig(env: Env): Record<string, string> {
  const text = readString(env, "AIEM_DAI_CORE_CONFIG", { optional: true });
  if (text === undefined || text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError("AIEM_DAI_CORE_CONFIG", `is not valid JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ConfigError(
      "AIEM_DAI_CORE_CONFIG",
      'must be a JSON object of configuration keys to string values, e.g. {"max_runtime_minutes": "60"}',
    );
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (typeof value !== "string")
      throw new ConfigError("AIEM_DAI_CORE_CONFIG", `the value of ${JSON.stringify(key)} must be a string`);
    out[key] = value;
  }
  return out;
}
