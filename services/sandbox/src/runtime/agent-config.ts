// The agent's configuration for one launch (AIEM_AGENT_CONFIG, or an argument under bubblewrap).
import type { AgentArtifacts } from "./agent-artifacts.js";
import { AGENT_SOCKET_FD } from "./bwrap.js";
import type { AppliedLimits } from "./limits.js";
import type { LocalSandboxRuntimeOptions } from "./runtime-types.js";

// The agent's logs live in the sandbox's own memory: many processes' worth of output must not
// push the agent out of its memory limit.
function totalOutputLimit(options: LocalSandboxRuntimeOptions, memoryBytes: number): number {
  if (options.totalOutputLimitBytes !== undefined) return options.totalOutputLimitBytes;
  const perProcess = options.outputLimitBytes ?? 16 << 20;
  const byMemory = memoryBytes > 0 ? Math.floor(memoryBytes / 4) : Number.POSITIVE_INFINITY;
  return Math.max(perProcess, Math.min(4 * perProcess, byMemory));
}

export interface AgentConfigInput {
  readonly confined: boolean;
  /** Where an unconfined agent listens (a confined one is handed its socket). */
  readonly socketPath: string;
  /** The sandbox's root on the host (an unconfined agent's root). */
  readonly root: string;
  /** The memory asked for, bytes (0: none). */
  readonly memoryBytes: number;
  readonly applied: AppliedLimits;
}

export function agentConfig(options: LocalSandboxRuntimeOptions, art: AgentArtifacts, input: AgentConfigInput): string {
  const { confined, applied } = input;
  const { memory, storage } = applied;
  return JSON.stringify({
    ...(confined ? { socketFd: AGENT_SOCKET_FD } : { socket: input.socketPath }),
    root: confined ? "/" : input.root,
    version: art.version,
    outputLimitBytes: options.outputLimitBytes,
    totalOutputLimitBytes: totalOutputLimit(options, input.memoryBytes),
    keepAliveMs: options.keepAliveMs,
    drainTimeoutMs: options.drainTimeoutMs,
    maxReadBytes: options.maxReadBytes,
    maxMessageBytes: options.maxMessageBytes,
    // With a memory cgroup the kernel's OOM killer picks within the sandbox; make it pick the
    // sandbox's processes before the agent that serves them.
    oomScoreAdj: memory.mechanism.startsWith("cgroup") ? 500 : undefined,
    rlimitAsBytes: memory.mechanism === "rlimit" ? memory.value : undefined,
    rlimitFsizeBytes: storage.mechanism === "rlimit" ? storage.value : undefined,
    ensureDirs: true,
  });
}
