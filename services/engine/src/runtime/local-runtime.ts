// The `local` runtime: each engine is a process on this machine with its own directory,
// `<root>/<uid>/`, holding `data/` (kept across pause and resume), `logs/engine.log`, `spec.json`
// (what it runs), `pid` and `port` (while it runs) and `exit.json` (why it stopped, when it stopped
// on its own). Processes start detached in their own process group, so they outlive the engine
// service; a restarted service adopts them again by pid (checked against the process's command
// line, so a recycled pid is not mistaken for the engine) and a health probe. H2O engines run a
// real H2O-3 cluster (h2o-cluster.mjs: one JVM per node) unless the stand-in is chosen for them;
// DAI engines run the stand-in server; notebook engines run Jupyter Notebook when it is installed.
import { existsSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import type { Logger } from "@aiem/kit/logger";
import { isEngineProcess, killOrphans, readText } from "./host-process.js";
import { createLauncher } from "./launcher-client.js";
import { diskUsage, logFrom, logTail, recordStorageSize } from "./local-engine-files.js";
import { alivePid, createLocalEngineState, engineDir, readPort, type LocalEngineState } from "./local-engine-state.js";
import { recordExit } from "./local-exit.js";
import { inspectEngine } from "./local-inspect.js";
import { startEngine } from "./local-launch.js";
import type { LocalRuntimeOptions } from "./local-runtime-options.js";
import { signalGroup, stopEngine } from "./local-stop.js";
import type { EngineEndpoint, EngineRuntime } from "./runtime.js";

export { H2O_CLUSTER, LAUNCHER, STAND_IN_SERVER } from "./engine-programs.js";
export { findOnPath } from "./host-process.js";
export type { H2OServer, LocalRuntimeOptions } from "./local-runtime-options.js";

export interface LocalRuntime extends EngineRuntime {
  /** The engine's directory (tests look inside). */
  engineDir(uid: string): string;
  /** The pid of the engine's process while it runs. */
  pid(uid: string): Promise<number | undefined>;
}

export function createLocalRuntime(options: LocalRuntimeOptions): LocalRuntime {
  const state = createLocalEngineState(options);
  const launcher = createLauncher(
    options.logger,
    (pid, code, signal) => {
      const uid = state.byPid.get(pid);
      state.byPid.delete(pid);
      if (uid !== undefined) void recordExit(state, uid, pid, code, signal);
    },
    () => forgetChildren(state),
  );
  const dirOf = (uid: string) => engineDir(state, uid);
  return {
    placement: `local:${hostname()}:${options.root}`,
    engineDir: dirOf,
    pid: (uid) => alivePid(state, uid),
    start: (spec) => startEngine(state, launcher, spec),
    inspect: (uid) => inspectEngine(state, uid),
    stop: (uid) => stopEngine(state, uid),
    async remove(uid) {
      await stopEngine(state, uid);
      await rm(dirOf(uid), { recursive: true, force: true });
    },
    resizeStorage: (uid, bytes) => recordStorageSize(dirOf(uid), bytes),
    diskUsage: (uid, storageBytes) => diskUsage(dirOf(uid), storageBytes),
    logs: (uid, maxBytes) => logTail(dirOf(uid), maxBytes),
    logsFrom: (uid, offset, maxBytes) => logFrom(dirOf(uid), offset, maxBytes),
    async endpoint(uid): Promise<EngineEndpoint | undefined> {
      const port = await readPort(state, uid);
      return port === undefined ? undefined : { host: "127.0.0.1", port };
    },
    watch(listener) {
      state.listeners.add(listener);
      return () => state.listeners.delete(listener);
    },
    async close() {
      state.closed = true;
      state.listeners.clear();
      launcher.close();
    },
  };
}

/**
 * Without its launcher nobody reports how this instance's processes end; they are watched like
 * adopted ones from now on.
 */
function forgetChildren(state: LocalEngineState): void {
  for (const [uid, entry] of state.children) {
    state.children.delete(uid);
    state.byPid.delete(entry.pid);
    entry.done();
  }
}

/**
 * Kills every engine process under `root` (SIGKILL to each process group), for tests and
 * benchmarks that must not leave engines behind.
 */
export async function killEngineProcesses(root: string): Promise<number> {
  let killed = 0;
  let uids: string[] = [];
  try {
    uids = await readdir(root);
  } catch {
    return 0;
  }
  for (const uid of uids) {
    const dir = path.join(root, uid);
    // An H2O cluster's nodes outlive its process when that was killed alone.
    if (existsSync(path.join(dir, "nodes.json"))) killed += await killOrphans(dir);
    const text = await readText(path.join(dir, "pid"));
    const pid = text === undefined ? NaN : Number(text.trim());
    if (!Number.isInteger(pid) || pid <= 0 || !(await isEngineProcess(pid, dir))) continue;
    if (signalGroup(pid, "SIGKILL")) killed++;
  }
  return killed;
}

/** The uids of the engines under `root` whose process runs (checked against its command line). */
export async function runningEngines(root: string): Promise<string[]> {
  let uids: string[];
  try {
    uids = await readdir(root);
  } catch {
    return [];
  }
  const running: string[] = [];
  for (const uid of uids) {
    const dir = path.join(root, uid);
    const text = await readText(path.join(dir, "pid"));
    const pid = text === undefined ? NaN : Number(text.trim());
    if (Number.isInteger(pid) && pid > 0 && (await isEngineProcess(pid, dir))) running.push(uid);
  }
  return running;
}

/**
 * Stops every engine process under `root` as the engine service would (SIGTERM to its group,
 * SIGKILL after `stopTimeoutMs`), keeping each engine's data; returns the uids it stopped. For
 * `npm run stop`, while no engine service holds the directory.
 */
export async function stopEngines(root: string, logger: Logger, stopTimeoutMs = 10_000): Promise<string[]> {
  const uids = await runningEngines(root);
  const runtime = createLocalRuntime({ root, h2o: { kind: "stand-in" }, startTimeoutMs: 0, stopTimeoutMs, logger });
  try {
    await Promise.all(uids.map((uid) => runtime.stop(uid)));
  } finally {
    await runtime.close();
  }
  return uids;
}
