// The sandbox service's runtime interface over the Kubernetes runtime, so that the lifecycle drives
// pods as it drives local agents: start() makes the objects and resolves once the pod is Ready,
// fails with the pod's reason, or gives up when its signal aborts (a sandbox deleted while it
// waits for a node); a pod that ends is reported through onExit with why; one deleted by someone
// else is no longer running, which the lifecycle answers by starting it again. The runtime id is
// the sandbox's uid (no warm pool: a pod needs its image before it can be warm).
import { Code, ConnectError } from "@connectrpc/connect";
import { type LocalSandboxRuntime, type SandboxExit, SandboxRuntimeError } from "../runtime/index.js";
import type { KubernetesSandboxRuntime } from "./kubernetes-sandbox-runtime.js";
import { createPodSandboxHandle, podSandboxCapabilities } from "./pod-sandbox-handle.js";
import { createPodSandboxHandles } from "./pod-sandbox-handles.js";
import { untilPodSettled } from "./pod-settled.js";
import { sandboxPodSpecOf } from "./sandbox-pod-spec.js";

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
  /** The H2O AI Cloud variables every sandbox's container carries, read at each start. */
  readonly cloudEnvironment?: () => Readonly<Record<string, string>>;
}

/** `connect` makes the Kubernetes runtime (its informers' first lists); prepare() calls it, and nothing works before. */
export function createPodSandboxRuntime(
  connect: () => Promise<KubernetesSandboxRuntime>,
  options: PodSandboxRuntimeOptions,
): LocalSandboxRuntime & { readonly ports: PortObjects } {
  const handles = createPodSandboxHandles(options.onExit);
  let connected: KubernetesSandboxRuntime | undefined;
  let connecting: Promise<void> | undefined;
  const cluster = (): KubernetesSandboxRuntime => {
    if (!connected) throw new ConnectError("the sandbox service has not reached its cluster yet", Code.Unavailable);
    return connected;
  };
  const requested = (): SandboxExit => ({ code: null, signal: null, requested: true });

  return {
    dataDir: options.dataDir,
    capabilities: podSandboxCapabilities,
    ports: {
      ensure: (uid, port, publicUrl) => cluster().ensurePort(uid, port, publicUrl ? { publicUrl } : undefined),
      remove: (uid, port) => cluster().removePort(uid, port),
      ready: (uid, port, isPublic) => connected?.portReady(uid, port, isPublic) ?? false,
    },
    prepare() {
      connecting ??= connect().then((kube) => {
        connected = kube;
        handles.follow(kube);
      });
      return connecting;
    },
    startBlocker: () => undefined,

    async start(uid, startOptions = {}) {
      const kube = cluster();
      const current = handles.get(uid);
      if (current && kube.status(uid).state === "running") return current;
      if (!startOptions.engine) {
        throw new SandboxRuntimeError("invalid-argument", "a sandbox on Kubernetes is started from its resource");
      }
      const started = Date.now();
      // A pod already running is one this process did not start (the service restarted, or another
      // replica started it): its agent, processes and files run on. So is one that this process
      // did not know yet and did not make: another replica's, seen here before this one's
      // informer saw it (a call right after the sandbox became RUNNING there).
      const before = kube.status(uid).state;
      const made = await kube.start(sandboxPodSpecOf(startOptions.engine, options.cloudEnvironment?.()));
      const adopted = before === "running" || (!made && (before === "absent" || before === "lost"));
      startOptions.onLaunched?.();
      const status = await untilPodSettled(kube, uid, startOptions.signal);
      if (status.state === "failed")
        throw new SandboxRuntimeError("start-failed", status.failure ?? "the sandbox's pod failed");
      const token = await options.agentToken?.(uid);
      const held = createPodSandboxHandle(kube, uid, { started, adopted, token });
      handles.add(uid, held);
      return held.handle;
    },

    get: (uid) => handles.get(uid),
    isRunning: (uid) => handles.has(uid) && connected?.status(uid).state === "running",
    pending: (uid) => connected?.status(uid).pending,
    // The cluster places pods where they fit and says when none does (pending reason SCHEDULING).
    checkCapacity() {},

    async stop(uid) {
      handles.forget(uid, requested());
      await cluster().remove(uid);
    },
    async destroy(uid) {
      handles.forget(uid, requested());
      await cluster().remove(uid);
    },
    // Pods run on without this process; the next one (or any other replica) reads them again.
    async close() {
      handles.forgetAll();
      await connecting?.catch(() => undefined);
      const kube = connected;
      connected = undefined;
      connecting = undefined;
      await kube?.close();
    },
  };
}
