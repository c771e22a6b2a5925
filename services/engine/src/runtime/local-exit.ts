// Recording how a local engine's process ended, when it ended on its own.
import { describeExit, killOrphans, readText } from "./host-process.js";
import {
  engineDir,
  engineFile,
  notify,
  serverOf,
  writeExitRecord,
  type LocalEngineState,
} from "./local-engine-state.js";

/** The launcher reported that `pid`, the process of engine `uid`, ended. */
export async function recordExit(
  state: LocalEngineState,
  uid: string,
  pid: number,
  code: number | null,
  signal: NodeJS.Signals | null,
): Promise<void> {
  const entry = state.children.get(uid);
  const own = entry?.pid === pid ? entry : undefined;
  if (own) own.ended = true;
  state.ready.delete(uid);
  state.ports.delete(uid);
  try {
    // A closed instance no longer speaks for its engines; the next one finds them ended.
    if (own?.stopping || state.closed) return;
    await writeExit(state, uid, code, signal);
  } finally {
    if (own) {
      state.children.delete(uid);
      own.done();
    }
  }
  notify(state, uid);
}

async function writeExit(
  state: LocalEngineState,
  uid: string,
  code: number | null,
  signal: NodeJS.Signals | null,
): Promise<void> {
  const described = describeExit(code, signal);
  // The H2O cluster says which node ended and how; that is the reason, not its own exit code.
  const failure = (await readText(engineFile(state, uid, "failure")))?.trim();
  state.options.logger.warn("engine process ended", { uid, code, signal, failure });
  try {
    await writeExitRecord(engineDir(state, uid), described.cause, failure || described.message);
  } catch {
    // The directory is gone (removed): nothing to record.
  }
  // The cluster's process ends its nodes before it exits; killed outright, it cannot, and
  // nodes without it are a cluster nobody watches. After the record, so that the reason is
  // there for whoever looks while they go.
  if ((await serverOf(state, uid).catch(() => undefined))?.server === "h2o-3") await killOrphans(engineDir(state, uid));
}
