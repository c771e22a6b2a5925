// The contract between the reconciler and whatever runs engines. It speaks of engines by uid and
// of what they should be, never of processes, so a Kubernetes runtime (a pod, a service and a
// volume per engine) fits the same interface as the local one (a process and a directory).

import type { KubernetesPlacement } from "./kubernetes/engine-objects.js";

export type RuntimeEngineKind = "dai" | "h2o" | "notebook";

/** Everything a runtime needs to run an engine; the reconciler builds it from the engine's row. */
export interface EngineRunSpec {
  readonly uid: string;
  readonly kind: RuntimeEngineKind;
  /** The engine's resource name, for logs and labels. */
  readonly name: string;
  /** The version id (`1.11.0`) or, for notebooks, the image's name. */
  readonly version: string;
  /** The container image from the version or notebook image. */
  readonly image: string;
  readonly cpu: number;
  readonly gpu: number;
  readonly memoryBytes: bigint;
  readonly storageBytes: bigint;
  readonly nodeCount: number;
  /** The path prefix the engine's web server is reached at through the edge, `/engines/<uid>/`. */
  readonly basePath: string;
  /** The effective DAI configuration (precedence and reserved keys already applied). */
  readonly config: Readonly<Record<string, string>>;
  /** Extra settings of the kind: H2O java options, notebook git sync. */
  readonly options: Readonly<Record<string, string>>;
  /** What only the Kubernetes runtime reads: pod template, tolerations, pull settings, storage class. */
  readonly kubernetes?: KubernetesPlacement;
}

/** Why an engine stopped without being asked to. */
export interface EngineExit {
  /** `oom` when it was killed for memory; `error` for any other failure; `unknown` when nobody saw it end. */
  readonly cause: "oom" | "error" | "unknown";
  /** For people: what happened (exit code or signal). */
  readonly message: string;
}

export type EnginePhase =
  /** Nothing runs and no data exists (never started, or removed). */
  | "absent"
  /** Not running, data kept (paused, or not started yet since the service restarted). */
  | "stopped"
  /** Started and not yet answering its health check. */
  | "starting"
  /** Running and healthy. */
  | "ready"
  /** Stopped on its own; see `exit`. */
  | "exited";

export interface EngineStatus {
  readonly phase: EnginePhase;
  readonly exit?: EngineExit;
  /** Whether the engine's data (volume, directory) exists. */
  readonly dataPresent: boolean;
  /** While starting, what it waits for, when the runtime knows (no node fits, an image pull failing). */
  readonly pending?: EnginePending;
}

export interface EnginePending {
  /** A short machine word: `Unschedulable`, `ErrImagePull`, `ImagePullBackOff`... */
  readonly reason: string;
  /** For people: which resource no node has, which image failed. */
  readonly message: string;
}

export interface DiskUsage {
  readonly totalBytes: bigint;
  readonly freeBytes: bigint;
}

/** Where traffic for an engine goes (the edge proxies `/engines/<uid>/...` there). */
export interface EngineEndpoint {
  readonly host: string;
  readonly port: number;
}

export interface EngineRuntime {
  /** Identifies this runtime instance; engines it runs are pinned to it (a host and directory, a cluster). */
  readonly placement: string;
  /**
   * Every replica's runtime has this placement and sees the same engines (a cluster): nothing is
   * pinned to one replica, and leases under the placement may be another live replica's.
   */
  readonly shared?: boolean;
  /**
   * Makes the engine run with `spec` on its kept data, creating the data when there is none.
   * Idempotent: an engine that already runs (or starts) is left as it is. Returns once the
   * start is under way, not when the engine is ready.
   */
  start(spec: EngineRunSpec): Promise<void>;
  /** What the engine is doing now. Cheap enough to call for every engine on every check. */
  inspect(uid: string): Promise<EngineStatus>;
  /** Stops the engine and keeps its data. Idempotent. */
  stop(uid: string): Promise<void>;
  /** Stops the engine and deletes its data. Idempotent. */
  remove(uid: string): Promise<void>;
  /** Grows the engine's storage to `bytes`; resolves when the new size is in place. */
  resizeStorage(uid: string, bytes: bigint): Promise<void>;
  /** Disk size and free space of the engine's data, while it has data. */
  diskUsage(uid: string, storageBytes: bigint): Promise<DiskUsage | undefined>;
  /** The engine's logs, newest last, at most `maxBytes` (the tail). */
  logs(uid: string, maxBytes: number): Promise<Uint8Array>;
  /**
   * The engine's log from byte `offset` on, at most `maxBytes`, and the log's size now (a size
   * below `offset` means the log started over). For following a log; without it, a stream
   * sends what `logs` holds.
   */
  logsFrom?(uid: string, offset: number, maxBytes: number): Promise<{ data: Uint8Array; size: number }>;
  /** Where its web server listens while it runs. */
  endpoint(uid: string): Promise<EngineEndpoint | undefined>;
  /** Calls `listener` with the uid of an engine whose status changed (became ready, exited). */
  watch(listener: (uid: string) => void): () => void;
  /** Stops watching; engines keep running and are picked up again by the next instance. */
  close(): Promise<void>;
}
