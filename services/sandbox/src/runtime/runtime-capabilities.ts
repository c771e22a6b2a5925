// What the local runtime can enforce on this machine (isolation, each limit, each isolation
// layer), and what would keep every sandbox from starting.
import * as fs from "node:fs";
import type { AgentArtifacts } from "./agent-artifacts.js";
import { peerReader } from "./agent-connect.js";
import { type IsolationLayers, LAUNCH_PLACE } from "./bwrap.js";
import { launchPlaceUsable, unreachableAncestor } from "./launch-place.js";
import type { LimitSupport } from "./limits.js";
import type { LayerState, RuntimeCapabilities } from "./runtime-types.js";
import type { RuntimeState } from "./runtime-state.js";

/** What each layer comes to on this machine, once the helpers are built. */
export function layerStates(wanted: IsolationLayers, art: AgentArtifacts): Record<keyof IsolationLayers, LayerState> {
  const off = { active: false, note: "switched off in the runtime options" };
  const state = (on: boolean, missing: string | undefined): LayerState =>
    !on ? off : missing ? { active: false, note: missing } : { active: true };
  return {
    userNamespace: state(
      wanted.userNamespace,
      process.getuid?.() !== 0 ? "mapping a uid range needs the service to run as root" : art.enterUnavailableReason,
    ),
    emptyBoundingSet: state(
      wanted.emptyBoundingSet,
      fs.existsSync("/usr/bin/setpriv") ? undefined : "setpriv (util-linux) is missing",
    ),
    seccomp: state(wanted.seccomp, art.seccompUnavailableReason),
    privateEtc: state(wanted.privateEtc, undefined),
    hideHostPaths: state(wanted.hideHostPaths, undefined),
    dropCapabilities: state(wanted.dropCapabilities, undefined),
    pidNamespace: state(wanted.pidNamespace, undefined),
  };
}

/** The capabilities known before the agent's helpers are built. */
export function baseCapabilities(
  isolation: RuntimeCapabilities["isolation"],
  isolationUnavailableReason: string | undefined,
  support: LimitSupport,
): RuntimeCapabilities {
  const cg = support.cgroup;
  const cgMechanism = cg ? (cg.version === 1 ? "cgroup-v1" : "cgroup-v2") : undefined;
  return {
    isolation,
    isolationUnavailableReason,
    memory: cg?.parents.memory
      ? { mechanism: cgMechanism! }
      : {
          mechanism: "rlimit",
          note: `RLIMIT_AS per process (virtual memory): ${support.cgroupUnavailableReason ?? "no memory controller"}`,
        },
    cpu: cg?.parents.cpu
      ? { mechanism: cgMechanism! }
      : { mechanism: "none", note: support.cgroupUnavailableReason ?? "no cpu controller" },
    processes: cg?.parents.pids
      ? { mechanism: cgMechanism! }
      : { mechanism: "none", note: support.cgroupUnavailableReason ?? "no pids controller" },
    storage: support.storageImages
      ? { mechanism: "loop-ext4" }
      : { mechanism: "rlimit", note: `RLIMIT_FSIZE per file: ${support.storageUnavailableReason}` },
    exactSignals: "unknown-until-prepared",
    layers: "unknown-until-prepared",
  };
}

/** Why no sandbox can start here, if something keeps every one from starting. */
export function startBlocker(state: RuntimeState): string | undefined {
  const { isolation, dataDir } = state;
  if (isolation === "unavailable") return state.isolationUnavailableReason;
  const art = state.artifacts;
  if (art === undefined) return undefined;
  try {
    peerReader(art);
  } catch (error) {
    return (error as Error).message;
  }
  if (!art.agentPath) return `the sandbox agent is not available: ${art.agentUnavailableReason}`;
  if (isolation !== "bwrap") return undefined;
  const layers = layerStates(state.wanted, art);
  const placedHere = art.launchPath !== undefined && layers.hideHostPaths.active && launchPlaceUsable();
  const blocked = layers.userNamespace.active && !placedHere ? unreachableAncestor(dataDir) : undefined;
  if (blocked) {
    return (
      `bubblewrap, running as a sandbox's uid, cannot pass through ${blocked} to the data directory ${dataDir}, ` +
      `and the sandboxes' directories cannot be put where it can (${art.launchPath ? `${LAUNCH_PLACE} is not usable` : "sandbox-launch is not available"}); ` +
      "put the data directory (AIEM_DATA_DIR) where every user may pass, or install a C compiler"
    );
  }
  return undefined;
}
