// Warnings a kubelet recorded about pods (FailedMount, FailedCreatePodSandBox...), the latest per
// pod: why a scheduled pod still waits when none of its containers says.
import type { CoreV1Api, CoreV1Event, KubeConfig, V1Pod } from "@kubernetes/client-node";
import { type CachedInformer, coreInformer } from "./informers.js";
import type { PodPending, WarningOf } from "./pod-conditions.js";

export interface PodWarnings {
  /** The latest warning about the pod, while it exists. */
  readonly of: WarningOf;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface PodWarningsOptions {
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly namespace: string;
  /** The pods warnings are reported for: a warning is forgotten when its pod is deleted. */
  readonly pods: CachedInformer<V1Pod>;
  /** Called with the pod a new warning is about, when the pod is in `pods` already. */
  readonly onWarning: (pod: V1Pod) => void;
}

/**
 * A warning is kept even when its pod is not in `pods` yet: both informers list at once, so after
 * a restart the events may come first, and a pod that waits would otherwise not say why until the
 * kubelet repeats itself. The warning of a pod never seen goes when its event expires.
 */
export function watchPodWarnings(options: PodWarningsOptions): PodWarnings {
  const { config, core, namespace, pods } = options;
  const events = coreInformer(config, core, namespace, "events");
  const warnings = new Map<string, PodPending>();
  const podOf = (event: CoreV1Event): V1Pod | undefined => {
    const { uid, name } = event.involvedObject;
    const pod = name ? pods.get(name, namespace) : undefined;
    return pod?.metadata?.uid === uid ? pod : undefined;
  };
  const onEvent = (event: CoreV1Event) => {
    const { uid } = event.involvedObject;
    if (event.involvedObject.kind !== "Pod" || event.type !== "Warning" || !uid || !event.reason) return;
    // The scheduler's verdict is the pod's own condition already.
    if (event.reason === "FailedScheduling") return;
    warnings.set(uid, { reason: event.reason, message: event.message ?? "" });
    const pod = podOf(event);
    if (pod) options.onWarning(pod);
  };
  events.on("add", onEvent);
  events.on("update", onEvent);
  events.on("delete", (event) => {
    if (event.involvedObject.uid && !podOf(event)) warnings.delete(event.involvedObject.uid);
  });
  pods.on("delete", (pod) => warnings.delete(pod.metadata?.uid ?? ""));
  return {
    of: (pod) => warnings.get(pod.metadata?.uid ?? ""),
    start: () => events.start(),
    stop: () => events.stop(),
  };
}
