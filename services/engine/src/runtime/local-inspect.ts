// What phase a local engine is in, read from its process and its directory.
import { existsSync } from "node:fs";
import path from "node:path";
import { readText, sleep } from "./host-process.js";
import { alivePid, engineDir, probe, readPid, type ExitRecord, type LocalEngineState } from "./local-engine-state.js";
import { watchReady } from "./local-readiness.js";
import type { EngineStatus } from "./runtime.js";

export async function inspectEngine(state: LocalEngineState, uid: string): Promise<EngineStatus> {
  const dir = engineDir(state, uid);
  if (!existsSync(dir)) return { phase: "absent", dataPresent: false };
  const dataPresent = existsSync(path.join(dir, "data"));
  const pid = await alivePid(state, uid);
  if (pid !== undefined) {
    if (state.ready.has(uid)) return { phase: "ready", dataPresent };
    if (!state.probing.has(uid) && (await probe(state, uid, 500))) {
      state.ready.add(uid);
      return { phase: "ready", dataPresent };
    }
    watchReady(state, uid);
    return { phase: "starting", dataPresent };
  }
  // Our own child that just died: its end is being recorded, wait for that rather than guess.
  const entry = state.children.get(uid);
  if (entry) await Promise.race([entry.exited, sleep(2_000)]);
  const exit = await readText(path.join(dir, "exit.json"));
  if (exit !== undefined) {
    try {
      const record = JSON.parse(exit) as ExitRecord;
      return { phase: "exited", exit: { cause: record.cause, message: record.message }, dataPresent };
    } catch {
      return { phase: "exited", exit: { cause: "unknown", message: "the engine process ended" }, dataPresent };
    }
  }
  if ((await readPid(state, uid)) !== undefined) {
    return {
      phase: "exited",
      exit: { cause: "unknown", message: "the engine process ended while the engine service was not watching it" },
      dataPresent,
    };
  }
  return { phase: "stopped", dataPresent };
}
