// Stopping a local engine's process group: SIGTERM, then SIGKILL once the stop timeout passes.
import { rm } from "node:fs/promises";
import path from "node:path";
import { isEngineProcess, killOrphans, sleep } from "./host-process.js";
import { alivePid, engineDir, type LocalChild, serverOf, type LocalEngineState } from "./local-engine-state.js";

export async function stopEngine(state: LocalEngineState, uid: string): Promise<void> {
  const dir = engineDir(state, uid);
  const entry = state.children.get(uid);
  if (entry) entry.stopping = true;
  const pid = await alivePid(state, uid);
  if (pid !== undefined) await endProcessGroup(pid, dir, state.options.stopTimeoutMs);
  if (entry) await forgetEnded(state, uid, entry);
  if ((await serverOf(state, uid).catch(() => undefined))?.server === "h2o-3") await killOrphans(dir);
  state.ready.delete(uid);
  state.ports.delete(uid);
  await Promise.all(["pid", "port", "exit.json", "failure"].map((name) => rm(path.join(dir, name), { force: true })));
}

/**
 * The launcher reports a child's end a moment after it is gone; until then the child counts as
 * running, and a start right after this stop (a resume) would take it for the engine's process
 * and launch nothing. So the report is awaited, and a late one is no longer this engine's.
 */
async function forgetEnded(state: LocalEngineState, uid: string, entry: LocalChild): Promise<void> {
  if (!entry.ended) await Promise.race([entry.exited, sleep(5_000)]);
  if (state.children.get(uid) !== entry) return;
  entry.ended = true;
  state.children.delete(uid);
  state.byPid.delete(entry.pid);
  entry.done();
}

async function endProcessGroup(pid: number, dir: string, stopTimeoutMs: number): Promise<void> {
  signalGroup(pid, "SIGTERM");
  const deadline = Date.now() + stopTimeoutMs;
  while (Date.now() < deadline && (await isEngineProcess(pid, dir))) await sleep(20);
  if (await isEngineProcess(pid, dir)) {
    signalGroup(pid, "SIGKILL");
    const hard = Date.now() + 5_000;
    while (Date.now() < hard && (await isEngineProcess(pid, dir))) await sleep(20);
  }
}

/** Signals the process's group, or the process alone when it leads none; a process already gone is fine. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    try {
      process.kill(pid, signal);
      return true;
    } catch {
      return false;
    }
  }
}
