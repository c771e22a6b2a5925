// A sandbox's launch, in steps that each undo the earlier ones when they fail: capacity, the
// sandbox's directories, its limits (storage image, cgroup), the launcher's command (uid range,
// bubblewrap's arguments), the spawn, the agent's readiness and connection, the record kept for
// the next runtime.
import * as fs from "node:fs";
import * as path from "node:path";
import { type AgentConnection, openTunnel } from "./agent-client.js";
import { agentConfig } from "./agent-config.js";
import { connectTo, peerReader } from "./agent-connect.js";
import type { AgentIdentity } from "./agent-peer.js";
import { agentReady, onlyChild } from "./agent-readiness.js";
import { AGENT_SOCKET_FD, type IsolationLayers } from "./bwrap.js";
import { adopt } from "./adopt-sandbox.js";
import {
  type SandboxRecord,
  killNamespaceInit,
  namespaceInit,
  processStartTime,
  writeRecord,
} from "./adopted-sandboxes.js";
import { type LaunchCommand, type LaunchPaths, confinedCommand, unconfinedCommand } from "./launch-command.js";
import { type LaunchLimits, applyLimits } from "./launch-limits.js";
import { tail } from "./run-to-end.js";
import { type Running, type RuntimeState, prepareArtifacts, removeCgroupLater, sandboxDir } from "./runtime-state.js";
import {
  type LayerState,
  type SandboxExit,
  type SandboxHandle,
  type SandboxStartOptions,
  SandboxRuntimeError,
} from "./runtime-types.js";
import { checkCapacity } from "./sandbox-capacity.js";
import type { SpawnedProcess } from "./spawner.js";
import { startStep, startStepCpu } from "./start-steps.js";
import { killTree } from "./stop-sandbox.js";

const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

const UNCONFINED_LAYERS: Record<keyof IsolationLayers, LayerState> = {
  userNamespace: { active: false, note: "unconfined" },
  emptyBoundingSet: { active: false, note: "unconfined" },
  seccomp: { active: false, note: "unconfined" },
  privateEtc: { active: false, note: "unconfined" },
  hideHostPaths: { active: false, note: "unconfined" },
  dropCapabilities: { active: false, note: "unconfined" },
  pidNamespace: { active: false, note: "unconfined" },
};

interface LaunchDirs extends LaunchPaths {
  readonly socketPath: string;
  readonly logPath: string;
}

/** The sandbox's directories, with no socket left from an earlier run. */
function prepareDirs(dir: string, confined: boolean): LaunchDirs {
  const root = path.join(dir, "root");
  const runDir = path.join(dir, "run");
  fs.mkdirSync(root, { recursive: true, mode: 0o755 });
  fs.rmSync(runDir, { recursive: true, force: true });
  if (!confined) fs.mkdirSync(runDir, { mode: 0o700 });
  const socketPath = confined ? path.join(dir, "agent.sock") : path.join(runDir, "agent.sock");
  fs.rmSync(socketPath, { force: true });
  const logPath = path.join(dir, "agent.log");
  return { dir, root, stageDir: path.join(dir, "stage"), bootDir: path.join(dir, "boot"), socketPath, logPath };
}

/** A launched sandbox while it starts and once it runs: what its exit handler needs to know. */
interface Launched {
  readonly id: string;
  readonly child: SpawnedProcess;
  readonly exited: Promise<SandboxExit>;
  entry: Running | undefined;
  startFinished: boolean;
  init: SandboxRecord["init"];
}

/** Reports the sandbox's end once, and undoes what the runtime holds of it. */
function watchExit(state: RuntimeState, sandboxId: string, dir: string, child: SpawnedProcess, limits: LaunchLimits) {
  let resolveExit!: (exit: SandboxExit) => void;
  const exited = new Promise<SandboxExit>((r) => (resolveExit = r));
  const launched: Launched = { id: sandboxId, child, exited, entry: undefined, startFinished: false, init: undefined };
  child.once("exit", (code: number | null, signal: NodeJS.Signals | null) => {
    const { entry } = launched;
    // The launcher reports what it started as gone when it closes; a released sandbox runs on.
    if (entry?.released) return;
    const requested = entry?.stopRequested ?? !launched.startFinished;
    const exit: SandboxExit = { code, signal, requested };
    if (state.keepRunning) killNamespaceInit(launched.init);
    if (entry) {
      entry.connection.close();
      if (state.running.get(sandboxId) === entry) state.running.delete(sandboxId);
    }
    // This runtime saw the end and reports it: no later runtime is to adopt or report it.
    if (state.keepRunning) fs.rmSync(path.join(dir, "sandbox.json"), { force: true });
    removeCgroupLater(state, sandboxId, limits.cgroup);
    resolveExit(exit);
    if (entry && !requested) state.options.onExit?.(sandboxId, exit);
  });
  return launched;
}

/** Ends a start that failed, and throws why with the tail of the agent's log. */
async function failStart(
  launched: Launched,
  sandboxId: string,
  confined: boolean,
  logPath: string,
  reason: string,
): Promise<never> {
  launched.startFinished = true;
  const { child } = launched;
  if (child.exitCode === null && child.signalCode === null) killTree(child, confined);
  await launched.exited;
  const details = tail(logPath);
  throw new SandboxRuntimeError(
    "start-failed",
    `sandbox ${sandboxId} did not start: ${reason}${details ? `\n${details}` : ""}`,
  );
}

interface AgentReached {
  readonly connection: AgentConnection;
  readonly identity: AgentIdentity;
}

/** Waits for the agent's "ready", finds its host process, and connects once it answers Health. */
async function reachAgent(
  state: RuntimeState,
  launched: Launched,
  command: LaunchCommand,
  dirs: LaunchDirs,
  fail: (reason: string) => Promise<never>,
): Promise<AgentReached> {
  const { child } = launched;
  const confined = state.isolation === "bwrap";
  const startTimeoutMs = state.options.startTimeoutMs ?? 15_000;
  const readyOutcome = await agentReady(child, command.command, startTimeoutMs);
  startStep(launched.id, "ready");
  if (readyOutcome !== undefined) return fail(readyOutcome);
  // The agent as a host process, found before it started anything: bwrap's only child (with a
  // PID namespace, the namespace's init), or the process spawned.
  const agentPid = confined ? onlyChild(child.pid!, 1) : child.pid;
  const agentStart = agentPid === undefined ? undefined : processStartTime(agentPid);
  if (agentPid === undefined || agentStart === undefined) return fail("the agent's process cannot be found");
  const uid = confined ? command.hostUid : (process.getuid?.() ?? 0);
  const identity: AgentIdentity = { pid: agentPid, startTime: agentStart, uid };
  startStep(launched.id, "agent-found");
  startStepCpu(launched.id, "launcher and bwrap", [child.pid!]);
  startStepCpu(launched.id, "sandbox's init", [agentPid], true);
  startStepCpu(launched.id, "agent's threads", [agentPid]);
  const connection = await connectTo(state, dirs.socketPath, child.pid!, identity);
  startStep(launched.id, "connected");
  try {
    await connection.client.health({}, { timeoutMs: startTimeoutMs });
    startStep(launched.id, "health");
  } catch (error) {
    connection.close();
    return fail(`the agent does not answer: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { connection, identity };
}

/** Spawns the launcher (or the unconfined agent) with the sandbox's socket handed over. */
function spawnLauncher(state: RuntimeState, command: LaunchCommand, dirs: LaunchDirs, config: string): SpawnedProcess {
  const confined = state.isolation === "bwrap";
  return state.spawner.spawn(command.command, command.args, {
    env: confined ? { PATH } : { PATH, AIEM_AGENT_CONFIG: config },
    detached: !confined,
    cwd: confined ? "/" : dirs.root,
    logPath: dirs.logPath,
    survive: state.keepRunning && confined,
    socket: confined ? { path: dirs.socketPath, fd: AGENT_SOCKET_FD } : undefined,
  });
}

/** Starts a sandbox (or adopts the one a previous runtime left running) and connects to its agent. */
export async function launch(
  state: RuntimeState,
  sandboxId: string,
  startOptions: SandboxStartOptions,
): Promise<SandboxHandle> {
  const begin = performance.now();
  const { isolation, options } = state;
  if (isolation === "unavailable")
    throw new SandboxRuntimeError("isolation-unavailable", state.isolationUnavailableReason!);
  const dir = sandboxDir(state, sandboxId);
  if (state.keepRunning && isolation === "bwrap") {
    const adopted = await adopt(state, sandboxId, dir);
    if (adopted) return adopted;
  }
  startStep(sandboxId, "launch");
  const art = await prepareArtifacts(state);
  peerReader(art);
  startStep(sandboxId, "artifacts");
  const requested = startOptions.limits ?? {};
  checkCapacity(state, requested, sandboxId);
  if (!art.agentPath) {
    throw new SandboxRuntimeError("start-failed", `the sandbox agent is not available: ${art.agentUnavailableReason}`);
  }
  const confined = isolation === "bwrap";
  const dirs = prepareDirs(dir, confined);
  startStep(sandboxId, "dirs");
  const limits = await applyLimits(state, sandboxId, dir, requested);
  startStep(sandboxId, "limits");
  const memoryBytes = Number(requested.memoryBytes ?? 0);
  const config = agentConfig(options, art, { confined, ...dirs, memoryBytes, applied: limits.applied });
  const command = confined
    ? confinedCommand(state, art, sandboxId, dirs, limits, config)
    : unconfinedCommand(art, limits.cgroup);
  startStep(sandboxId, "command");
  const child = spawnLauncher(state, command, dirs, config);
  startStep(sandboxId, "spawn-sent");
  child.once("spawned", () => startStep(sandboxId, "spawned"));
  startOptions.onLaunched?.();
  const launched = watchExit(state, sandboxId, dir, child, limits);
  const fail = (reason: string) => failStart(launched, sandboxId, confined, dirs.logPath, reason);
  const { connection, identity } = await reachAgent(state, launched, command, dirs, fail);
  const handle: SandboxHandle = {
    sandboxId,
    client: connection.client,
    files: connection.files,
    isolation: confined ? "bwrap" : "unconfined",
    limits: limits.applied,
    pid: child.pid!,
    layers: command.layers ?? UNCONFINED_LAYERS,
    hostUid: command.hostUid,
    agentPid: identity.pid,
    startMs: performance.now() - begin,
    adopted: false,
    exited: launched.exited,
    openTunnel: (port, callOptions) => openTunnel(connection.client, port, callOptions),
    cgroupUsage: () => limits.cgroup?.usage() ?? {},
    stop: () => state.stop(sandboxId),
  };
  const entry: Running = {
    handle,
    child,
    connection,
    cgroup: limits.cgroup,
    stopping: undefined,
    stopRequested: false,
    released: false,
  };
  launched.entry = entry;
  launched.startFinished = true;
  if (child.exitCode !== null || child.signalCode !== null) return fail("the agent exited right after it started");
  state.running.set(sandboxId, entry);
  if (state.keepRunning && confined) {
    launched.init = namespaceInit(child.pid!);
    const { applied } = limits;
    writeRecord(dir, {
      pid: child.pid!,
      startTime: processStartTime(child.pid!)!,
      limits: requested,
      applied,
      layers: handle.layers,
      hostUid: command.hostUid,
      init: launched.init,
      agent: identity,
    });
  }
  return handle;
}
