// The client side of the launcher process (launcher.mjs), from which engine processes start.
import { spawn, type ChildProcess } from "node:child_process";
import type { Logger } from "@aiem/kit/logger";
import { LAUNCHER } from "./engine-programs.js";

export interface SpawnRequest {
  readonly cmd: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  /** The engine's log file: stdout and stderr are appended to it. */
  readonly log: string;
  /** Where the pid is written, in the same tick as the start. */
  readonly pidFile: string;
}

export interface Launcher {
  /** Starts a detached process; resolves with its pid once its pid file is written. */
  spawn(request: SpawnRequest): Promise<number>;
  close(): void;
}

/**
 * The launcher process (launcher.mjs), started on first use and again after it ends. Processes
 * start from it rather than from the service because a fork copies the page tables of the process
 * that forks: 15-50 ms each from a service with an embedded database, about 1 ms from the
 * launcher, which matters when hundreds of engines start at once.
 */
export function createLauncher(
  logger: Logger,
  onExit: (pid: number, code: number | null, signal: NodeJS.Signals | null) => void,
  onGone: () => void,
): Launcher {
  let proc: ChildProcess | undefined;
  let seq = 0;
  const pending = new Map<number, { resolve: (pid: number) => void; reject: (err: Error) => void }>();
  const idle = () => {
    // Only an answer we wait for keeps the service's event loop alive.
    if (pending.size === 0) proc?.channel?.unref();
  };
  const ensure = (): ChildProcess => {
    if (proc?.connected) return proc;
    const p = spawn(process.execPath, [LAUNCHER], {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
      env: { PATH: process.env.PATH ?? "" },
    });
    proc = p;
    p.on(
      "message",
      (m: {
        op?: string;
        id?: number;
        pid?: number;
        error?: string;
        code?: number | null;
        signal?: NodeJS.Signals | null;
      }) => {
        if (m.op === "exit") return onExit(m.pid!, m.code ?? null, m.signal ?? null);
        const waiter = pending.get(m.id!);
        if (!waiter) return;
        pending.delete(m.id!);
        if (m.error !== undefined) waiter.reject(new Error(m.error));
        else waiter.resolve(m.pid!);
        idle();
      },
    );
    p.on("error", (err) => logger.warn("engine launcher failed", { error: err.message }));
    p.once("exit", () => {
      if (proc === p) proc = undefined;
      for (const waiter of pending.values()) waiter.reject(new Error("the launcher ended"));
      pending.clear();
      onGone();
    });
    p.unref();
    return p;
  };
  return {
    spawn(request) {
      const p = ensure();
      const id = ++seq;
      return new Promise<number>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        p.channel?.ref();
        p.send({ id, op: "spawn", ...request }, (err) => {
          if (!err) return;
          pending.delete(id);
          idle();
          reject(err);
        });
      });
    },
    close() {
      if (proc?.connected) proc.disconnect();
      proc = undefined;
    },
  };
}
