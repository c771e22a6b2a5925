// The local sandbox runtime: one agent process per sandbox, inside bubblewrap, on this machine.
// Layout under the data directory:
//   sandboxes/<id>/root       the sandbox's `/` (a directory, or the mount point of root.img)
//   sandboxes/<id>/root.img   its ext4 filesystem when storage is limited by an image
//   sandboxes/<id>/stage      mount point of the launcher's tmpfs (launch-command.ts): agent files
//                             and the private /etc, the sandbox's /.aiem
//   sandboxes/<id>/boot/      stage/, what the launcher copies onto that tmpfs (the agent and
//                             helpers as hard links into agent-cache/), and bubblewrap's arguments
//   sandboxes/<id>/agent.sock the agent's socket, made here by the host and handed to the agent
//                             as a descriptor (README.md, "The agent's socket")
//   sandboxes/<id>/uid-range  the sandbox's host uid range (see uid-ranges.ts)
//   sandboxes/<id>/run/       the agent's socket when unconfined
//   sandboxes/<id>/agent.log  the agent's standard error, for diagnosing a start that failed
//   agent-cache/              the agent, helpers and seccomp filter, by hash
//   spare-images/<bytes>.img  a formatted storage image per size, ready for the next start
//   spare-images/<bytes>.sock where its mount, made ahead, is held for the launcher
// A start's steps are in launch-sandbox.ts; this file holds the runtime's settings and the
// sandboxes' comings and goings (start, stop, destroy, close).
import * as fs from "node:fs";
import * as path from "node:path";
import { adopt } from "./adopt-sandbox.js";
import { AdoptedProcess, killRecorded } from "./adopted-sandboxes.js";
import { ALL_LAYERS, findBwrap } from "./bwrap.js";
import { launch } from "./launch-sandbox.js";
import { detectLimitSupport, findTool, removeRuntimeCgroupGroup, runtimeCgroupName } from "./limits.js";
import { runToEnd } from "./run-to-end.js";
import { baseCapabilities, layerStates, startBlocker } from "./runtime-capabilities.js";
import { type RuntimeState, prepareArtifacts, sandboxDir } from "./runtime-state.js";
import {
  type IsolationMode,
  type LocalSandboxRuntime,
  type LocalSandboxRuntimeOptions,
  type RuntimeCapabilities,
  type SandboxHandle,
  type SandboxStartOptions,
  SandboxRuntimeError,
} from "./runtime-types.js";
import { checkCapacity, defaultTotalProcesses } from "./sandbox-capacity.js";
import { type Spawner, createDirectSpawner, createLauncherSpawner } from "./spawner.js";
import { type ImageHolder, MKFS_OPTIONS, REMOVE_LOST_FOUND, createStorageImages } from "./storage-images.js";
import { stopEntry } from "./stop-sandbox.js";
import { releaseUidRange } from "./uid-ranges.js";

export * from "./runtime-types.js";

/** Formats a storage image as ext4, without lost+found where debugfs is at hand. */
async function formatImage(spawner: Spawner, file: string): Promise<void> {
  await runToEnd(spawner, findTool("mkfs.ext4") ?? "mkfs.ext4", [...MKFS_OPTIONS, file], `${file}.log`);
  const debugfs = findTool("debugfs");
  // Without it (or should it fail) the launcher removes lost+found after the mount.
  if (debugfs) await runToEnd(spawner, debugfs, [...REMOVE_LOST_FOUND, file], `${file}.log`).catch(() => undefined);
}

/**
 * Mounts a formatted spare ahead through sandbox-launch --premount, run by the spawner: resolves
 * once it holds the mount (it said "ready").
 */
function premountImage(
  spawner: Spawner,
  launchPath: string | undefined,
  file: string,
  socket: string,
): Promise<ImageHolder> {
  if (!launchPath) return Promise.reject(new Error("sandbox-launch is not available"));
  const child = spawner.spawn(launchPath, ["--premount", file, "--hold", socket], {
    env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" },
    cwd: "/",
    detached: false,
    logPath: `${file}.log`,
  });
  const holder: ImageHolder = { end: () => child.kill("SIGKILL") };
  return new Promise<ImageHolder>((resolve, reject) => {
    child.once("ready", () => resolve(holder));
    child.once("exit", (code: number | null) => reject(new Error(`sandbox-launch --premount exited (${code})`)));
    child.once("error", (error: Error) => reject(error));
  });
}

/** The runtime's settings and empty books, from its options and what this machine offers. */
function createRuntimeState(
  options: LocalSandboxRuntimeOptions,
  stop: (sandboxId: string) => Promise<void>,
): RuntimeState {
  const dataDir = path.resolve(options.dataDir);
  const bwrapPath = findBwrap(options.bwrapPath);
  const unconfined = bwrapPath === undefined && options.unconfined === true;
  const isolation: IsolationMode | "unavailable" = bwrapPath ? "bwrap" : unconfined ? "unconfined" : "unavailable";
  const isolationUnavailableReason =
    isolation === "unavailable"
      ? "bubblewrap (bwrap) is not installed, so sandboxes cannot be isolated; install the Debian package " +
        "'bubblewrap', or let the operator opt into running sandboxes unconfined (no isolation at all)"
      : undefined;
  const spawner = options.spawner === "direct" ? createDirectSpawner() : createLauncherSpawner();
  const state: RuntimeState = {
    options,
    dataDir,
    cacheDir: options.cacheDir ? path.resolve(options.cacheDir) : path.join(dataDir, "agent-cache"),
    bwrapPath,
    isolation,
    isolationUnavailableReason,
    support: detectLimitSupport({
      useCgroups: options.useCgroups ?? true,
      useStorageImages: (options.useStorageImages ?? true) && isolation === "bwrap",
    }),
    groupName: runtimeCgroupName(dataDir),
    maxProcesses: options.maxProcesses ?? 4096,
    maxTotalProcesses: options.maxTotalProcesses ?? defaultTotalProcesses(),
    wanted: { ...ALL_LAYERS, ...options.isolationLayers },
    uidRegistry: options.uidRangeRegistry ?? "/run/aiem/uid-ranges",
    keepRunning: options.keepRunning === true,
    spawner,
    images: createStorageImages(
      path.join(dataDir, "spare-images"),
      (file) => formatImage(spawner, file),
      (file, socket) => premountImage(spawner, state.artifacts?.launchPath, file, socket),
    ),
    reservedStorage: new Map(),
    running: new Map(),
    starting: new Map(),
    cleanups: new Map(),
    artifacts: options.agentArtifacts,
    processGroup: undefined,
    stop,
  };
  return state;
}

export function createLocalSandboxRuntime(options: LocalSandboxRuntimeOptions): LocalSandboxRuntime {
  checkAgentSetting(process.env.AIEM_SANDBOX_AGENT);
  const state = createRuntimeState(options, stop);
  const { running, starting, images, spawner } = state;
  const capabilities = baseCapabilities(state.isolation, state.isolationUnavailableReason, state.support);

  async function stop(sandboxId: string): Promise<void> {
    const dir = sandboxDir(state, sandboxId);
    const pending = starting.get(sandboxId);
    if (pending) await pending.catch(() => undefined);
    if (state.keepRunning && state.isolation === "bwrap" && !running.has(sandboxId)) {
      // Left running by an earlier runtime: take it over to end it. One whose agent is gone
      // needs nothing more than its record removed; one whose agent does not answer is ended
      // from its record.
      await adopt(state, sandboxId, dir).catch(() => killRecorded(dir));
    }
    const entry = running.get(sandboxId);
    if (!entry) return;
    entry.stopping ??= stopEntry(entry);
    await entry.stopping;
    if (running.get(sandboxId) === entry) running.delete(sandboxId);
  }

  function start(sandboxId: string, startOptions: SandboxStartOptions = {}): Promise<SandboxHandle> {
    try {
      sandboxDir(state, sandboxId);
    } catch (error) {
      return Promise.reject(error);
    }
    const existing = running.get(sandboxId);
    if (existing && !existing.stopping) return Promise.resolve(existing.handle);
    const pending = starting.get(sandboxId);
    if (pending) return pending;
    const promise = (async () => {
      if (existing?.stopping) await existing.stopping;
      return launch(state, sandboxId, startOptions);
    })();
    starting.set(sandboxId, promise);
    const clear = () => {
      if (starting.get(sandboxId) === promise) starting.delete(sandboxId);
      images.release(path.join(sandboxDir(state, sandboxId), "root.img"));
      // Once this start is over, not during it: formatting takes CPU the start needs.
      images.replenish();
    };
    promise.then(clear, clear);
    return promise;
  }

  async function destroy(sandboxId: string): Promise<void> {
    const dir = sandboxDir(state, sandboxId);
    await stop(sandboxId);
    releaseUidRange(state.uidRegistry, dir);
    // The sandbox is stopped, so nothing can swap entries under this removal; rm never follows
    // symbolic links, so links the sandbox left pointing at host paths are removed, not followed.
    await fs.promises.rm(dir, { recursive: true, force: true });
  }

  /** Leaves the bwrap sandboxes running for the next runtime to adopt; stops the others. */
  async function release(): Promise<void> {
    // Unconfined sandboxes are never kept (their processes would outlive the agent's end in
    // groups of their own): stopped as without the option.
    await Promise.all([...running].filter(([, e]) => e.handle.isolation !== "bwrap").map(([id]) => stop(id)));
    // Left running for the next runtime to adopt: only this runtime's hold on them ends.
    for (const entry of running.values()) {
      entry.released = true;
      entry.connection.close();
      if (entry.child instanceof AdoptedProcess) entry.child.release();
    }
    running.clear();
    spawner.close();
  }

  return {
    dataDir: state.dataDir,
    get capabilities(): RuntimeCapabilities {
      const { artifacts } = state;
      return {
        ...capabilities,
        exactSignals: artifacts ? true : ("unknown-until-prepared" as const),
        layers:
          artifacts && state.isolation === "bwrap"
            ? layerStates(state.wanted, artifacts)
            : ("unknown-until-prepared" as const),
      };
    },
    prepare: async () => {
      await prepareArtifacts(state);
    },
    startBlocker: () => startBlocker(state),
    checkCapacity: (limits, sandboxId) => checkCapacity(state, limits, sandboxId),
    start,
    get: (sandboxId) => running.get(sandboxId)?.handle,
    isRunning: (sandboxId) => running.has(sandboxId),
    stop,
    destroy,
    async close(closeOptions = {}) {
      await Promise.all([...starting.values()].map((p) => p.catch(() => undefined)));
      await images.close();
      if (state.keepRunning && closeOptions.stopSandboxes !== true) return release();
      await Promise.all([...running.keys()].map((id) => stop(id)));
      await Promise.all(state.cleanups.values());
      spawner.close();
      if (state.support.cgroup) removeRuntimeCgroupGroup(state.support.cgroup, state.groupName);
      state.processGroup = undefined;
    },
  };
}

/**
 * AIEM_SANDBOX_AGENT may only name `native`, the one agent there is: any other value (`node`, a
 * typo) is refused when the runtime is made, rather than ignored, so that a setting that means
 * nothing is noticed.
 */
function checkAgentSetting(value: string | undefined): void {
  if (value === undefined || value === "" || value === "native") return;
  throw new SandboxRuntimeError(
    "invalid-argument",
    `AIEM_SANDBOX_AGENT=${JSON.stringify(value)}: sandboxes run the native agent only (there is no Node agent); ` +
      "unset AIEM_SANDBOX_AGENT or set it to native",
  );
}
