// A sandbox's handle while its pod runs: its agent, and its programs' ports, reached at the pod's
// address, and the limits and isolation layers the cluster (not this process) enforces.
import { Code, ConnectError } from "@connectrpc/connect";
import {
  connectAgent,
  type RuntimeCapabilities,
  type SandboxExit,
  type SandboxHandle,
  SandboxRuntimeError,
} from "../runtime/index.js";
import type { KubernetesSandboxRuntime } from "./kubernetes-sandbox-runtime.js";
import { connectPodPort } from "./pod-port-connection.js";

const podLimit = { mechanism: "none", note: "enforced by the cluster (the pod's limits)" } as const;
const podLayer = { active: true, note: "the cluster's container runtime isolates the pod" } as const;

export const podSandboxCapabilities: RuntimeCapabilities = {
  isolation: "pod",
  isolationUnavailableReason: undefined,
  memory: podLimit,
  cpu: podLimit,
  processes: podLimit,
  storage: podLimit,
  exactSignals: true,
  layers: "unknown-until-prepared",
};

/** A handle and what ends it: `ended` closes the agent's connection and resolves `handle.exited`. */
export interface PodSandboxHandle {
  readonly handle: SandboxHandle;
  readonly ended: (exit: SandboxExit) => void;
}

export interface PodSandboxHandleOptions {
  /** When the start began (Date.now()), for the handle's startMs. */
  readonly started: number;
  /** Whether the pod was running before this process started it. */
  readonly adopted: boolean;
  /** The secret the sandbox's agent asks of every request. */
  readonly token: string | undefined;
}

/** Connects to the agent in the sandbox's pod, which must have an address. */
export function createPodSandboxHandle(
  kube: KubernetesSandboxRuntime,
  uid: string,
  options: PodSandboxHandleOptions,
): PodSandboxHandle {
  const endpoint = kube.endpoint(uid);
  if (!endpoint) throw new SandboxRuntimeError("start-failed", "the sandbox's pod has no address");
  const connection = connectAgent(endpoint, { token: options.token });
  let ended: (exit: SandboxExit) => void = () => {};
  const exited = new Promise<SandboxExit>((resolve) => (ended = resolve));
  const handle: SandboxHandle = {
    sandboxId: uid,
    client: connection.client,
    files: connection.files,
    isolation: "pod",
    limits: { memory: podLimit, cpu: podLimit, processes: podLimit, storage: podLimit },
    pid: 0,
    layers: {
      userNamespace: podLayer,
      emptyBoundingSet: podLayer,
      seccomp: podLayer,
      privateEtc: podLayer,
      hideHostPaths: podLayer,
      dropCapabilities: podLayer,
      pidNamespace: podLayer,
    },
    hostUid: 0,
    agentPid: 0,
    startMs: Date.now() - options.started,
    adopted: options.adopted,
    exited,
    // The program's port at the pod's address (the pod's current one, should it have moved).
    openTunnel: (port, callOptions) => {
      const current = kube.endpoint(uid);
      if (!current) return Promise.reject(new ConnectError("the sandbox's pod has no address", Code.Unavailable));
      return connectPodPort(current.host, port, callOptions?.signal ? { signal: callOptions.signal } : {});
    },
    cgroupUsage: () => ({}),
    stop: () => kube.remove(uid),
  };
  return {
    handle,
    ended: (exit) => {
      connection.close();
      ended(exit);
    },
  };
}
