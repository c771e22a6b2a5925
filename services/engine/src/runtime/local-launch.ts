// Starting a local engine's process: its directory, its command, the launch and the watch for readiness.
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { killOrphans, writeAtomic } from "./host-process.js";
import type { Launcher } from "./launcher-client.js";
import { engineCommand, type EngineCommand } from "./local-engine-command.js";
import { alivePid, engineDir, notify, writeExitRecord, type LocalEngineState } from "./local-engine-state.js";
import { watchReady } from "./local-readiness.js";
import type { EngineRunSpec } from "./runtime.js";

export async function startEngine(state: LocalEngineState, launcher: Launcher, spec: EngineRunSpec): Promise<void> {
  const dir = engineDir(state, spec.uid);
  await mkdir(path.join(dir, "data"), { recursive: true });
  await mkdir(path.join(dir, "logs"), { recursive: true });
  if ((await alivePid(state, spec.uid)) !== undefined) {
    // Already running (adopted after a restart, or a repeated start): leave it.
    if (!state.ready.has(spec.uid)) watchReady(state, spec.uid);
    return;
  }
  state.ready.delete(spec.uid);
  state.ports.delete(spec.uid);
  await Promise.all(["exit.json", "port", "pid", "failure"].map((name) => rm(path.join(dir, name), { force: true })));
  let prepared: EngineCommand;
  try {
    prepared = await engineCommand(state.options, spec, dir);
  } catch (err) {
    // What the engine needs is not on this machine: the engine fails, saying what is missing.
    await writeExitRecord(dir, "error", (err as Error).message);
    notify(state, spec.uid);
    return;
  }
  // JVMs of an H2O cluster whose supervising process was killed outright live on: they would
  // hold the engine's ports and data, so they go before a new cluster starts.
  if (prepared.server === "h2o-3") await killOrphans(dir);
  await writeAtomic(
    path.join(dir, "spec.json"),
    JSON.stringify(
      {
        ...spec,
        memoryBytes: spec.memoryBytes.toString(),
        storageBytes: spec.storageBytes.toString(),
        server: prepared.server,
      },
      null,
      2,
    ),
  );
  await launch(state, launcher, spec.uid, dir, prepared);
}

async function launch(
  state: LocalEngineState,
  launcher: Launcher,
  uid: string,
  dir: string,
  { cmd, args, env, server }: EngineCommand,
): Promise<void> {
  // `launching` exists only between spawning the process and recording its pid. Finding it
  // means an earlier start was cut short (the service died): its process may still run.
  const launching = path.join(dir, "launching");
  if (existsSync(launching)) {
    const orphans = await killOrphans(dir);
    if (orphans > 0)
      state.options.logger.warn("killed engine processes left by an interrupted start", { uid, orphans });
  }
  writeFileSync(launching, "");
  let pid: number;
  try {
    pid = await launcher.spawn({
      cmd,
      args,
      cwd: path.join(dir, "data"),
      env,
      log: path.join(dir, "logs", "engine.log"),
      pidFile: path.join(dir, "pid"),
    });
  } catch (err) {
    rmSync(launching, { force: true });
    await writeExitRecord(dir, "error", `could not start ${path.basename(cmd)}: ${(err as Error).message}`);
    notify(state, uid);
    return;
  }
  rmSync(launching, { force: true });
  let done = () => {};
  const exited = new Promise<void>((resolve) => (done = resolve));
  state.children.set(uid, { pid, stopping: false, ended: false, exited, done });
  state.byPid.set(pid, uid);
  state.servers.delete(uid);
  state.options.logger.debug("engine process started", { uid, pid, server });
  watchReady(state, uid);
}
