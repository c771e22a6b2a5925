import path from "node:path";
import {
  ConfigError,
  readBool,
  readCommonEnv,
  readInt,
  readString,
  readUrl,
  type CommonConfig,
  type Env,
} from "@aiem/kit/config";

/** What the sandbox service needs on top of the common settings. */
export interface SandboxSettings {
  /**
   * AIEM_SANDBOX_UNCONFINED: run sandboxes as plain host processes when bubblewrap is missing.
   * No isolation at all; an operator's explicit choice (default false: without bwrap sandboxes
   * are refused).
   */
  readonly unconfined: boolean;
  /**
   * AIEM_PUBLIC_URL: the base URL clients reach the edge at; ports' URLs are built on it. Default
   * `http://AIEM_HOST:AIEM_PORT`. A function is read each time (tests that listen on port 0).
   */
  readonly publicUrl: string | (() => string | undefined);
  /** AIEM_PAGE_TOKEN_KEY (shared with the other services); unset means `<dataDir>/keys/page-token.key`. */
  readonly pageTokenKey: string | undefined;
  /** AIEM_DRIVE_DIR: where workspace drives live, one directory each. Default `<dataDir>/drive`. */
  readonly driveDir: string;
  /**
   * AIEM_INTERNAL_KEY: the sessions of port origins are sealed with a key derived from it, which
   * the sandbox service's replicas share. Unset means the data directory's `keys/internal.key`.
   */
  readonly internalKey?: string | undefined;
  /** AIEM_SANDBOX_OUTPUT_LIMIT_BYTES: output kept per process (default 16 MiB). */
  readonly outputLimitBytes: number;
  /** AIEM_SANDBOX_WARM_POOL: started sandboxes kept ready per template (default 1; 0 turns it off). */
  readonly warmPoolSize: number;
  /** How often the reconciler looks at every sandbox (idle limits, lost agents). Default 1000 ms. */
  readonly reconcileIntervalMs?: number;
  /** Keep-alive interval of quiet output streams. Default 5000 ms. */
  readonly keepAliveMs?: number;
  /** Where the agent bundle and spawn helper are cached; `<dataDir>/agent-cache` when unset. */
  readonly agentCacheDir?: string;
  /**
   * AIEM_SANDBOX_STOP_WITH_SERVICE: a normal stop of the service (SIGTERM) stops every sandbox,
   * ending its processes. Default false: confined sandboxes run on, and the next start of the
   * service adopts them (rolling restarts); after a crash they run on either way.
   */
  readonly stopWithService?: boolean;
  /**
   * AIEM_SANDBOX_MAX_TOTAL_STORAGE_BYTES: most bytes of storage all sandboxes of this host may
   * have together (the sum of their storage images). Unset: 90% of what the data directory's file
   * system has for them; 0: no bound.
   */
  readonly maxTotalStorageBytes?: number | undefined;
  /**
   * AIEM_SANDBOX_MAX_TOTAL_PROCESSES: most processes and threads all sandboxes of this host may
   * run together. Unset: half of the kernel's pid_max or threads-max, whichever is less; 0: none.
   */
  readonly maxTotalProcesses?: number | undefined;
  /** The bwrap binary (tests point it at a missing file); found on PATH when unset. */
  readonly bwrapPath?: string;
  /**
   * AIEM_SANDBOX_RUNTIME (or AIEM_RUNTIME, the switch for every service): where sandboxes run.
   * `local` (the default) runs them on this machine; `kubernetes` runs each as a pod in a cluster
   * (kubeconfig from `KUBECONFIG`, or in-cluster; docs/adr/0245).
   */
  readonly runtime?: "local" | "kubernetes";
  /** On Kubernetes: where sandboxes' objects live, what puts the agent in their pods, and where public ports attach. */
  readonly kubernetes?: SandboxKubernetesSettings;
}

export interface SandboxKubernetesSettings {
  /** AIEM_KUBERNETES_NAMESPACE (default `default`). */
  readonly namespace: string;
  /** AIEM_SANDBOX_AGENT_IMAGE: an image with the static agent at /aiem/agent (`npm run build:agent-image`). */
  readonly agentImage: string;
  /** AIEM_SANDBOX_AGENT_IMAGE_PULL_POLICY: `Always`, `IfNotPresent` or `Never`; the cluster's default when unset. */
  readonly agentImagePullPolicy?: string | undefined;
  /** AIEM_KUBERNETES_GATEWAY: `[namespace/]name` of the Gateway public ports' HTTPRoutes attach to. */
  readonly gateway?: { readonly name: string; readonly namespace?: string | undefined } | undefined;
  /** A kubeconfig file to use instead of `KUBECONFIG` or the in-cluster account (tests). */
  readonly kubeconfigPath?: string | undefined;
}

export type SandboxConfig = CommonConfig & SandboxSettings;

const MIB = 1 << 20;

/** Reads and checks the sandbox service's environment; a bad value is a ConfigError naming its variable. */
export function readSandboxEnv(env: Env = process.env): SandboxConfig {
  const common = readCommonEnv(env);
  const shownHost = common.host.includes(":") ? `[${common.host}]` : common.host;
  const publicUrl = readUrl(env, "AIEM_PUBLIC_URL", {
    default: `http://${shownHost}:${common.port}`,
    protocols: ["http", "https"],
  });
  const pageTokenKey = readString(env, "AIEM_PAGE_TOKEN_KEY", { optional: true });
  if (pageTokenKey !== undefined && Buffer.from(pageTokenKey, "base64").length !== 32) {
    throw new ConfigError("AIEM_PAGE_TOKEN_KEY", "must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`)");
  }
  return {
    ...common,
    unconfined: readBool(env, "AIEM_SANDBOX_UNCONFINED", { default: false }),
    publicUrl: publicUrl.replace(/\/+$/, ""),
    pageTokenKey,
    driveDir: path.resolve(readString(env, "AIEM_DRIVE_DIR", { default: path.join(common.dataDir, "drive") })),
    internalKey: readString(env, "AIEM_INTERNAL_KEY", { optional: true }),
    outputLimitBytes: readInt(env, "AIEM_SANDBOX_OUTPUT_LIMIT_BYTES", {
      default: 16 * MIB,
      min: 64 * 1024,
      max: 1024 * MIB,
    }),
    warmPoolSize: readInt(env, "AIEM_SANDBOX_WARM_POOL", { default: 1, min: 0, max: 64 }),
    stopWithService: readBool(env, "AIEM_SANDBOX_STOP_WITH_SERVICE", { default: false }),
    maxTotalStorageBytes: readInt(env, "AIEM_SANDBOX_MAX_TOTAL_STORAGE_BYTES", { optional: true, min: 0 }),
    maxTotalProcesses: readInt(env, "AIEM_SANDBOX_MAX_TOTAL_PROCESSES", { optional: true, min: 0, max: 1 << 22 }),
    ...optionalCacheDir(env),
    ...runtimeSettings(env),
  };
}

function runtimeSettings(env: Env): Pick<SandboxSettings, "runtime" | "kubernetes"> {
  // The sandbox service's own switch wins over the general one.
  const variable =
    env.AIEM_SANDBOX_RUNTIME === undefined && env.AIEM_RUNTIME !== undefined ? "AIEM_RUNTIME" : "AIEM_SANDBOX_RUNTIME";
  const runtime = readString(env, variable, { default: "local" });
  if (runtime !== "local" && runtime !== "kubernetes")
    throw new ConfigError(variable, `must be "local" or "kubernetes", got ${JSON.stringify(runtime)}`);
  if (runtime === "local") return { runtime };
  const agentImage = readString(env, "AIEM_SANDBOX_AGENT_IMAGE", { optional: true });
  if (!agentImage) {
    throw new ConfigError(
      "AIEM_SANDBOX_AGENT_IMAGE",
      "is required with the kubernetes runtime: the image whose /aiem/agent installs itself into every sandbox's pod (npm run build:agent-image builds it)",
    );
  }
  const pullPolicy = readString(env, "AIEM_SANDBOX_AGENT_IMAGE_PULL_POLICY", { optional: true });
  if (pullPolicy !== undefined && !["Always", "IfNotPresent", "Never"].includes(pullPolicy))
    throw new ConfigError("AIEM_SANDBOX_AGENT_IMAGE_PULL_POLICY", "must be Always, IfNotPresent or Never");
  const gateway = readString(env, "AIEM_KUBERNETES_GATEWAY", { optional: true });
  const [first, second] = gateway?.split("/") ?? [];
  return {
    runtime,
    kubernetes: {
      namespace: readString(env, "AIEM_KUBERNETES_NAMESPACE", { default: "default" }),
      agentImage,
      agentImagePullPolicy: pullPolicy,
      gateway: first ? (second ? { namespace: first, name: second } : { name: first }) : undefined,
    },
  };
}

/** AIEM_SANDBOX_AGENT_CACHE: a directory of prebuilt agent files (the image's), else the data directory's. */
function optionalCacheDir(env: Env): { agentCacheDir?: string } {
  const dir = readString(env, "AIEM_SANDBOX_AGENT_CACHE", { optional: true });
  return dir ? { agentCacheDir: path.resolve(dir) } : {};
}
