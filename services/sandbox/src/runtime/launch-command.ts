// The command a launch spawns. Confined: the launcher (sandbox-launch, or a shell running the same
// steps) that joins the cgroups, mounts the storage image and the stage, and runs bubblewrap with
// the agent as the sandbox's first process. Unconfined: the agent itself.
import * as fs from "node:fs";
import * as path from "node:path";
import type { AgentArtifacts } from "./agent-artifacts.js";
import {
  AGENT_SOCKET_FD,
  type IsolationLayers,
  LAUNCH_PLACE,
  buildBwrapArgs,
  prepareEtcTree,
  privateEtcFiles,
  publishSharedAgent,
  sharedEtcEntries,
} from "./bwrap.js";
import { launchPlaceUsable, unreachableAncestor } from "./launch-place.js";
import type { LaunchLimits } from "./launch-limits.js";
import type { SandboxCgroup } from "./limits.js";
import { layerStates } from "./runtime-capabilities.js";
import { SandboxRuntimeError, type LayerState } from "./runtime-types.js";
import type { RuntimeState } from "./runtime-state.js";
import { acquireUidRange } from "./uid-ranges.js";

/** Where a launch's files are on the host (local-runtime.ts says the layout). */
export interface LaunchPaths {
  readonly dir: string;
  readonly root: string;
  readonly stageDir: string;
  readonly bootDir: string;
}

export interface LaunchCommand {
  readonly command: string;
  readonly args: string[];
  /** The isolation layers in force, when confined. */
  readonly layers: Record<keyof IsolationLayers, LayerState> | undefined;
  /** The first host uid of the sandbox's uid range (0 without a user namespace). */
  readonly hostUid: number;
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, "'\\''")}'`;
}

/** A hard link where the file system allows one (the cache and the sandbox on one), else a copy. */
function linkOrCopy(from: string, to: string): void {
  try {
    fs.linkSync(from, to);
  } catch {
    fs.copyFileSync(from, to);
  }
}

function activeLayers(layers: Record<keyof IsolationLayers, LayerState>): IsolationLayers {
  // Object.fromEntries loses the keys' type; they are exactly those of `layers`.
  return Object.fromEntries(Object.entries(layers).map(([k, v]) => [k, v.active])) as unknown as IsolationLayers;
}

/**
 * The sandbox's uid range, once bubblewrap (running as its uid) can reach the sandbox's
 * directories: through the data directory, opened for passing, unless they are `placed`.
 */
function prepareUidRange(
  state: RuntimeState,
  art: AgentArtifacts,
  active: IsolationLayers,
  placed: boolean,
  dir: string,
): number {
  const { dataDir } = state;
  if (!placed) {
    // bwrap runs as the sandbox's uid: it must be able to pass through the data directory
    // (only pass: 0711 lists nothing) to reach the sandbox's root and stage.
    const blocked = unreachableAncestor(dataDir);
    if (blocked) {
      const why = !art.launchPath
        ? `sandbox-launch is not available${art.launchUnavailableReason ? ` (${art.launchUnavailableReason})` : ""}`
        : !active.hideHostPaths
          ? "host paths are not hidden"
          : `${LAUNCH_PLACE} cannot be made where every user may pass`;
      throw new Error(
        `bubblewrap, running as the sandbox's uid, cannot pass through ${blocked} (mode ${(fs.statSync(blocked).mode & 0o777).toString(8)}) ` +
          `to the data directory, and the sandbox's directories cannot be put where it can: ${why}; ` +
          "put the data directory (AIEM_DATA_DIR) where every user may pass, or install a C compiler",
      );
    }
    for (const d of [dataDir, path.join(dataDir, "sandboxes"), dir]) {
      const mode = fs.statSync(d).mode & 0o7777;
      if ((mode & 0o011) !== 0o011) fs.chmodSync(d, mode | 0o011);
    }
  }
  return acquireUidRange(state.uidRegistry, dir).base;
}

interface StageInput {
  readonly paths: LaunchPaths;
  readonly active: IsolationLayers;
  readonly placed: boolean;
  readonly etcShared: string[] | undefined;
  readonly agentConfig: string;
}

/**
 * Lays out boot/stage, what the launcher copies onto the stage as it is to be there (so that one
 * `cp -a` does it: every process the launcher runs is a fork and exec on a start's path), and
 * returns bubblewrap's arguments.
 */
function stageBoot(state: RuntimeState, art: AgentArtifacts, input: StageInput) {
  const { paths, active, placed, etcShared } = input;
  const sharedAgent = publishSharedAgent(art.agentPath!);
  fs.rmSync(paths.bootDir, { recursive: true, force: true });
  const staged = path.join(paths.bootDir, "stage");
  fs.mkdirSync(path.join(staged, "etc"), { recursive: true, mode: 0o755 });
  for (const [name, text] of Object.entries(privateEtcFiles("sandbox"))) {
    fs.writeFileSync(path.join(staged, "etc", name), text, { mode: 0o644 });
  }
  if (etcShared) prepareEtcTree(path.join(staged, "etc"));
  // The shared binary is bound from where it was published; only without one a copy.
  if (!sharedAgent) linkOrCopy(art.agentPath!, path.join(staged, "agent"));
  fs.mkdirSync(paths.stageDir, { recursive: true, mode: 0o755 });
  return buildBwrapArgs({
    root: placed ? path.join(LAUNCH_PLACE, "root") : paths.root,
    stageDir: placed ? path.join(LAUNCH_PLACE, "stage") : paths.stageDir,
    agentPath: art.agentPath!,
    sharedAgentPath: sharedAgent,
    agentConfig: input.agentConfig,
    hostname: "sandbox",
    layers: active,
    seccompFd: 4,
    dieWithParent: !state.keepRunning,
    etcPrepared: etcShared !== undefined,
  });
}

interface LauncherInput {
  readonly paths: LaunchPaths;
  readonly cgroup: SandboxCgroup | undefined;
  readonly imagePath: string | undefined;
  readonly imageFresh: boolean;
  readonly premounted: string | undefined;
  readonly etcShared: string[] | undefined;
  readonly placed: boolean;
  readonly argsFile: string;
  readonly filter: string;
  /** What the launcher runs last: bubblewrap, through sandbox-enter with a user namespace. */
  readonly next: string[];
}

/**
 * The launcher: joins the cgroups, then in a mount namespace of its own (nothing stays mounted
 * on the host when the sandbox ends) mounts the storage image and a small tmpfs (the stage) with
 * the agent's files, the private /etc and the socket directory, and runs what comes next. Every
 * step execs the next, so the pid the spawner reports is bwrap's. sandbox-launch does it in one
 * process; without a C compiler a shell runs the same steps as programs.
 */
function launcherCommand(art: AgentArtifacts, input: LauncherInput): { command: string; args: string[] } {
  const { paths, cgroup, imagePath, argsFile, filter, next } = input;
  if (art.launchPath) {
    const args = [
      ...(cgroup?.procsFiles ?? []).flatMap((file) => ["--cgroup", file]),
      ...(imagePath && input.imageFresh && input.premounted ? ["--premounted", input.premounted] : []),
      ...(imagePath ? [input.imageFresh ? "--new-image" : "--image", imagePath] : []),
      ...(input.etcShared ?? []).flatMap((entry) => ["--etc", entry]),
      ...(input.placed ? ["--place", LAUNCH_PLACE] : []),
      ...["--socket-fd", String(AGENT_SOCKET_FD)],
      ...["--root", paths.root, "--stage", paths.stageDir, "--boot", paths.bootDir, "--args", argsFile],
      ...["--filter", filter],
      "--",
      ...next,
    ];
    return { command: art.launchPath, args };
  }
  const inner = [
    "stage=$1 boot=$2 image=$3 root=$4 args=$5 filter=$6",
    "shift 6",
    'if [ -n "$image" ]; then mount -o loop,nosuid,nodev "$image" "$root" || exit 92; rmdir "$root/lost+found" 2>/dev/null; fi',
    'mount -t tmpfs -o mode=0755,size=16m aiem-stage "$stage" || exit 96',
    'cp -a "$boot/stage/." "$stage/" || exit 96',
    'exec "$@" 3<"$args" 4<"$filter"',
  ].join("\n");
  const prelude = (cgroup?.procsFiles ?? []).map((file) => `echo $$ > ${shellQuote(file)} || exit 91`);
  const script = [...prelude, `exec unshare --mount --propagation private -- /bin/sh -c ${shellQuote(inner)} sh "$@"`];
  const args = ["-c", script.join("\n"), "sh"];
  args.push(paths.stageDir, paths.bootDir, imagePath ?? "", paths.root, argsFile, filter, ...next);
  return { command: "/bin/sh", args };
}

/** The launcher's command for a sandbox in bubblewrap; undoes the cgroup when it cannot be made. */
export function confinedCommand(
  state: RuntimeState,
  art: AgentArtifacts,
  sandboxId: string,
  paths: LaunchPaths,
  limits: LaunchLimits,
  agentConfig: string,
): LaunchCommand {
  const { cgroup } = limits;
  const layers = layerStates(state.wanted, art);
  const active = activeLayers(layers);
  // sandbox-launch binds the shared /etc entries into the stage's etc/, which bubblewrap then
  // binds once; the shell fallback leaves them to bubblewrap, one bind each.
  const etcShared = art.launchPath && active.privateEtc ? sharedEtcEntries() : undefined;
  // sandbox-launch puts the root and stage where bubblewrap reaches them whatever the data
  // directory's place (LAUNCH_PLACE); then bubblewrap never passes through it itself.
  const placed = art.launchPath !== undefined && active.hideHostPaths && launchPlaceUsable();
  let hostUid = 0;
  if (active.userNamespace) {
    try {
      hostUid = prepareUidRange(state, art, active, placed, paths.dir);
    } catch (error) {
      void cgroup?.remove();
      throw new SandboxRuntimeError(
        "start-failed",
        `sandbox ${sandboxId} cannot start: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  let built: ReturnType<typeof buildBwrapArgs>;
  try {
    built = stageBoot(state, art, { paths, active, placed, etcShared, agentConfig });
  } catch (error) {
    void cgroup?.remove();
    throw error;
  }
  const argsFile = path.join(paths.bootDir, "bwrap.args");
  fs.writeFileSync(argsFile, active.hideHostPaths ? built.options.map((a) => `${a}\0`).join("") : "", {
    mode: 0o600,
  });
  const bwrapArgs = active.hideHostPaths
    ? ["--args", "3", "--", ...built.command]
    : [...built.options, "--", ...built.command];
  const enter = active.userNamespace ? [art.enterPath!, String(hostUid), "65536", paths.root, "--"] : [];
  const filter = active.seccomp ? art.seccompFilterPath! : "/dev/null";
  const next = [...enter, state.bwrapPath!, ...bwrapArgs];
  const launcher = launcherCommand(art, {
    paths,
    cgroup,
    imagePath: limits.imagePath,
    imageFresh: limits.imageFresh,
    premounted: limits.premounted,
    etcShared,
    placed,
    argsFile,
    filter,
    next,
  });
  return { ...launcher, layers, hostUid };
}

/** The agent itself, joining the sandbox's cgroups first through a shell when there are any. */
export function unconfinedCommand(art: AgentArtifacts, cgroup: SandboxCgroup | undefined): LaunchCommand {
  const prelude = (cgroup?.procsFiles ?? []).map((file) => `echo $$ > ${shellQuote(file)} || exit 91`);
  if (prelude.length === 0) return { command: art.agentPath!, args: [], layers: undefined, hostUid: 0 };
  const args = ["-c", [...prelude, 'exec "$@"'].join("\n"), "sh", art.agentPath!];
  return { command: "/bin/sh", args, layers: undefined, hostUid: 0 };
}
