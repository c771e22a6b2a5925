// Waiting for a sandbox's pod to settle: running, or failed.
import { SandboxRuntimeError } from "../runtime/index.js";
import type { KubernetesSandboxRuntime } from "./kubernetes-sandbox-runtime.js";
import type { SandboxPodStatus } from "./sandbox-status.js";

/**
 * Until the pod runs or failed. A pod deleted meanwhile (by someone else, or with the sandbox
 * through another replica) ends the wait with `stopping`: the lifecycle's next pass sees what is
 * wanted now and, for a sandbox still wanted, makes the pod again.
 */
export function untilPodSettled(
  kube: KubernetesSandboxRuntime,
  uid: string,
  signal: AbortSignal | undefined,
): Promise<SandboxPodStatus> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const status = kube.status(uid);
      if (status.state === "absent" || status.state === "lost") return aborted();
      if (status.state !== "running" && status.state !== "failed") return;
      finish();
      resolve(status);
    };
    const aborted = () => {
      finish();
      reject(new SandboxRuntimeError("stopping", "the sandbox is being stopped"));
    };
    const unwatch = kube.watch((changed) => {
      if (changed === uid) check();
    });
    const finish = () => {
      unwatch();
      signal?.removeEventListener("abort", aborted);
    };
    if (signal?.aborted) return aborted();
    signal?.addEventListener("abort", aborted, { once: true });
    check();
  });
}
