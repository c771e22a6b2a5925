// Why a pod waits and why it ended, read from its conditions, container states and the warnings
// recorded about it: what engines and sandboxes alike report while they start or once they fail.
import type { V1ContainerStatus, V1Pod } from "@kubernetes/client-node";

export interface PodPending {
  /** A short machine word: `Unschedulable`, `ErrImagePull`, `ImagePullBackOff`, `FailedMount`... */
  readonly reason: string;
  /** For people: which resource no node has, which image failed. */
  readonly message: string;
}

export interface PodExit {
  /** `oom` when a container was killed for memory; `error` for any other failure; `unknown` when nobody said. */
  readonly cause: "oom" | "error" | "unknown";
  readonly message: string;
}

/** The latest warning a component (a kubelet: FailedMount, FailedCreatePodSandBox...) recorded about a pod. */
export type WarningOf = (pod: V1Pod) => PodPending | undefined;

/**
 * Why a pod has not started: not scheduled (with the scheduler's words), a container waiting (an
 * image that cannot be pulled), or else, once on a node, the latest warning about it (a volume
 * that cannot be mounted).
 */
export function pendingOf(pod: V1Pod, warningOf?: WarningOf): PodPending | undefined {
  const status = pod.status ?? {};
  const scheduled = status.conditions?.find((c) => c.type === "PodScheduled");
  if (scheduled?.status === "False") {
    return { reason: scheduled.reason || "Unschedulable", message: scheduled.message ?? "" };
  }
  for (const container of [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])]) {
    const waiting = container.state?.waiting;
    // ContainerCreating and PodInitializing are the normal way up, not something to report.
    if (waiting?.reason && !["ContainerCreating", "PodInitializing"].includes(waiting.reason)) {
      return { reason: waiting.reason, message: waiting.message ?? `container ${container.name} is waiting` };
    }
  }
  return pod.spec?.nodeName ? warningOf?.(pod) : undefined;
}

/** Why a pod that ended (phase Failed or Succeeded) ended: a container's exit, or the pod's own reason. */
export function exitOf(pod: V1Pod): PodExit {
  const status = pod.status ?? {};
  const terminated = [...(status.containerStatuses ?? []), ...(status.initContainerStatuses ?? [])]
    .map((c) => ({ name: c.name, state: terminationOf(c) }))
    .filter((c) => c.state !== undefined);
  const oom = terminated.find((c) => c.state?.reason === "OOMKilled");
  if (oom) return { cause: "oom", message: `container ${oom.name} was killed for using more memory than its limit` };
  const first = terminated.find((c) => c.state?.exitCode !== 0) ?? terminated[0];
  if (first?.state) {
    const why = first.state.reason ? ` (${first.state.reason})` : "";
    const signal = first.state.signal ? `, signal ${first.state.signal}` : "";
    return {
      cause: "error",
      message: `container ${first.name} exited with code ${first.state.exitCode}${signal}${why}`,
    };
  }
  // Evicted, deadline exceeded, node lost: the pod says why, no container does.
  const message = [status.reason, status.message].filter(Boolean).join(": ");
  return { cause: message ? "error" : "unknown", message: message || `pod ${status.phase}` };
}

function terminationOf(container: V1ContainerStatus) {
  return container.state?.terminated ?? container.lastState?.terminated;
}
