// The runtime's connection to a sandbox's agent, checked on every connection to be served by the
// agent the runtime started (agent-peer.ts).
import { preparePeerCredentials } from "./agent-artifacts.js";
import { type AgentConnection, connectAgent } from "./agent-client.js";
import { type AgentIdentity, loadPeerCredentials } from "./agent-peer.js";
import { SandboxRuntimeError } from "./runtime-types.js";
import type { RuntimeState } from "./runtime-state.js";

interface PeerAddon {
  peerCredentialsPath?: string | undefined;
  peerCredentialsUnavailableReason?: string | undefined;
}

/** The agent's identity checker, or why there is none (then no sandbox starts: agent-peer.ts). */
export function peerReader(addon: PeerAddon) {
  if (!addon.peerCredentialsPath) {
    throw new SandboxRuntimeError(
      "start-failed",
      `the service cannot check who serves a sandbox's socket: ${addon.peerCredentialsUnavailableReason} (install a C compiler, e.g. the Debian package gcc)`,
    );
  }
  return loadPeerCredentials(addon.peerCredentialsPath);
}

/**
 * Connects to the agent's socket, checking on every connection that the agent serves it. Needs
 * only the addon, not the agent's build: adoption after a restart does not wait for that.
 */
export async function connectTo(
  state: RuntimeState,
  socketPath: string,
  sandboxPid: number,
  identity: AgentIdentity,
): Promise<AgentConnection> {
  let addon: PeerAddon;
  if (state.artifacts) addon = state.artifacts;
  else {
    const built = await preparePeerCredentials(state.cacheDir);
    addon = { peerCredentialsPath: built.path, peerCredentialsUnavailableReason: built.reason };
  }
  return connectAgent(socketPath, {
    maxMessageBytes: state.options.maxMessageBytes,
    sandboxPid,
    agent: { identity, read: peerReader(addon) },
  });
}
