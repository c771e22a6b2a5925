// What the local runtime's parts share: its settings, as made once by createLocalSandboxRuntime,
// and the sandboxes it holds. Every launch step, the adoption and the stop take it as their first
// argument.
import * as path from "node:path";
import { type AgentArtifacts, prepareAgentArtifacts } from "./agent-artifacts.js";
import type { AgentConnection } from "./agent-client.js";
import type { IsolationLayers } from "./bwrap.js";
import type { LimitSupport, SandboxCgroup } from "./limits.js";
import type { SpawnedProcess, Spawner } from "./spawner.js";
import type { StorageImages } from "./storage-images.js";
import {
  type IsolationMode,
  type LocalSandboxRuntimeOptions,
  type SandboxHandle,
  SandboxRuntimeError,
} from "./runtime-types.js";

/** A sandbox this runtime holds. */
export interface Running {
  handle: SandboxHandle;
  child: SpawnedProcess;
  connection: AgentConnection;
  cgroup: SandboxCgroup | undefined;
  stopping: Promise<void> | undefined;
  stopRequested: boolean;
  /** Left running by close() for the next runtime: what becomes of it is no longer this runtime's. */
  released: boolean;
}

export interface RuntimeState {
  readonly options: LocalSandboxRuntimeOptions;
  readonly dataDir: string;
  readonly cacheDir: string;
  readonly bwrapPath: string | undefined;
  readonly isolation: IsolationMode | "unavailable";
  readonly isolationUnavailableReason: string | undefined;
  readonly support: LimitSupport;
  /** The runtime's cgroup group name (one per data directory). */
  readonly groupName: string;
  readonly maxProcesses: number;
  readonly maxTotalProcesses: number;
  /** The isolation layers asked for (each still subject to what the machine offers). */
  readonly wanted: IsolationLayers;
  readonly uidRegistry: string;
  /** Sandboxes outlive this runtime (and the service) and are adopted by the next one. */
  readonly keepRunning: boolean;
  readonly spawner: Spawner;
  readonly images: StorageImages;
  /** Storage of starts that passed the check and have no image yet, by sandbox. */
  readonly reservedStorage: Map<string, number>;
  readonly running: Map<string, Running>;
  readonly starting: Map<string, Promise<SandboxHandle>>;
  /** Cgroup removals still running for sandboxes that ended; a new start waits for them. */
  readonly cleanups: Map<string, Promise<void>>;
  /** The agent and helpers, once built (prepare). */
  artifacts: AgentArtifacts | undefined;
  /** The runtime's group in the pids hierarchy, once bounded (at the first start). */
  processGroup: string | undefined;
  /** Stops a sandbox (what a handle's stop() calls). */
  readonly stop: (sandboxId: string) => Promise<void>;
}

const SANDBOX_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

export function sandboxDir(state: RuntimeState, sandboxId: string): string {
  if (!SANDBOX_ID.test(sandboxId)) {
    throw new SandboxRuntimeError("invalid-argument", `invalid sandbox id ${JSON.stringify(sandboxId)}`);
  }
  return path.join(state.dataDir, "sandboxes", sandboxId);
}

/** Removes an ended sandbox's cgroup; a new start of it waits for that. */
export function removeCgroupLater(state: RuntimeState, sandboxId: string, cgroup: SandboxCgroup | undefined): void {
  if (!cgroup) return;
  const removal = cgroup.remove();
  state.cleanups.set(sandboxId, removal);
  void removal.then(() => {
    if (state.cleanups.get(sandboxId) === removal) state.cleanups.delete(sandboxId);
  });
}

/** The agent and its helpers, built (or found in the cache) at the first call. */
export async function prepareArtifacts(state: RuntimeState): Promise<AgentArtifacts> {
  state.artifacts ??= await prepareAgentArtifacts(state.cacheDir);
  return state.artifacts;
}
