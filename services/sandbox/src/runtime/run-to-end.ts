// Helper programs (mkfs.ext4) run to their end through the spawner, and the tail of a log.
import * as fs from "node:fs";
import type { Spawner } from "./spawner.js";

/** The last `bytes` of `file` as text, or "" when it cannot be read. */
export function tail(file: string, bytes = 2000): string {
  try {
    const data = fs.readFileSync(file);
    return data
      .subarray(Math.max(0, data.length - bytes))
      .toString("utf8")
      .trim();
  } catch {
    return "";
  }
}

/**
 * Runs a helper program through the spawner (never a fork of this process) to its end, or
 * kills it after `timeoutMs`. The timer also keeps this process alive meanwhile: the launcher
 * does not.
 */
export function runToEnd(
  spawner: Spawner,
  command: string,
  args: string[],
  logPath: string,
  timeoutMs = 60_000,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawner.spawn(command, args, {
      env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" },
      cwd: "/",
      detached: false,
      logPath,
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", (error: Error) => reject(error));
    child.once("exit", (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      const details = tail(logPath);
      fs.rmSync(logPath, { force: true });
      if (code === 0) resolve();
      else reject(new Error(`${command} failed (${signal ?? `exit code ${code}`})${details ? `: ${details}` : ""}`));
    });
  });
}
