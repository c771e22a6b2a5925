// Warnings a kubelet recorded about a pod (FailedMount, FailedCreatePodSandBox...), the latest per
// pod: why a scheduled pod still waits when none of its containers says.
import type { PodPending } from "@aiem/kit/kubernetes";
import { type CoreV1Api, type CoreV1Event, type KubeConfig, makeInformer, type V1Pod } from "@kubernetes/client-node";
import type { CachedInformer } from "./sandbox-informers.js";

export interface PodWarnings {
  /** The latest warning about the pod, while it exists. */
  of(pod: V1Pod): PodPending | undefined;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface PodWarningsOptions {
  readonly config: KubeConfig;
  readonly namespace: string;
  readonly core: CoreV1Api;
  /** The sandboxes' pods: warnings about other pods are not kept. */
  readonly pods: CachedInformer<V1Pod>;
  /** Called with the pod a new warning is about. */
  readonly onWarning: (pod: V1Pod) => void;
}

export function createPodWarnings(options: PodWarningsOptions): PodWarnings {
  const { config, namespace, core, pods } = options;
  const events = makeInformer<CoreV1Event>(config, `/api/v1/namespaces/${namespace}/events`, () =>
    core.listNamespacedEvent({ namespace }),
  );
  const warnings = new Map<string, PodPending>();
  const onEvent = (event: CoreV1Event) => {
    const { uid, name } = event.involvedObject;
    if (event.involvedObject.kind !== "Pod" || event.type !== "Warning" || !uid || !event.reason) return;
    // The scheduler's verdict is the pod's own condition already.
    if (event.reason === "FailedScheduling") return;
    const pod = name ? pods.get(name, namespace) : undefined;
    if (pod?.metadata?.uid !== uid) return;
    warnings.set(uid, { reason: event.reason, message: event.message ?? "" });
    options.onWarning(pod);
  };
  events.on("add", onEvent);
  events.on("update", onEvent);
  pods.on("delete", (pod) => warnings.delete(pod.metadata?.uid ?? ""));
  return {
    of: (pod) => warnings.get(pod.metadata?.uid ?? ""),
    start: () => events.start(),
    stop: () => events.stop(),
  };
}
