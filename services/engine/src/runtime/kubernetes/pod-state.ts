// An engine's status read from its pod and claim: the pod's phase, conditions and container
// states become the runtime's phases, with why a pending pod waits and why a failed one ended.
import { exitOf, pendingOf, type WarningOf } from "@aiem/kit/kubernetes";
import type { V1Pod } from "@kubernetes/client-node";
import type { EngineStatus } from "../runtime.js";

export { pendingOf, type WarningOf };

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
