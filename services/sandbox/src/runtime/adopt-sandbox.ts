// Taking over a sandbox a previous runtime left running (keepRunning): its record names the
// processes, and the agent answering on its socket is checked to be the one recorded.
import * as fs from "node:fs";
import * as path from "node:path";
import { openTunnel } from "./agent-client.js";
import { connectTo } from "./agent-connect.js";
import {
  AdoptedProcess,
  type SandboxRecord,
  killNamespaceInit,
  killRecorded,
  processStartTime,
} from "./adopted-sandboxes.js";
import { createSandboxCgroup } from "./limits.js";
import { type SandboxExit, type SandboxHandle, SandboxRuntimeError } from "./runtime-types.js";
import { type Running, type RuntimeState, removeCgroupLater } from "./runtime-state.js";

function isSocket(file: string): boolean {
  try {
    return fs.lstatSync(file).isSocket();
  } catch {
    return false;
  }
}

function agentGone(sandboxId: string): SandboxRuntimeError {
  return new SandboxRuntimeError(
    "agent-gone",
    `sandbox ${sandboxId}'s agent ended while no runtime held it; its processes are gone (a new start runs it afresh)`,
  );
}

type LiveRecord = SandboxRecord & Required<Pick<SandboxRecord, "agent">>;

/** `record` when its agent still runs and can be checked; throws (ending what is left) when not. */
function liveRecord(sandboxId: string, dir: string, record: SandboxRecord): LiveRecord {
  const recordPath = path.join(dir, "sandbox.json");
  if (processStartTime(record.pid) !== record.startTime) {
    killNamespaceInit(record.init);
    fs.rmSync(recordPath, { force: true });
    throw agentGone(sandboxId);
  }
  if (record.agent === undefined || !isSocket(path.join(dir, "agent.sock"))) {
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
    throw agentGone(sandboxId);
  }
  return { ...record, agent: record.agent };
}

/** Re-adopts a sandbox a previous runtime left running; undefined when there is none. */
export async function adopt(state: RuntimeState, sandboxId: string, dir: string): Promise<SandboxHandle | undefined> {
  const recordPath = path.join(dir, "sandbox.json");
  let recorded: SandboxRecord;
  try {
    recorded = JSON.parse(fs.readFileSync(recordPath, "utf8")) as SandboxRecord;
  } catch {
    return undefined;
  }
  const record = liveRecord(sandboxId, dir, recorded);
  const begin = performance.now();
  const connection = await connectTo(state, path.join(dir, "agent.sock"), record.pid, record.agent);
  try {
    await connection.client.health({}, { timeoutMs: state.options.startTimeoutMs ?? 15_000 });
  } catch (error) {
    connection.close();
    throw new SandboxRuntimeError(
      "start-failed",
      `sandbox ${sandboxId} is running but its agent does not answer: ${String(error)}`,
    );
  }
  await state.cleanups.get(sandboxId);
  const cgroup = state.support.cgroup
    ? createSandboxCgroup(state.support.cgroup, state.groupName, sandboxId, record.limits, state.maxProcesses)
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
    stop: () => state.stop(sandboxId),
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
    if (state.running.get(sandboxId) === entry) state.running.delete(sandboxId);
    fs.rmSync(recordPath, { force: true });
    removeCgroupLater(state, sandboxId, cgroup);
    resolveExit(exit);
    if (!exit.requested) state.options.onExit?.(sandboxId, exit);
  });
  state.running.set(sandboxId, entry);
  return handle;
}
