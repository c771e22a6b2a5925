// The local sandbox runtime: one agent process per sandbox, inside bubblewrap, on this machine.
// Layout under the data directory:
//   sandboxes/<id>/root       the sandbox's `/` (a directory, or the mount point of root.img)
//   sandboxes/<id>/root.img   its ext4 filesystem when storage is limited by an image
//   sandboxes/<id>/stage      mount point of the launcher's tmpfs (see launch below): agent files
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
// This file is longer than the others (about 650 lines) because launch() is one sequence whose
// steps (storage image, cgroup, uid range, bubblewrap arguments, spawn, agent connection) each
// undo the earlier ones when they fail; the types and the adoption records live beside it.
import * as fs from "node:fs";
import * as path from "node:path";
import { prepareAgentArtifacts, preparePeerCredentials, type AgentArtifacts } from "./agent-artifacts.js";
import { type AgentConnection, connectAgent, openTunnel } from "./agent-client.js";
import { type AgentIdentity, loadPeerCredentials } from "./agent-peer.js";
import {
  AGENT_SOCKET_FD,
  ALL_LAYERS,
  type IsolationLayers,
  LAUNCH_PLACE,
  buildBwrapArgs,
  findBwrap,
  prepareEtcTree,
  privateEtcFiles,
  publishSharedAgent,
  sharedEtcEntries,
} from "./bwrap.js";
import { acquireUidRange, releaseUidRange } from "./uid-ranges.js";
import { type SpawnedProcess, createDirectSpawner, createLauncherSpawner } from "./spawner.js";
import {
  type AppliedLimit,
  type AppliedLimits,
  type LimitSupport,
  type SandboxCgroup,
  type SandboxLimits,
  createSandboxCgroup,
  detectLimitSupport,
  removeRuntimeCgroupGroup,
  boundRuntimeProcesses,
  readProcessCount,
  MIN_STORAGE_BYTES,
  findTool,
  runtimeCgroupName,
} from "./limits.js";
import { MKFS_OPTIONS, createStorageImages } from "./storage-images.js";
import {
  AdoptedProcess,
  childrenOf,
  killNamespaceInit,
  killRecorded,
  namespaceInit,
  processStartTime,
  writeRecord,
  type SandboxRecord,
} from "./adopted-sandboxes.js";
import {
  SandboxRuntimeError,
  type IsolationMode,
  type LayerState,
  type LocalSandboxRuntime,
  type LocalSandboxRuntimeOptions,
  type RuntimeCapabilities,
  type SandboxExit,
  type SandboxHandle,
  type SandboxStartOptions,
} from "./runtime-types.js";

export * from "./runtime-types.js";

const SANDBOX_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

/**
 * The host pid `depth` generations under `pid` when each generation has one child (bwrap, its
 * namespace's init, the agent), else undefined.
 */
function onlyChild(pid: number, depth: number): number | undefined {
  let current = pid;
  for (let i = 0; i < depth; i++) {
    const children = childrenOf(current);
    if (children.length !== 1) return undefined;
    current = children[0]!;
  }
  return current;
}

function isSocket(file: string): boolean {
  try {
    return fs.lstatSync(file).isSocket();
  } catch {
    return false;
  }
}

let launchPlace: boolean | undefined;

/** Whether LAUNCH_PLACE is (now) an empty directory of root's every user may pass through. */
function launchPlaceUsable(): boolean {
  if (launchPlace === undefined) {
    try {
      fs.mkdirSync(LAUNCH_PLACE, { recursive: true, mode: 0o755 });
      const st = fs.statSync(LAUNCH_PLACE);
      launchPlace =
        st.isDirectory() &&
        st.uid === 0 &&
        (st.mode & 0o022) === 0 &&
        (st.mode & 0o001) !== 0 &&
        unreachableAncestor(LAUNCH_PLACE) === undefined;
    } catch {
      launchPlace = false;
    }
  }
  return launchPlace;
}

/** The first directory above `dir` that other users may not pass through, if any. */
function unreachableAncestor(dir: string): string | undefined {
  const parts = path.resolve(dir).split(path.sep).filter(Boolean);
  for (let i = 0; i < parts.length; i++) {
    const d = `/${parts.slice(0, i).join("/")}`;
    try {
      if ((fs.statSync(d).mode & 0o001) === 0) return d;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** `dir`, or its nearest ancestor that exists (a data directory not made yet). */
function existingAncestor(dir: string): string {
  let current = path.resolve(dir);
  while (!fs.existsSync(current) && path.dirname(current) !== current) current = path.dirname(current);
  return current;
}

/**
 * What a sandbox needs to start, counted against maxTotalProcesses: bubblewrap and its init, and
 * the agent with the threads it starts up front (go-agent/threads.go: 18 with 2 CPUs, up to 20).
 */
const AGENT_PROCESSES = 24;

/** Half of what the kernel allows in all, pids or threads: the rest stays the host's. */
function defaultTotalProcesses(): number {
  const read = (file: string) => {
    try {
      return Number(fs.readFileSync(file, "utf8").trim()) || Number.POSITIVE_INFINITY;
    } catch {
      return Number.POSITIVE_INFINITY;
    }
  };
  const least = Math.min(read("/proc/sys/kernel/pid_max"), read("/proc/sys/kernel/threads-max"));
  return Number.isFinite(least) ? Math.floor(least / 2) : 16384;
}

function formatBytes(bytes: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, "'\\''")}'`;
}

function buildArgsOrCleanUp<T>(cgroup: SandboxCgroup | undefined, build: () => T): T {
  try {
    return build();
  } catch (error) {
    void cgroup?.remove();
    throw error;
  }
}

/** A hard link where the file system allows one (the cache and the sandbox on one), else a copy. */
function linkOrCopy(from: string, to: string): void {
  try {
    fs.linkSync(from, to);
  } catch {
    fs.copyFileSync(from, to);
  }
}

function tail(file: string, bytes = 2000): string {
  try {
    const data = fs.readFileSync(file);
    return data
      .subarray(Math.max(0, data.length - bytes))
      .toString("utf8")
      .trim();
  } catch {
    return "";
  }
}

interface Running {
  handle: SandboxHandle;
  child: SpawnedProcess;
  connection: AgentConnection;
  cgroup: SandboxCgroup | undefined;
  stopping: Promise<void> | undefined;
  stopRequested: boolean;
  /** Left running by close() for the next runtime: what becomes of it is no longer this runtime's. */
  released: boolean;
}

export function createLocalSandboxRuntime(options: LocalSandboxRuntimeOptions): LocalSandboxRuntime {
  const dataDir = path.resolve(options.dataDir);
  const cacheDir = options.cacheDir ? path.resolve(options.cacheDir) : path.join(dataDir, "agent-cache");
  const bwrapPath = findBwrap(options.bwrapPath);
  const unconfined = bwrapPath === undefined && options.unconfined === true;
  const isolation: IsolationMode | "unavailable" = bwrapPath ? "bwrap" : unconfined ? "unconfined" : "unavailable";
  const isolationUnavailableReason =
    isolation === "unavailable"
      ? "bubblewrap (bwrap) is not installed, so sandboxes cannot be isolated; install the Debian package " +
        "'bubblewrap', or let the operator opt into running sandboxes unconfined (no isolation at all)"
      : undefined;
  const support: LimitSupport = detectLimitSupport({
    useCgroups: options.useCgroups ?? true,
    useStorageImages: (options.useStorageImages ?? true) && isolation === "bwrap",
  });
  const groupName = runtimeCgroupName(dataDir);
  checkAgentSetting(process.env.AIEM_SANDBOX_AGENT);
  const maxProcesses = options.maxProcesses ?? 4096;
  const maxTotalProcesses = options.maxTotalProcesses ?? defaultTotalProcesses();
  /** The runtime's group in the pids hierarchy, once bounded (at the first start). */
  let processGroup: string | undefined;
  /** Storage of starts that passed the check and have no image yet, by sandbox. */
  const reservedStorage = new Map<string, number>();
  const running = new Map<string, Running>();
  const starting = new Map<string, Promise<SandboxHandle>>();
  /** Cgroup removals still running for sandboxes that ended; a new start waits for them. */
  const cleanups = new Map<string, Promise<void>>();
  let artifacts: AgentArtifacts | undefined = options.agentArtifacts;
  const spawner = options.spawner === "direct" ? createDirectSpawner() : createLauncherSpawner();
  const wanted: IsolationLayers = { ...ALL_LAYERS, ...options.isolationLayers };
  const uidRegistry = options.uidRangeRegistry ?? "/run/aiem/uid-ranges";
  const keepRunning = options.keepRunning === true;
  const images = createStorageImages(path.join(dataDir, "spare-images"), (file) =>
    runToEnd(findTool("mkfs.ext4") ?? "mkfs.ext4", [...MKFS_OPTIONS, file], `${file}.log`),
  );

  /**
   * Runs a helper program through the spawner (never a fork of this process) to its end, or
   * kills it after `timeoutMs`. The timer also keeps this process alive meanwhile: the launcher
   * does not.
   */
  function runToEnd(command: string, args: string[], logPath: string, timeoutMs = 60_000): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const child = spawner.spawn(command, args, {
        env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" },
        cwd: "/",
        detached: false,
        logPath,
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      child.once("error", (error: Error) => reject(error));
      child.once("exit", (code: number | null, signal: NodeJS.Signals | null) => {
        clearTimeout(timer);
        const details = tail(logPath);
        fs.rmSync(logPath, { force: true });
        if (code === 0) resolve();
        else reject(new Error(`${command} failed (${signal ?? `exit code ${code}`})${details ? `: ${details}` : ""}`));
      });
    });
  }

  /** What each layer comes to on this machine, once the helpers are built. */
  function layerStates(art: AgentArtifacts): Record<keyof IsolationLayers, LayerState> {
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

  const cg = support.cgroup;
  const cgMechanism = cg ? (cg.version === 1 ? "cgroup-v1" : "cgroup-v2") : undefined;
  const capabilities: RuntimeCapabilities = {
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

  function startBlocker(): string | undefined {
    if (isolation === "unavailable") return isolationUnavailableReason;
    const art = artifacts;
    if (art === undefined) return undefined;
    try {
      peerReader(art);
    } catch (error) {
      return (error as Error).message;
    }
    if (!art.agentPath) return `the sandbox agent is not available: ${art.agentUnavailableReason}`;
    if (isolation !== "bwrap") return undefined;
    const layers = layerStates(art);
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

  function boundProcesses(): void {
    if (processGroup !== undefined || !support.cgroup?.parents.pids) return;
    processGroup = boundRuntimeProcesses(support.cgroup, groupName, maxTotalProcesses);
  }

  function checkCapacity(limits: SandboxLimits, sandboxId?: string): void {
    const requested = Math.max(Number(limits.storageBytes ?? 0), 0);
    const own = sandboxId === undefined ? undefined : path.join(dataDir, "sandboxes", sandboxId, "root.img");
    if (support.storageImages && requested > 0 && (own === undefined || !fs.existsSync(own))) {
      const wanted = Math.max(requested, MIN_STORAGE_BYTES);
      const images = storageImagesHeld();
      let held = images.bytes;
      for (const [id, bytes] of reservedStorage) if (id !== sandboxId) held += bytes;
      const configured = options.maxTotalStorageBytes;
      let bound = configured;
      if (bound === undefined) {
        const fsStat = fs.statfsSync(existingAncestor(dataDir));
        bound = Math.floor(0.9 * (fsStat.bavail * fsStat.bsize + images.allocated));
      }
      if (bound > 0 && held + wanted > bound) {
        throw new SandboxRuntimeError(
          "resource-exhausted",
          `the sandboxes on this host hold ${formatBytes(held)} of storage; another ${formatBytes(wanted)} would pass ` +
            `the bound of ${formatBytes(bound)} for all of them (AIEM_SANDBOX_MAX_TOTAL_STORAGE_BYTES` +
            `${configured === undefined ? ", by default 90% of what the data directory's file system has for them" : ""}); ` +
            "delete sandboxes that are no longer needed, or raise the bound",
        );
      }
    }
    boundProcesses();
    if (processGroup !== undefined && maxTotalProcesses > 0) {
      const count = readProcessCount(processGroup);
      // An agent needs a few of its own to start (Node's threads, its helper).
      if (count !== undefined && count.current + AGENT_PROCESSES > maxTotalProcesses) {
        throw new SandboxRuntimeError(
          "resource-exhausted",
          `the sandboxes on this host run ${count.current} processes and threads, the most all of them may run ` +
            `together being ${maxTotalProcesses} (AIEM_SANDBOX_MAX_TOTAL_PROCESSES); end processes or sandboxes, or raise the bound`,
        );
      }
    }
  }

  /** The sizes of the storage images of this runtime's sandboxes, and the bytes they take on disk. */
  function storageImagesHeld(): { bytes: number; allocated: number } {
    let bytes = 0;
    let allocated = 0;
    let names: string[] = [];
    try {
      names = fs.readdirSync(path.join(dataDir, "sandboxes"));
    } catch {
      // no sandboxes yet
    }
    for (const name of names) {
      try {
        const st = fs.statSync(path.join(dataDir, "sandboxes", name, "root.img"));
        bytes += st.size;
        allocated += st.blocks * 512;
      } catch {
        // no image: no storage limit
      }
    }
    return { bytes, allocated };
  }

  function sandboxDir(sandboxId: string): string {
    if (!SANDBOX_ID.test(sandboxId)) {
      throw new SandboxRuntimeError("invalid-argument", `invalid sandbox id ${JSON.stringify(sandboxId)}`);
    }
    return path.join(dataDir, "sandboxes", sandboxId);
  }

  async function prepare(): Promise<void> {
    artifacts ??= await prepareAgentArtifacts(cacheDir);
  }

  /** The agent's identity checker, or why there is none (then no sandbox starts: agent-peer.ts). */
  function peerReader(addon: {
    peerCredentialsPath?: string | undefined;
    peerCredentialsUnavailableReason?: string | undefined;
  }) {
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
  async function connectTo(socketPath: string, sandboxPid: number, identity: AgentIdentity) {
    let addon: Parameters<typeof peerReader>[0];
    if (artifacts) addon = artifacts;
    else {
      const built = await preparePeerCredentials(cacheDir);
      addon = { peerCredentialsPath: built.path, peerCredentialsUnavailableReason: built.reason };
    }
    return connectAgent(socketPath, {
      maxMessageBytes: options.maxMessageBytes,
      sandboxPid,
      agent: { identity, read: peerReader(addon) },
    });
  }

  async function launch(sandboxId: string, startOptions: SandboxStartOptions): Promise<SandboxHandle> {
    const begin = performance.now();
    if (isolation === "unavailable")
      throw new SandboxRuntimeError("isolation-unavailable", isolationUnavailableReason!);
    const dir = sandboxDir(sandboxId);
    if (keepRunning && isolation === "bwrap") {
      const adopted = await adopt(sandboxId, dir);
      if (adopted) return adopted;
    }
    await prepare();
    const art = artifacts!;
    const peer = peerReader(art);
    checkCapacity(startOptions.limits ?? {}, sandboxId);
    if (!art.agentPath) {
      throw new SandboxRuntimeError(
        "start-failed",
        `the sandbox agent is not available: ${art.agentUnavailableReason}`,
      );
    }
    const limits = startOptions.limits ?? {};
    const root = path.join(dir, "root");
    const runDir = path.join(dir, "run");
    const stageDir = path.join(dir, "stage");
    const bootDir = path.join(dir, "boot");
    fs.mkdirSync(root, { recursive: true, mode: 0o755 });
    fs.rmSync(runDir, { recursive: true, force: true });
    const confined = isolation === "bwrap";
    if (!confined) fs.mkdirSync(runDir, { mode: 0o700 });
    const socketPath = confined ? path.join(dir, "agent.sock") : path.join(runDir, "agent.sock");
    fs.rmSync(socketPath, { force: true });
    const logPath = path.join(dir, "agent.log");

    // Storage: an image when the machine can mount one, otherwise a per-file rlimit.
    const storageBytes = Number(limits.storageBytes ?? 0);
    let storage: AppliedLimit = { mechanism: "none", note: "no storage limit requested" };
    let imagePath: string | undefined;
    const existingImage = path.join(dir, "root.img");
    // A sandbox whose files live in an image keeps using it, whatever this start asks for.
    const hasImage = fs.existsSync(existingImage);
    if (hasImage || storageBytes > 0) {
      if (support.storageImages) {
        imagePath = existingImage;
        if (!hasImage) reservedStorage.set(sandboxId, Math.max(storageBytes, MIN_STORAGE_BYTES));
        const image = await images.ensure(imagePath, storageBytes).finally(() => reservedStorage.delete(sandboxId));
        storage = {
          mechanism: "loop-ext4",
          value: image.size,
          note: image.size !== storageBytes ? `the image is ${image.size} bytes` : undefined,
        };
      } else if (hasImage) {
        throw new SandboxRuntimeError(
          "start-failed",
          `sandbox ${sandboxId} keeps its files in a storage image, which cannot be mounted here: ${support.storageUnavailableReason}`,
        );
      } else {
        storage = {
          mechanism: "rlimit",
          value: storageBytes,
          note: `RLIMIT_FSIZE per file: ${support.storageUnavailableReason}`,
        };
      }
    }

    // Memory, CPU, processes: a cgroup, otherwise the rlimit fallback for memory.
    let cgroup: SandboxCgroup | undefined;
    await cleanups.get(sandboxId);
    if (support.cgroup) {
      cgroup = createSandboxCgroup(support.cgroup, groupName, sandboxId, limits, maxProcesses);
    }
    const memoryBytes = Number(limits.memoryBytes ?? 0);
    const memory: AppliedLimit =
      cgroup && cgroup.applied.memory.mechanism !== "none"
        ? cgroup.applied.memory
        : memoryBytes > 0
          ? {
              mechanism: "rlimit",
              value: memoryBytes,
              note: "RLIMIT_AS per process (virtual memory), no cgroup memory controller",
            }
          : { mechanism: "none", note: "no memory limit requested" };
    const cpu: AppliedLimit = cgroup?.applied.cpu ?? {
      mechanism: "none",
      note:
        (limits.milliCpuLimit ?? 0) > 0 ? `not enforced: ${support.cgroupUnavailableReason}` : "no CPU limit requested",
    };
    const processes: AppliedLimit = cgroup?.applied.processes ?? {
      mechanism: "none",
      note: `not enforced: ${support.cgroupUnavailableReason}`,
    };
    const applied: AppliedLimits = { memory, cpu, processes, storage };

    const agentConfig = JSON.stringify({
      ...(confined ? { socketFd: AGENT_SOCKET_FD } : { socket: socketPath }),
      root: confined ? "/" : root,
      version: art.version,
      outputLimitBytes: options.outputLimitBytes,
      totalOutputLimitBytes: totalOutputLimit(memoryBytes),
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

    let command: string;
    let args: string[];
    let layers: Record<keyof IsolationLayers, LayerState> | undefined;
    let hostUid = 0;
    let etcShared: string[] | undefined;
    let placed = false;
    if (confined) {
      layers = layerStates(art);
      const active = Object.fromEntries(
        Object.entries(layers).map(([k, v]) => [k, v.active]),
      ) as unknown as IsolationLayers;
      // sandbox-launch binds the shared /etc entries into the stage's etc/, which bubblewrap then
      // binds once; the shell fallback leaves them to bubblewrap, one bind each.
      etcShared = art.launchPath && active.privateEtc ? sharedEtcEntries() : undefined;
      // sandbox-launch puts the root and stage where bubblewrap reaches them whatever the data
      // directory's place (LAUNCH_PLACE); then bubblewrap never passes through it itself.
      placed = art.launchPath !== undefined && active.hideHostPaths && launchPlaceUsable();
      if (active.userNamespace) {
        try {
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
          hostUid = acquireUidRange(uidRegistry, dir).base;
        } catch (error) {
          void cgroup?.remove();
          throw new SandboxRuntimeError(
            "start-failed",
            `sandbox ${sandboxId} cannot start: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
      const sharedAgent = publishSharedAgent(art.agentPath!);
      const built = buildArgsOrCleanUp(cgroup, () => {
        fs.rmSync(bootDir, { recursive: true, force: true });
        // What the launcher copies onto the stage, laid out as it is to be there, so that one
        // `cp -a` does it: every process the launcher runs is a fork and exec on a start's path.
        const staged = path.join(bootDir, "stage");
        fs.mkdirSync(path.join(staged, "etc"), { recursive: true, mode: 0o755 });
        for (const [name, text] of Object.entries(privateEtcFiles("sandbox"))) {
          fs.writeFileSync(path.join(staged, "etc", name), text, { mode: 0o644 });
        }
        if (etcShared) prepareEtcTree(path.join(staged, "etc"));
        // The shared binary is bound from where it was published; only without one a copy.
        if (!sharedAgent) linkOrCopy(art.agentPath!, path.join(staged, "agent"));
        fs.mkdirSync(stageDir, { recursive: true, mode: 0o755 });
        return buildBwrapArgs({
          root: placed ? path.join(LAUNCH_PLACE, "root") : root,
          stageDir: placed ? path.join(LAUNCH_PLACE, "stage") : stageDir,
          agentPath: art.agentPath!,
          sharedAgentPath: sharedAgent,
          agentConfig,
          hostname: "sandbox",
          layers: active,
          seccompFd: 4,
          dieWithParent: !keepRunning,
          etcPrepared: etcShared !== undefined,
        });
      });
      const argsFile = path.join(bootDir, "bwrap.args");
      fs.writeFileSync(argsFile, active.hideHostPaths ? built.options.map((a) => `${a}\0`).join("") : "", {
        mode: 0o600,
      });
      const bwrapArgs = active.hideHostPaths
        ? ["--args", "3", "--", ...built.command]
        : [...built.options, "--", ...built.command];
      const enter = active.userNamespace ? [art.enterPath!, String(hostUid), "65536", root, "--"] : [];
      // The launcher: joins the cgroups, then in a mount namespace of its own (nothing stays
      // mounted on the host when the sandbox ends) mounts the storage image and a small tmpfs
      // (the stage) with the agent's files, the private /etc and the socket directory, and runs
      // bwrap, through sandbox-enter when the sandbox has a user namespace. Every step execs the
      // next, so the pid the spawner reports is bwrap's. sandbox-launch does it in one process;
      // without a C compiler a shell runs the same steps as programs.
      const filter = active.seccomp ? art.seccompFilterPath! : "/dev/null";
      const next = [...enter, bwrapPath!, ...bwrapArgs];
      if (art.launchPath) {
        command = art.launchPath;
        args = [
          ...(cgroup?.procsFiles ?? []).flatMap((file) => ["--cgroup", file]),
          ...(imagePath ? ["--image", imagePath] : []),
          ...(etcShared ?? []).flatMap((entry) => ["--etc", entry]),
          ...(placed ? ["--place", LAUNCH_PLACE] : []),
          ...["--socket-fd", String(AGENT_SOCKET_FD)],
          ...["--root", root, "--stage", stageDir, "--boot", bootDir, "--args", argsFile, "--filter", filter],
          "--",
          ...next,
        ];
      } else {
        const inner = [
          "stage=$1 boot=$2 image=$3 root=$4 args=$5 filter=$6",
          "shift 6",
          'if [ -n "$image" ]; then mount -o loop,nosuid,nodev "$image" "$root" || exit 92; rmdir "$root/lost+found" 2>/dev/null; fi',
          'mount -t tmpfs -o mode=0755,size=16m aiem-stage "$stage" || exit 96',
          'cp -a "$boot/stage/." "$stage/" || exit 96',
          'exec "$@" 3<"$args" 4<"$filter"',
        ].join("\n");
        const prelude = (cgroup?.procsFiles ?? []).map((file) => `echo $$ > ${shellQuote(file)} || exit 91`);
        command = "/bin/sh";
        args = [
          "-c",
          [...prelude, `exec unshare --mount --propagation private -- /bin/sh -c ${shellQuote(inner)} sh "$@"`].join(
            "\n",
          ),
          "sh",
          ...[stageDir, bootDir, imagePath ?? "", root, argsFile, filter],
          ...next,
        ];
      }
    } else {
      command = art.agentPath!;
      args = [];
      const prelude: string[] = [];
      for (const file of cgroup?.procsFiles ?? []) prelude.push(`echo $$ > ${shellQuote(file)} || exit 91`);
      if (prelude.length > 0) {
        args = ["-c", [...prelude, 'exec "$@"'].join("\n"), "sh", command, ...args];
        command = "/bin/sh";
      }
    }

    const child = spawner.spawn(command, args, {
      env: confined
        ? { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" }
        : { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", AIEM_AGENT_CONFIG: agentConfig },
      detached: !confined,
      cwd: confined ? "/" : root,
      logPath,
      survive: keepRunning && confined,
      socket: confined ? { path: socketPath, fd: AGENT_SOCKET_FD } : undefined,
    });
    startOptions.onLaunched?.();

    let resolveExit!: (exit: SandboxExit) => void;
    const exited = new Promise<SandboxExit>((r) => (resolveExit = r));
    let entry: Running | undefined;
    let startFinished = false;
    let init: SandboxRecord["init"];
    child.once("exit", (code: number | null, signal: NodeJS.Signals | null) => {
      // The launcher reports what it started as gone when it closes; a released sandbox runs on.
      if (entry?.released) return;
      const requested = entry?.stopRequested ?? !startFinished;
      const exit: SandboxExit = { code, signal, requested };
      if (keepRunning) killNamespaceInit(init);
      if (entry) {
        entry.connection.close();
        if (running.get(sandboxId) === entry) running.delete(sandboxId);
      }
      // This runtime saw the end and reports it: no later runtime is to adopt or report it.
      if (keepRunning) fs.rmSync(path.join(dir, "sandbox.json"), { force: true });
      removeCgroupLater(sandboxId, cgroup);
      resolveExit(exit);
      if (entry && !requested) options.onExit?.(sandboxId, exit);
    });

    const failStart = async (reason: string): Promise<never> => {
      startFinished = true;
      if (child.exitCode === null && child.signalCode === null) {
        killTree(child, confined);
        await exited;
      } else {
        await exited;
      }
      const details = tail(logPath);
      throw new SandboxRuntimeError(
        "start-failed",
        `sandbox ${sandboxId} did not start: ${reason}${details ? `\n${details}` : ""}`,
      );
    };

    // Ready: the agent prints "ready" once it listens; then it must answer Health.
    const startTimeoutMs = options.startTimeoutMs ?? 15_000;
    const readyOutcome = await new Promise<string | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(`no answer within ${startTimeoutMs} ms`), startTimeoutMs);
      child.once("ready", () => {
        clearTimeout(timer);
        resolve(undefined);
      });
      child.once("exit", (code: number | null, signal: NodeJS.Signals | null) => {
        clearTimeout(timer);
        const launcher: Record<number, string> = {
          90: "could not make the launcher's mount namespace",
          91: "could not join the sandbox's cgroup",
          92: "could not mount the sandbox's storage image",
          93: "sandbox-enter was called wrongly",
          94: "could not give the sandbox's files to its uid range",
          95: "could not set up the sandbox's user namespace",
          96: "could not prepare the sandbox's stage (agent files, /etc)",
        };
        resolve(launcher[code ?? -1] ?? `the agent exited (${signal ?? `code ${code}`})`);
      });
      child.once("error", (error: Error) => {
        clearTimeout(timer);
        resolve(error.message.startsWith("cannot") ? error.message : `cannot run ${command}: ${error.message}`);
      });
    });
    if (readyOutcome !== undefined) return failStart(readyOutcome);
    // The agent as a host process, found before it started anything: bwrap's only child (with a
    // PID namespace, the namespace's init), or the process spawned.
    const agentPid = confined ? onlyChild(child.pid!, 1) : child.pid;
    const agentStart = agentPid === undefined ? undefined : processStartTime(agentPid);
    if (agentPid === undefined || agentStart === undefined) return failStart("the agent's process cannot be found");
    const identity: AgentIdentity = {
      pid: agentPid,
      startTime: agentStart,
      uid: confined ? hostUid : (process.getuid?.() ?? 0),
    };
    const connection = connectAgent(socketPath, {
      maxMessageBytes: options.maxMessageBytes,
      sandboxPid: child.pid,
      agent: { identity, read: peer },
    });
    try {
      await connection.client.health({}, { timeoutMs: startTimeoutMs });
    } catch (error) {
      connection.close();
      return failStart(`the agent does not answer: ${error instanceof Error ? error.message : String(error)}`);
    }

    const handle: SandboxHandle = {
      sandboxId,
      client: connection.client,
      files: connection.files,
      isolation: confined ? "bwrap" : "unconfined",
      limits: applied,
      pid: child.pid!,
      layers: layers ?? {
        userNamespace: { active: false, note: "unconfined" },
        emptyBoundingSet: { active: false, note: "unconfined" },
        seccomp: { active: false, note: "unconfined" },
        privateEtc: { active: false, note: "unconfined" },
        hideHostPaths: { active: false, note: "unconfined" },
        dropCapabilities: { active: false, note: "unconfined" },
        pidNamespace: { active: false, note: "unconfined" },
      },
      hostUid,
      agentPid,
      startMs: performance.now() - begin,
      adopted: false,
      exited,
      openTunnel: (port, callOptions) => openTunnel(connection.client, port, callOptions),
      cgroupUsage: () => cgroup?.usage() ?? {},
      stop: () => stop(sandboxId),
    };
    entry = { handle, child, connection, cgroup, stopping: undefined, stopRequested: false, released: false };
    startFinished = true;
    if (child.exitCode !== null || child.signalCode !== null) {
      return failStart("the agent exited right after it started");
    }
    running.set(sandboxId, entry);
    if (keepRunning && confined) {
      init = namespaceInit(child.pid!);
      writeRecord(dir, {
        pid: child.pid!,
        startTime: processStartTime(child.pid!)!,
        limits,
        applied,
        layers: handle.layers,
        hostUid,
        init,
        agent: identity,
      });
    }
    return handle;
  }

  /** Re-adopts a sandbox a previous runtime left running; undefined when there is none. */
  async function adopt(sandboxId: string, dir: string): Promise<SandboxHandle | undefined> {
    const recordPath = path.join(dir, "sandbox.json");
    let record: SandboxRecord;
    try {
      record = JSON.parse(fs.readFileSync(recordPath, "utf8")) as SandboxRecord;
    } catch {
      return undefined;
    }
    if (processStartTime(record.pid) !== record.startTime) {
      killNamespaceInit(record.init);
      fs.rmSync(recordPath, { force: true });
      throw new SandboxRuntimeError(
        "agent-gone",
        `sandbox ${sandboxId}'s agent ended while no runtime held it; its processes are gone (a new start runs it afresh)`,
      );
    }
    const begin = performance.now();
    const socketPath = path.join(dir, "agent.sock");
    if (record.agent === undefined || !isSocket(socketPath)) {
      // Started by a version of the service that reached its agent through a path the sandbox
      // controlled: nothing tells that its agent is still the agent, so it is not adopted.
      killRecorded(dir);
      throw new SandboxRuntimeError(
        "agent-unverifiable",
        `sandbox ${sandboxId} was started by an earlier version of the service, whose connection to the sandbox's ` +
          "agent cannot be checked; it was stopped and its processes ended (a new start runs it afresh)",
      );
    }
    if (processStartTime(record.agent.pid) !== record.agent.startTime) {
      killRecorded(dir);
      throw new SandboxRuntimeError(
        "agent-gone",
        `sandbox ${sandboxId}'s agent ended while no runtime held it; its processes are gone (a new start runs it afresh)`,
      );
    }
    const connection = await connectTo(socketPath, record.pid, record.agent);
    try {
      await connection.client.health({}, { timeoutMs: options.startTimeoutMs ?? 15_000 });
    } catch (error) {
      connection.close();
      throw new SandboxRuntimeError(
        "start-failed",
        `sandbox ${sandboxId} is running but its agent does not answer: ${String(error)}`,
      );
    }
    await cleanups.get(sandboxId);
    const cgroup = support.cgroup
      ? createSandboxCgroup(support.cgroup, groupName, sandboxId, record.limits, maxProcesses)
      : undefined;
    const child = new AdoptedProcess(record.pid, record.startTime);
    let resolveExit!: (exit: SandboxExit) => void;
    const exited = new Promise<SandboxExit>((r) => (resolveExit = r));
    const handle: SandboxHandle = {
      sandboxId,
      client: connection.client,
      files: connection.files,
      isolation: "bwrap",
      limits: record.applied,
      pid: record.pid,
      layers: record.layers,
      hostUid: record.hostUid,
      agentPid: record.agent.pid,
      startMs: performance.now() - begin,
      adopted: true,
      exited,
      openTunnel: (port, callOptions) => openTunnel(connection.client, port, callOptions),
      cgroupUsage: () => cgroup?.usage() ?? {},
      stop: () => stop(sandboxId),
    };
    const entry: Running = {
      handle,
      child,
      connection,
      cgroup,
      stopping: undefined,
      stopRequested: false,
      released: false,
    };
    child.once("exit", (code: number | null, signal: NodeJS.Signals | null) => {
      const exit: SandboxExit = { code, signal, requested: entry.stopRequested };
      killNamespaceInit(record.init);
      connection.close();
      if (running.get(sandboxId) === entry) running.delete(sandboxId);
      fs.rmSync(recordPath, { force: true });
      removeCgroupLater(sandboxId, cgroup);
      resolveExit(exit);
      if (!exit.requested) options.onExit?.(sandboxId, exit);
    });
    running.set(sandboxId, entry);
    return handle;
  }

  /** Removes an ended sandbox's cgroup; a new start of it waits for that. */
  function removeCgroupLater(sandboxId: string, cgroup: SandboxCgroup | undefined): void {
    if (!cgroup) return;
    const removal = cgroup.remove();
    cleanups.set(sandboxId, removal);
    void removal.then(() => {
      if (cleanups.get(sandboxId) === removal) cleanups.delete(sandboxId);
    });
  }

  // The agent's logs live in the sandbox's own memory: many processes' worth of output must not
  // push the agent out of its memory limit.
  function totalOutputLimit(memoryBytes: number): number {
    if (options.totalOutputLimitBytes !== undefined) return options.totalOutputLimitBytes;
    const perProcess = options.outputLimitBytes ?? 16 << 20;
    const byMemory = memoryBytes > 0 ? Math.floor(memoryBytes / 4) : Number.POSITIVE_INFINITY;
    return Math.max(perProcess, Math.min(4 * perProcess, byMemory));
  }

  function killTree(child: SpawnedProcess, confined: boolean): void {
    try {
      // bwrap: the init of its PID namespace (its child) takes every process in the namespace
      // along when it dies; with --die-with-parent it dies with bwrap, without (sandboxes that
      // outlive the service) it is killed first. Unconfined: the agent's process group.
      if (confined) {
        if (child.pid !== undefined) {
          for (const inner of childrenOf(child.pid)) {
            try {
              process.kill(inner, "SIGKILL");
            } catch {
              // already gone
            }
          }
        }
        child.kill("SIGKILL");
      } else process.kill(-child.pid!, "SIGKILL");
    } catch {
      // already gone
    }
  }

  async function stopEntry(entry: Running): Promise<void> {
    entry.stopRequested = true;
    const { child } = entry;
    if (child.exitCode === null && child.signalCode === null) {
      if (entry.handle.isolation === "unconfined") {
        // Let the agent kill its processes' groups, which live outside its own.
        child.kill("SIGTERM");
        const timer = setTimeout(() => killTree(child, false), 2_000);
        await entry.handle.exited;
        clearTimeout(timer);
      } else {
        killTree(child, true);
        // The launcher's channel never keeps the process alive, so a program whose last step is
        // a stop would exit before the exit report arrives: hold the event loop until it does.
        const hold = setInterval(() => undefined, 60_000);
        await entry.handle.exited.finally(() => clearInterval(hold));
      }
    } else {
      await entry.handle.exited;
    }
    entry.connection.close();
    await entry.cgroup?.remove();
  }

  async function stop(sandboxId: string): Promise<void> {
    const dir = sandboxDir(sandboxId);
    const pending = starting.get(sandboxId);
    if (pending) await pending.catch(() => undefined);
    if (keepRunning && isolation === "bwrap" && !running.has(sandboxId)) {
      // Left running by an earlier runtime: take it over to end it. One whose agent is gone
      // needs nothing more than its record removed; one whose agent does not answer is ended
      // from its record.
      await adopt(sandboxId, dir).catch(() => killRecorded(dir));
    }
    const entry = running.get(sandboxId);
    if (!entry) return;
    entry.stopping ??= stopEntry(entry);
    await entry.stopping;
    if (running.get(sandboxId) === entry) running.delete(sandboxId);
  }

  function start(sandboxId: string, startOptions: SandboxStartOptions = {}): Promise<SandboxHandle> {
    try {
      sandboxDir(sandboxId);
    } catch (error) {
      return Promise.reject(error);
    }
    const existing = running.get(sandboxId);
    if (existing && !existing.stopping) return Promise.resolve(existing.handle);
    const pending = starting.get(sandboxId);
    if (pending) return pending;
    const promise = (async () => {
      if (existing?.stopping) await existing.stopping;
      return launch(sandboxId, startOptions);
    })();
    starting.set(sandboxId, promise);
    const clear = () => {
      if (starting.get(sandboxId) === promise) starting.delete(sandboxId);
      // Once this start is over, not during it: formatting takes CPU the start needs.
      images.replenish();
    };
    promise.then(clear, clear);
    return promise;
  }

  async function destroy(sandboxId: string): Promise<void> {
    const dir = sandboxDir(sandboxId);
    await stop(sandboxId);
    releaseUidRange(options.uidRangeRegistry ?? "/run/aiem/uid-ranges", dir);
    // The sandbox is stopped, so nothing can swap entries under this removal; rm never follows
    // symbolic links, so links the sandbox left pointing at host paths are removed, not followed.
    await fs.promises.rm(dir, { recursive: true, force: true });
  }

  return {
    dataDir,
    get capabilities(): RuntimeCapabilities {
      return {
        ...capabilities,
        exactSignals: artifacts ? true : ("unknown-until-prepared" as const),
        layers: artifacts && isolation === "bwrap" ? layerStates(artifacts) : ("unknown-until-prepared" as const),
      };
    },
    prepare,
    startBlocker,
    checkCapacity,
    start,
    get: (sandboxId) => running.get(sandboxId)?.handle,
    isRunning: (sandboxId) => running.has(sandboxId),
    stop,
    destroy,
    async close(closeOptions = {}) {
      await Promise.all([...starting.values()].map((p) => p.catch(() => undefined)));
      await images.settle();
      if (keepRunning && closeOptions.stopSandboxes !== true) {
        // Unconfined sandboxes are never kept (their processes would outlive the agent's end
        // in groups of their own): stopped as without the option.
        await Promise.all([...running].filter(([, e]) => e.handle.isolation !== "bwrap").map(([id]) => stop(id)));
        // Left running for the next runtime to adopt: only this runtime's hold on them ends.
        for (const entry of running.values()) {
          entry.released = true;
          entry.connection.close();
          if (entry.child instanceof AdoptedProcess) entry.child.release();
        }
        running.clear();
        spawner.close();
        return;
      }
      await Promise.all([...running.keys()].map((id) => stop(id)));
      await Promise.all(cleanups.values());
      spawner.close();
      if (support.cgroup) removeRuntimeCgroupGroup(support.cgroup, groupName);
      processGroup = undefined;
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
