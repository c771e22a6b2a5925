// Which runtime runs this module's sandboxes: the one a test hands in, pods in a cluster
// (`AIEM_RUNTIME=kubernetes`), or the local runtime under the data directory.
import { createHmac } from "node:crypto";
import { hostname } from "node:os";
import * as path from "node:path";
import type { SandboxKubernetesSettings } from "./config.js";
import { h2oCloudEnvironment } from "./kubernetes/h2o-cloud-environment.js";
import { createPodSandboxRuntime, type PortObjects } from "./kubernetes/pod-sandbox-runtime.js";
import type { SandboxModuleDeps } from "./module.js";
import { createLocalSandboxRuntime, type LocalSandboxRuntime, type SandboxExit } from "./runtime/index.js";

export interface ChosenRuntime {
  readonly runtime: LocalSandboxRuntime;
  /** Set when sandboxes run as pods. */
  readonly kubernetes?: SandboxKubernetesSettings | undefined;
  /** On Kubernetes, each port's Service and HTTPRoute. */
  readonly portObjects?: PortObjects | undefined;
  /**
   * The placement of this replica's sandboxes. Locally the data directory is this host's, so it
   * names the replica (and stays its name across restarts, which is how a replica finds its
   * sandboxes again); on Kubernetes every replica sees every pod: one placement, none pinned.
   */
  readonly placement: string;
}

export function chooseSandboxRuntime(
  deps: SandboxModuleDeps,
  onExit: (runtimeId: string, exit: SandboxExit) => void,
  internalKey: () => Promise<Uint8Array>,
): ChosenRuntime {
  const settings = deps.sandboxConfig;
  const kubernetes = !deps.runtime && settings.runtime === "kubernetes" ? settings.kubernetes : undefined;
  if (kubernetes) {
    // Derived, not stored: every replica (sharing AIEM_INTERNAL_KEY) computes the same one.
    const agentToken = async (uid: string) =>
      createHmac("sha256", await internalKey())
        .update(`sandbox-agent:${uid}`)
        .digest("base64url");
    const pods = createPodSandboxRuntime(() => connectCluster(kubernetes, settings.outputLimitBytes, agentToken), {
      dataDir: deps.config.dataDir,
      onExit,
      agentToken,
      cloudEnvironment: () =>
        h2oCloudEnvironment(
          typeof settings.publicUrl === "function" ? settings.publicUrl() : settings.publicUrl,
          deps.config.oidcIssuer === undefined,
        ),
    });
    return { runtime: pods, kubernetes, portObjects: pods.ports, placement: `kubernetes:${kubernetes.namespace}` };
  }
  const runtime = deps.runtime ?? createLocalRuntime(deps, onExit);
  return { runtime, placement: `local:${hostname()}:${runtime.dataDir}` };
}

function createLocalRuntime(
  deps: SandboxModuleDeps,
  onExit: (runtimeId: string, exit: SandboxExit) => void,
): LocalSandboxRuntime {
  const settings = deps.sandboxConfig;
  return createLocalSandboxRuntime({
    dataDir: deps.config.dataDir,
    unconfined: settings.unconfined,
    ...(settings.bwrapPath ? { bwrapPath: settings.bwrapPath } : {}),
    cacheDir: settings.agentCacheDir ?? path.join(deps.config.dataDir, "agent-cache"),
    outputLimitBytes: settings.outputLimitBytes,
    keepAliveMs: settings.keepAliveMs ?? 5_000,
    // Confined sandboxes outlive the service and are adopted by its next start; unconfined
    // ones cannot (the runtime ignores the option for them; see docs/adr/0076).
    keepRunning: true,
    ...(settings.maxTotalStorageBytes !== undefined ? { maxTotalStorageBytes: settings.maxTotalStorageBytes } : {}),
    ...(settings.maxTotalProcesses !== undefined ? { maxTotalProcesses: settings.maxTotalProcesses } : {}),
    onExit,
  });
}

/** The Kubernetes runtime of sandboxes, its client loaded only here: it costs every other process memory. */
async function connectCluster(
  settings: SandboxKubernetesSettings,
  outputLimitBytes: number,
  agentToken: (uid: string) => Promise<string>,
) {
  const { KubeConfig } = await import("@kubernetes/client-node");
  const { createKubernetesSandboxRuntime } = await import("./kubernetes/kubernetes-sandbox-runtime.js");
  const config = new KubeConfig();
  if (settings.kubeconfigPath) config.loadFromFile(settings.kubeconfigPath);
  else config.loadFromDefault();
  return createKubernetesSandboxRuntime({
    config,
    namespace: settings.namespace,
    agent: {
      image: settings.agentImage,
      imagePullPolicy: settings.agentImagePullPolicy,
      // The agent serves on the pod's port (docs/adr/0245); its processes run as the pod's user.
      // Memory and CPU come from the container's cgroup, which holds the agent and its processes.
      config: JSON.stringify({ listen: ":50051", outputLimitBytes, usageFromCgroup: true }),
    },
    gateway: settings.gateway,
    agentToken,
  });
}
