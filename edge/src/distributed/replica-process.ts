// One replica's process: started from `start-service.ts <part>` (or a build of it) and counted
// as up when it logs "ready"; an end it comes to on its own is recorded as a crash.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Replica } from "./cluster.js";

const ENTRY = new URL("../start-service.ts", import.meta.url).pathname;

/** Starts `replica` with `env` over this process's; resolves once it is ready. */
export function startReplica(replica: Replica, env: Record<string, string>, compiled?: string): Promise<void> {
  const args = compiled
    ? [join(compiled, "edge/src/start-service.js"), replica.part]
    : ["--import", "tsx", ENTRY, replica.part];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  replica.child = child;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${replica.name} did not start:\n${replica.log.join("\n")}`)),
      90_000,
    );
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${replica.name} exited with ${code}:\n${replica.log.join("\n")}`));
    };
    child.once("exit", onExit);
    createInterface({ input: child.stderr! }).on("line", (line) => {
      replica.log.push(line);
      if (replica.log.length > 200) replica.log.shift();
      if (!isReadyLine(line)) return;
      clearTimeout(timer);
      child.off("exit", onExit);
      child.once("exit", (code, signal) => {
        if (replica.child === child)
          replica.crashes.push(
            `${replica.name} ended by itself (${signal ?? code}):\n${replica.log.slice(-15).join("\n")}`,
          );
      });
      resolve();
    });
  });
}

function isReadyLine(line: string): boolean {
  if (!line.includes('"ready"')) return false;
  try {
    return (JSON.parse(line) as { msg?: string }).msg === "ready";
  } catch {
    return false;
  }
}

/** Sends `signal` and waits for the process to end; nothing when it is not running. */
export async function stopReplica(replica: Replica, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  const child = replica.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  replica.child = undefined;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}
