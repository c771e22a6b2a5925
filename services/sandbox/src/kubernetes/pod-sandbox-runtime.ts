// The sandbox service's runtime interface over the Kubernetes runtime, so that the lifecycle drives
// pods as it drives local agents: start() makes the objects and resolves once the pod is Ready,
// fails with the pod's reason, or gives up when its signal aborts (a sandbox deleted while it
// waits for a node); a pod that ends is reported through onExit with why; one deleted by someone
// else is no longer running, which the lifecycle answers by starting it again. The runtime id is
// the sandbox's uid (no warm pool: a pod needs its image before it can be warm).
import { ConnectError, Code } from "@connectrpc/connect";
import {
  connectAgent,
  type LocalSandboxRuntime,
  type RuntimeCapabilities,
  type SandboxExit,
  type SandboxHandle,
  SandboxRuntimeError,
} from "../runtime/index.js";
import type { KubernetesSandboxRuntime } from "./kubernetes-sandbox-runtime.js";
import type { SandboxPodSpec } from "./sandbox-objects.js";
import { sandboxPodSpecOf } from "./sandbox-pod-spec.js";
import type { SandboxPodStatus } from "./sandbox-status.js";

/** A port's objects in the cluster (its Service, and its HTTPRoute while public); ready once they exist. */
export interface PortObjects {
  ensure(uid: string, port: number, publicUrl: string | undefined): Promise<void>;
  remove(uid: string, port: number): Promise<void>;
  ready(uid: string, port: number, isPublic: boolean): boolean;
}

export interface PodSandboxRuntimeOptions {
  /** The service's data directory (nothing of a sandbox is kept there). */
  readonly dataDir: string;
  readonly onExit?: (sandboxId: string, exit: SandboxExit) => void;
  /** The secret the sandbox's agent asks of every request, as the Kubernetes runtime put it in the pod. */
  readonly agentToken?: (uid: string) => Promise<string>;
}

const podLimit = { mechanism: "none", note: "enforced by the cluster (the pod's limits)" } as const;
const podLayer = { active: true, note: "the cluster's container runtime isolates the pod" } as const;

const capabilities: RuntimeCapabilities = {
  isolation: "pod",
  isolationUnavailableReason: undefined,
  memory: podLimit,
  cpu: podLimit,
  processes: podLimit,
  storage: podLimit,
  exactSignals: true,
  layers: "unknown-until-prepared",
};

/** `connect` makes the Kubernetes runtime (its informers' first lists); prepare() calls it, and nothing works before. */
export function createPodSandboxRuntime(
  connect: () => Promise<KubernetesSandboxRuntime>,
  options: PodSandboxRuntimeOptions,
): LocalSandboxRuntime & { readonly ports: PortObjects } {
  const handles = new Map<string, { handle: SandboxHandle; ended: (exit: SandboxExit) => void }>();
  let connected: KubernetesSandboxRuntime | undefined;
  let connecting: Promise<void> | undefined;
  const cluster = (): KubernetesSandboxRuntime => {
    if (!connected) throw new ConnectError("the sandbox service has not reached its cluster yet", Code.Unavailable);
    return connected;
  };

  function makeHandle(
    kube: KubernetesSandboxRuntime,
    uid: string,
    started: number,
    adopted: boolean,
    token: string | undefined,
  ): SandboxHandle {
    const endpoint = kube.endpoint(uid);
    if (!endpoint) throw new SandboxRuntimeError("start-failed", "the sandbox's pod has no address");
    const connection = connectAgent(endpoint, { token });
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
      startMs: Date.now() - started,
      adopted,
      exited,
      openTunnel: () =>
        Promise.reject(
          new ConnectError("ports of sandboxes on Kubernetes are served by their Services", Code.Unimplemented),
        ),
      cgroupUsage: () => ({}),
      stop: () => kube.remove(uid),
    };
    handles.set(uid, {
      handle,
      ended: (exit) => {
        connection.close();
        ended(exit);
      },
    });
    return handle;
  }

  function forget(uid: string, exit: SandboxExit): void {
    const held = handles.get(uid);
    if (!held) return;
    handles.delete(uid);
    held.ended(exit);
    if (!exit.requested) options.onExit?.(uid, exit);
  }

  // A pod that ended on its own fails its sandbox with why; one deleted by someone else is let go
  // of (not running), so that the lifecycle starts it again.
  function follow(kube: KubernetesSandboxRuntime): void {
    kube.watch((uid) => {
      if (!handles.has(uid)) return;
      const status = kube.status(uid);
      if (status.state === "failed")
        forget(uid, { code: null, signal: null, requested: false, reason: status.failure });
      else if (status.state === "lost" || status.state === "absent") handles.delete(uid);
    });
  }

  /**
   * Until the pod runs or failed. A pod deleted meanwhile (by someone else, or with the sandbox
   * through another replica) ends the wait with `stopping`: the lifecycle's next pass sees what is
   * wanted now and, for a sandbox still wanted, makes the pod again.
   */
  function untilSettled(
    kube: KubernetesSandboxRuntime,
    spec: SandboxPodSpec,
    signal: AbortSignal | undefined,
  ): Promise<SandboxPodStatus> {
    const uid = spec.uid;
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

  return {
    dataDir: options.dataDir,
    capabilities,
    ports: {
      ensure: (uid, port, publicUrl) => cluster().ensurePort(uid, port, publicUrl ? { publicUrl } : undefined),
      remove: (uid, port) => cluster().removePort(uid, port),
      ready: (uid, port, isPublic) => connected?.portReady(uid, port, isPublic) ?? false,
    },
    prepare() {
      connecting ??= connect().then((kube) => {
        connected = kube;
        follow(kube);
      });
      return connecting;
    },
    startBlocker: () => undefined,

    async start(uid, startOptions = {}) {
      const kube = cluster();
      const held = handles.get(uid)?.handle;
      if (held && kube.status(uid).state === "running") return held;
      if (!startOptions.engine) {
        throw new SandboxRuntimeError("invalid-argument", "a sandbox on Kubernetes is started from its resource");
      }
      const started = Date.now();
      // A pod already running is one this process did not start (the service restarted): its
      // agent, processes and files run on.
      const adopted = kube.status(uid).state === "running";
      const spec = sandboxPodSpecOf(startOptions.engine);
      await kube.start(spec);
      startOptions.onLaunched?.();
      const status = await untilSettled(kube, spec, startOptions.signal);
      if (status.state === "failed")
        throw new SandboxRuntimeError("start-failed", status.failure ?? "the sandbox's pod failed");
      return makeHandle(kube, uid, started, adopted, await options.agentToken?.(uid));
    },

    get: (uid) => handles.get(uid)?.handle,
    isRunning: (uid) => handles.has(uid) && connected?.status(uid).state === "running",
    pending: (uid) => connected?.status(uid).pending,
    // The cluster places pods where they fit and says when none does (pending reason SCHEDULING).
    checkCapacity() {},

    async stop(uid) {
      forget(uid, { code: null, signal: null, requested: true });
      await cluster().remove(uid);
    },
    async destroy(uid) {
      forget(uid, { code: null, signal: null, requested: true });
      await cluster().remove(uid);
    },
    // Pods run on without this process; the next one (or any other replica) reads them again.
    async close() {
      for (const uid of [...handles.keys()]) forget(uid, { code: null, signal: null, requested: true });
      await connecting?.catch(() => undefined);
      const kube = connected;
      connected = undefined;
      connecting = undefined;
      await kube?.close();
    },
  };
}
