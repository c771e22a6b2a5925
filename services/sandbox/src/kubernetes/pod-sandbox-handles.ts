// The handles of the sandboxes this process started or adopted, let go of as their pods end.
import type { SandboxExit, SandboxHandle } from "../runtime/index.js";
import type { KubernetesSandboxRuntime } from "./kubernetes-sandbox-runtime.js";
import type { PodSandboxHandle } from "./pod-sandbox-handle.js";

export interface PodSandboxHandles {
  get(uid: string): SandboxHandle | undefined;
  has(uid: string): boolean;
  add(uid: string, held: PodSandboxHandle): void;
  /** Ends the sandbox's handle with `exit`, reported through onExit unless it was requested. */
  forget(uid: string, exit: SandboxExit): void;
  /** Ends every handle as requested. */
  forgetAll(): void;
  /** Follows the pods of the handles held. */
  follow(kube: KubernetesSandboxRuntime): void;
}

export function createPodSandboxHandles(onExit?: (sandboxId: string, exit: SandboxExit) => void): PodSandboxHandles {
  const handles = new Map<string, PodSandboxHandle>();
  function forget(uid: string, exit: SandboxExit): void {
    const held = handles.get(uid);
    if (!held) return;
    handles.delete(uid);
    held.ended(exit);
    if (!exit.requested) onExit?.(uid, exit);
  }
  return {
    get: (uid) => handles.get(uid)?.handle,
    has: (uid) => handles.has(uid),
    add: (uid, held) => handles.set(uid, held),
    forget,
    forgetAll() {
      for (const uid of [...handles.keys()]) forget(uid, { code: null, signal: null, requested: true });
    },
    // A pod that ended on its own fails its sandbox with why; one deleted by someone else is let go
    // of (not running), so that the lifecycle starts it again.
    follow(kube) {
      kube.watch((uid) => {
        if (!handles.has(uid)) return;
        const status = kube.status(uid);
        if (status.state === "failed")
          forget(uid, { code: null, signal: null, requested: false, reason: status.failure });
        else if (status.state === "lost" || status.state === "absent") handles.delete(uid);
      });
    },
  };
}
