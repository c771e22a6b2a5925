// An engine's status read from its pod and claim: the pod's phase, conditions and container
// states become the runtime's phases, with why a pending pod waits and why a failed one ended.
import type { V1ContainerStatus, V1Pod } from "@kubernetes/client-node";
import type { EngineExit, EnginePending, EngineStatus } from "../runtime.js";

/** The latest warning a component (a kubelet: FailedMount, FailedCreatePodSandBox...) recorded about a pod. */
export type WarningOf = (pod: V1Pod) => EnginePending | undefined;

export function engineStatusOf(pod: V1Pod | undefined, claimPresent: boolean, warningOf?: WarningOf): EngineStatus {
  const dataPresent = claimPresent;
  // A pod on its way out is no longer the engine: pausing has reached the point of no return.
  if (!pod || pod.metadata?.deletionTimestamp) return { phase: dataPresent ? "stopped" : "absent", dataPresent };
  const status = pod.status ?? {};
  switch (status.phase) {
    case "Failed":
    case "Succeeded":
      return { phase: "exited", exit: exitOf(pod), dataPresent };
    case "Running": {
      const ready = status.conditions?.some((c) => c.type === "Ready" && c.status === "True");
      return { phase: ready ? "ready" : "starting", dataPresent };
    }
    default: {
      const pending = pendingOf(pod, warningOf);
      return { phase: "starting", dataPresent, ...(pending ? { pending } : {}) };
    }
  }
}

/**
 * An H2O engine's status from all its nodes together: one cloud, whole or not at all. A node that
 * ended fails the engine with its reason; a node missing (deleted by someone else) leaves a cloud
 * that cannot take it back, reported as stopped so that the engine is started again as a whole.
 */
export function h2oStatusOf(
  pods: readonly V1Pod[],
  nodeCount: number,
  servicePresent: boolean,
  warningOf?: WarningOf,
): EngineStatus {
  const live = [...pods].filter((p) => !p.metadata?.deletionTimestamp).sort(byName);
  if (live.length === 0) return { phase: servicePresent ? "stopped" : "absent", dataPresent: false };
  const ended = live.find((p) => p.status?.phase === "Failed" || p.status?.phase === "Succeeded");
  if (ended) {
    const exit = exitOf(ended);
    return {
      phase: "exited",
      exit: { ...exit, message: `${ended.metadata?.name}: ${exit.message}` },
      dataPresent: false,
    };
  }
  if (live.length < nodeCount) return { phase: "stopped", dataPresent: false };
  for (const pod of live) {
    if (pod.status?.phase === "Running") continue;
    const pending = pendingOf(pod, warningOf);
    if (pending) {
      return {
        phase: "starting",
        dataPresent: false,
        pending: { reason: pending.reason, message: `${pod.metadata?.name}: ${pending.message}` },
      };
    }
  }
  const ready = live.every((p) => engineStatusOf(p, false).phase === "ready");
  return { phase: ready ? "ready" : "starting", dataPresent: false };
}

function byName(a: V1Pod, b: V1Pod): number {
  return (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? "", "en", { numeric: true });
}

/**
 * Why a pod has not started: not scheduled (with the scheduler's words), a container waiting (an
 * image that cannot be pulled), or else, once on a node, the latest warning about it (a volume
 * that cannot be mounted).
 */
export function pendingOf(pod: V1Pod, warningOf?: WarningOf): EnginePending | undefined {
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

function exitOf(pod: V1Pod): EngineExit {
  const status = pod.status ?? {};
  const terminated = (status.containerStatuses ?? [])
    .map((c) => ({ name: c.name, state: terminationOf(c) }))
    .filter((c) => c.state !== undefined);
  if (terminated.some((c) => c.state?.reason === "OOMKilled")) {
    const name = terminated.find((c) => c.state?.reason === "OOMKilled")?.name;
    return { cause: "oom", message: `container ${name} was killed for using more memory than its limit` };
  }
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
