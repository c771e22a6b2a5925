// What the local sandbox runtime offers its callers: its options, a sandbox's handle, the
// capabilities and limits it reports, and the errors it throws.
import type { Duplex } from "node:stream";
import type { CallOptions } from "@connectrpc/connect";
import type {
  SandboxEngine,
  SandboxEngine_PendingReason,
} from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { AgentArtifacts } from "./agent-artifacts.js";
import type { AgentClient } from "./agent-client.js";
import type { AgentFiles } from "./agent-files.js";
import type { IsolationLayers } from "./bwrap.js";
import type { AppliedLimit, AppliedLimits, CgroupUsage, SandboxLimits } from "./limits.js";

/** `pod`: a pod of a Kubernetes cluster, isolated by its container runtime (docs/adr/0245). */
export type IsolationMode = "bwrap" | "unconfined" | "pod";

export type SandboxRuntimeErrorCode =
  | "isolation-unavailable"
  | "invalid-argument"
  | "start-failed"
  | "stopping"
  | "agent-gone"
  /** A sandbox left running whose agent cannot be checked (started by an earlier version): stopped instead of adopted. */
  | "agent-unverifiable"
  /** A host-wide bound on sandboxes (storage, processes) is reached. */
  | "resource-exhausted";

export class SandboxRuntimeError extends Error {
  override readonly name = "SandboxRuntimeError";
  constructor(
    readonly code: SandboxRuntimeErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface LocalSandboxRuntimeOptions {
  /** Where sandboxes keep their files. */
  readonly dataDir: string;
  /**
   * Run sandboxes without bubblewrap when it is missing: the agent and its processes then run
   * as plain host processes with no isolation at all. An operator's explicit choice; without it
   * the runtime refuses to start sandboxes on a machine without bwrap.
   */
  readonly unconfined?: boolean;
  /** The bwrap binary; found on PATH when unset. */
  readonly bwrapPath?: string;
  /** Where the agent and the helpers are cached; `<dataDir>/agent-cache` when unset. */
  readonly cacheDir?: string;
  /** A prebuilt agent and helpers (see prepareAgentArtifacts), e.g. made at image build time. */
  readonly agentArtifacts?: AgentArtifacts;
  /** Use cgroups for memory, CPU and process limits where the machine allows (default true). */
  readonly useCgroups?: boolean;
  /** Use a loop-mounted ext4 image per sandbox for storage limits where possible (default true). */
  readonly useStorageImages?: boolean;
  /** Most processes and threads per sandbox when cgroups apply (default 4096). */
  readonly maxProcesses?: number;
  /**
   * Most bytes of storage images all sandboxes of this runtime may have together (the sum of their
   * sizes, which is what they may fill). Default: 90% of what the data directory's file system
   * has for them (its free space plus what their images use now), read at each check. 0: none.
   */
  readonly maxTotalStorageBytes?: number;
  /**
   * Most processes and threads all sandboxes of this runtime may run together (pids.max of the
   * cgroup holding theirs), so that they cannot take the host's last pids. Default: half of the
   * kernel's pid_max or threads-max, whichever is less. 0: none.
   */
  readonly maxTotalProcesses?: number;
  /** Bytes of output the agent keeps per process (default 16 MiB). */
  readonly outputLimitBytes?: number;
  /**
   * Bytes of output the agent keeps across the processes of one sandbox; past it, the logs of
   * ended processes are released, oldest first. Default: four times `outputLimitBytes`, at most a
   * quarter of the sandbox's memory limit, and never less than `outputLimitBytes`.
   */
  readonly totalOutputLimitBytes?: number;
  /** Interval of keep-alive messages on quiet output streams (default 5 s). */
  readonly keepAliveMs?: number;
  /** How long output is awaited from children still holding a finished process's pipes (default 2 s). */
  readonly drainTimeoutMs?: number;
  /** Most bytes one ReadFile returns (default 4 MiB). */
  readonly maxReadBytes?: number;
  /** Largest message on the agent channel, which bounds WriteFile (default 256 MiB). */
  readonly maxMessageBytes?: number;
  /** How long a start may take before it fails (default 15 s). */
  readonly startTimeoutMs?: number;
  /** Called when a sandbox's agent ends without stop() having been asked for it. */
  readonly onExit?: (sandboxId: string, exit: SandboxExit) => void;
  /**
   * Who forks the agents: "launcher" (default), a small process forked once, so that the host
   * process, however large, never forks (fork copies its page tables and holds its event loop
   * for tens of milliseconds); or "direct", this process.
   */
  readonly spawner?: "launcher" | "direct";
  /**
   * Isolation layers to switch off, for tests that show what each one stops (see bwrap.ts).
   * Every layer is on unless named here with `false`.
   */
  readonly isolationLayers?: Partial<IsolationLayers>;
  /**
   * The host-wide registry of claimed uid ranges (see uid-ranges.ts); default /run/aiem/uid-ranges.
   */
  readonly uidRangeRegistry?: string;
  /**
   * Sandboxes outlive this process: they are not tied to it, `close()` leaves them running, and
   * `start()` re-adopts a sandbox that is still running, with its processes and their output
   * (see docs/adr/0076-sandboxes-survive-service-restart.md). A sandbox whose agent ended while
   * nobody held it makes `start()` fail once with `agent-gone`. Default false.
   */
  readonly keepRunning?: boolean;
}

/** Whether one isolation layer applies, and why not when it does not. */
export interface LayerState {
  readonly active: boolean;
  readonly note?: string | undefined;
}

export interface SandboxStartOptions {
  /** The template's limits. */
  readonly limits?: SandboxLimits;
  /** Called once the sandbox's processes were launched, before the agent answers. */
  readonly onLaunched?: () => void;
  /** The sandbox's resource (image and template snapshots), which a runtime on Kubernetes makes its pod of. */
  readonly engine?: SandboxEngine;
  /** Ends the wait for the sandbox to run (a start may wait long for a node): the start then fails with `stopping`. */
  readonly signal?: AbortSignal;
}

export interface SandboxExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Whether stop() (or destroy/close) ended it. */
  readonly requested: boolean;
  /** Why it ended, in words, when the runtime knows more than a code or a signal. */
  readonly reason?: string;
}

export interface SandboxHandle {
  readonly sandboxId: string;
  /** The typed AgentService client of this sandbox. */
  readonly client: AgentClient;
  /** The agent's raw file routes: a file's bytes as one stream (see agent-files.ts). */
  readonly files: AgentFiles;
  readonly isolation: IsolationMode;
  /** What limits apply to this sandbox and how. */
  readonly limits: AppliedLimits;
  /** The host pid of the sandbox's outermost process (bwrap, or the agent when unconfined). */
  readonly pid: number;
  /** The isolation layers that apply to this sandbox. */
  readonly layers: Readonly<Record<keyof IsolationLayers, LayerState>>;
  /** The host uid (and gid) of the sandbox's root; 0 without a user namespace. */
  readonly hostUid: number;
  /** The host pid of the agent, which every connection to its socket is checked against. */
  readonly agentPid: number;
  /** Milliseconds from the start call until the agent answered Health. */
  readonly startMs: number;
  /** Whether start() took over a sandbox an earlier runtime left running (`keepRunning`), processes and output included. */
  readonly adopted: boolean;
  /** Resolves when the sandbox has ended, for whatever reason. */
  readonly exited: Promise<SandboxExit>;
  /** Opens a forwarded TCP connection to a port on the sandbox's own loopback interface. */
  openTunnel(port: number, options?: CallOptions): Promise<Duplex>;
  /** The memory and CPU time charged to the sandbox's cgroup; empty figures without one. */
  cgroupUsage(): CgroupUsage;
  stop(): Promise<void>;
}

export interface RuntimeCapabilities {
  readonly isolation: IsolationMode | "unavailable";
  /** Why sandboxes cannot start, when they cannot. */
  readonly isolationUnavailableReason: string | undefined;
  readonly memory: LimitMechanismInfo;
  readonly cpu: LimitMechanismInfo;
  readonly processes: LimitMechanismInfo;
  readonly storage: LimitMechanismInfo;
  /** Whether exit statuses are exact for every signal (always, once the agent is built). */
  readonly exactSignals: boolean | "unknown-until-prepared";
  /** The isolation layers sandboxes get (some are known only once the helpers are built). */
  readonly layers: Readonly<Record<keyof IsolationLayers, LayerState>> | "unknown-until-prepared";
}

export interface LimitMechanismInfo {
  readonly mechanism: AppliedLimit["mechanism"];
  readonly note?: string | undefined;
}

export interface LocalSandboxRuntime {
  readonly dataDir: string;
  /** What this machine can enforce, as detected at creation. */
  readonly capabilities: RuntimeCapabilities;
  /** Builds the agent and the helpers now instead of at the first start. */
  prepare(): Promise<void>;
  /**
   * What keeps every sandbox from starting on this machine, in one sentence with what to do
   * about it; undefined when nothing does (as far as can be told before a start), or before
   * prepare().
   */
  startBlocker(): string | undefined;
  /**
   * Starts the sandbox's agent and resolves once it answers Health. Starting a sandbox that is
   * running returns its handle. The sandbox's files persist across stop and start.
   */
  start(sandboxId: string, options?: SandboxStartOptions): Promise<SandboxHandle>;
  /** The handle of a running sandbox. */
  get(sandboxId: string): SandboxHandle | undefined;
  isRunning(sandboxId: string): boolean;
  /**
   * Throws SandboxRuntimeError `resource-exhausted`, naming the bound and how to raise it, when
   * starting a sandbox with these limits would pass a host-wide bound (maxTotalStorageBytes,
   * maxTotalProcesses). A sandbox that has its storage image already counts as holding it.
   */
  checkCapacity(limits: SandboxLimits, sandboxId?: string): void;
  /**
   * While a sandbox starts, what it waits for, when the runtime knows (a node, an image); the
   * pending reason clients see. Runtimes that cannot tell leave it out.
   */
  pending?(sandboxId: string): { readonly reason: SandboxEngine_PendingReason; readonly message: string } | undefined;
  /** Stops the sandbox's agent and every process in it; its files stay. No-op when not running. */
  stop(sandboxId: string): Promise<void>;
  /** Stops the sandbox and deletes its files. */
  destroy(sandboxId: string): Promise<void>;
  /**
   * Lets go of every sandbox: stops them all, or with `keepRunning` leaves them running for the
   * next runtime to adopt, unless `stopSandboxes` asks for them to be stopped anyway.
   */
  close(options?: { readonly stopSandboxes?: boolean }): Promise<void>;
}
