// A sandbox's state read from its pod: STARTING with why it waits (in the API's pending reasons),
// RUNNING once the agent's port is ready, FAILED with why the pod ended.
import { exitOf, pendingOf, type WarningOf } from "@aiem/kit/kubernetes";
import { SandboxEngine_PendingReason as Reason } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { V1Pod } from "@kubernetes/client-node";

export interface SandboxPodStatus {
  /**
   * `absent`: none of its objects; `lost`: its Service is there but its pod is gone (deleted by
   * someone else, or evicted and removed); `starting`, `running`, `failed`: its pod's.
   */
  readonly state: "absent" | "lost" | "starting" | "running" | "failed";
  /** While starting: what it waits for, and in words (with the cluster's reason, `Unschedulable: ...`). */
  readonly pending?: { readonly reason: Reason; readonly message: string };
  /** Once failed: why. */
  readonly failure?: string;
}

const imageReasons = new Set(["ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName"]);

export function sandboxStatusOf(
  pod: V1Pod | undefined,
  servicePresent: boolean,
  warningOf?: WarningOf,
): SandboxPodStatus {
  if (!pod || pod.metadata?.deletionTimestamp) return { state: servicePresent ? "lost" : "absent" };
  const status = pod.status ?? {};
  if (status.phase === "Failed" || status.phase === "Succeeded") {
    return { state: "failed", failure: `the sandbox's pod ended: ${exitOf(pod).message}` };
  }
  const ready = status.conditions?.some((c) => c.type === "Ready" && c.status === "True");
  if (status.phase === "Running" && ready) return { state: "running" };
  const waiting = pendingOf(pod, warningOf);
  const words = (fallback: string) => (waiting ? `${waiting.reason}: ${waiting.message}` : fallback);
  let reason: Reason;
  if (!pod.spec?.nodeName) reason = Reason.SCHEDULING;
  else if (waiting && imageReasons.has(waiting.reason)) reason = Reason.PULLING_IMAGE;
  else if (status.phase === "Running") reason = Reason.WAITING_READINESS;
  else reason = Reason.CONTAINER_CREATING;
  const fallback: Record<number, string> = {
    [Reason.SCHEDULING]: "waiting for a node",
    [Reason.CONTAINER_CREATING]: "the sandbox's containers are being created",
    [Reason.WAITING_READINESS]: "waiting for the sandbox's agent to listen",
  };
  return { state: "starting", pending: { reason, message: words(fallback[reason] ?? "starting") } };
}
