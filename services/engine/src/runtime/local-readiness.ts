// Watching a starting local engine until it answers its health probe.
import { watch, type FSWatcher } from "node:fs";
import { alivePid, engineDir, notify, probe, serverOf, type LocalEngineState } from "./local-engine-state.js";

/** Polls a starting engine until it answers, ends or the start timeout passes, then notifies. */
export function watchReady(state: LocalEngineState, uid: string): void {
  if (state.probing.has(uid) || state.closed) return;
  state.probing.add(uid);
  void (async () => {
    try {
      await probeUntilReady(state, uid);
    } finally {
      state.probing.delete(uid);
    }
    if (!state.closed) notify(state, uid);
  })();
}

async function probeUntilReady(state: LocalEngineState, uid: string): Promise<void> {
  const deadline = Date.now() + state.options.startTimeoutMs;
  // The stand-in writes its port file once it listens: watching the directory catches that
  // at once, without polling hundreds of starting engines. Jupyter's port is known up front,
  // so it is polled, backing off.
  let kick: (() => void) | undefined;
  let watcher: FSWatcher | undefined;
  try {
    const { server } = await serverOf(state, uid);
    if (server !== "jupyter") watcher = watchPortFile(engineDir(state, uid), () => kick?.());
    let delay = watcher ? 500 : 25;
    while (!state.closed && Date.now() < deadline) {
      if ((await alivePid(state, uid)) === undefined) break;
      if (await probe(state, uid, 1000)) {
        state.ready.add(uid);
        break;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        kick = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      kick = undefined;
      if (!watcher) delay = Math.min(delay * 2, 250);
    }
  } finally {
    watcher?.close();
  }
}

/** Calls `onPort` when the engine writes its port file; undefined where the directory cannot be watched. */
function watchPortFile(dir: string, onPort: () => void): FSWatcher | undefined {
  try {
    const watcher = watch(dir, (_event, name) => {
      if (name === "port") onPort();
    });
    // A watcher that fails only loses the shortcut: the probe loop still runs on its timer.
    watcher.on("error", () => {});
    return watcher;
  } catch {
    return undefined;
  }
}
