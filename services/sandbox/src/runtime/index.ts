// The local sandbox runtime: one bubblewrap-isolated agent per sandbox and a typed client to it.
export {
  type IsolationMode,
  type LimitMechanismInfo,
  type LocalSandboxRuntime,
  type LocalSandboxRuntimeOptions,
  type RuntimeCapabilities,
  type SandboxExit,
  type SandboxHandle,
  type SandboxRuntimeErrorCode,
  type SandboxStartOptions,
  SandboxRuntimeError,
  createLocalSandboxRuntime,
} from "./local-runtime.js";
export type { AppliedLimit, AppliedLimits, CgroupUsage, LimitMechanism, SandboxLimits } from "./limits.js";
export { type AgentClient, type AgentConnection, connectAgent, openTunnel } from "./agent-client.js";
export { type AgentArtifacts, prepareAgentArtifacts } from "./agent-artifacts.js";
export { destroyLeftSandboxes, runningSandboxes, stopLeftSandboxes } from "./leftover-sandboxes.js";
