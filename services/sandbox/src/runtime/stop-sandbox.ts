// Ending a sandbox the runtime holds: its whole process tree, then its connection and cgroup.
import { childrenOf } from "./adopted-sandboxes.js";
import type { Running } from "./runtime-state.js";
import type { SpawnedProcess } from "./spawner.js";

export function killTree(child: SpawnedProcess, confined: boolean): void {
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

export async function stopEntry(entry: Running): Promise<void> {
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
