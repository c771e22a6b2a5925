// Starts sandbox agents without forking the service itself: see spawner-process.mjs. A spawned
// process is seen through the same few things the runtime used of a ChildProcess (pid, exit
// status, kill, and events), and "ready" is reported once its standard output said so.
import { type ChildProcess, fork, spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

export interface SpawnOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** A process group of its own (unconfined agents, killed as a group). */
  readonly detached: boolean;
  /** Where the child's standard error goes. */
  readonly logPath: string;
  /**
   * Keep the child running when this process (or the launcher) dies: a session of its own, and
   * the launcher leaves it alone when its channel closes.
   */
  readonly survive?: boolean;
  /**
   * A unix socket to make, listening, at `path` (mode 0600, moved into place from a private
   * directory), and hand to the child as descriptor `fd`; only the child keeps it open.
   */
  readonly socket?: { readonly path: string; readonly fd: number } | undefined;
}

/**
 * A started process. Events: `ready` (it printed "ready" on standard output), `exit` (code,
 * signal), `error` (an Error: it could not be run).
 */
export interface SpawnedProcess extends EventEmitter {
  readonly pid: number | undefined;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  kill(signal: NodeJS.Signals): void;
}

export interface Spawner {
  spawn(command: string, args: readonly string[], options: SpawnOptions): SpawnedProcess;
  close(): void;
}

class Spawned extends EventEmitter implements SpawnedProcess {
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  /** Signals asked for before the pid was known. */
  #pending: NodeJS.Signals[] = [];
  #done = false;

  kill(signal: NodeJS.Signals): void {
    if (this.exitCode !== null || this.signalCode !== null) return;
    if (this.pid === undefined) {
      this.#pending.push(signal);
      return;
    }
    try {
      process.kill(this.pid, signal);
    } catch {
      // already gone
    }
  }

  spawned(pid: number): void {
    this.pid = pid;
    for (const signal of this.#pending.splice(0)) this.kill(signal);
    this.emit("spawned");
  }

  exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#done) return;
    this.#done = true;
    this.exitCode = code;
    this.signalCode = signal;
    this.emit("exit", code, signal);
  }
}

/** What spawner-process.mjs does for a socket, in this process (see SpawnOptions.socket). */
function bindHostSocket(file: string): { fd: number; close(): void } {
  const dir = fs.mkdtempSync(path.join(path.dirname(file), ".socket-"));
  const temp = path.join(dir, "s");
  // sun_path holds 108 bytes, less than a deep data directory's paths: bind through a descriptor
  // of the directory, which the kernel resolves like a short path. It stays open until the server
  // closes, because closing unlinks the name the server bound.
  const dirFd = fs.openSync(dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  const server = net.createServer();
  // A failed bind is seen below at once; its event, a tick later, has nothing left to say.
  server.once("error", () => undefined);
  const release = () => {
    server.close();
    fs.closeSync(dirFd);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    server.listen({ path: `/proc/self/fd/${dirFd}/s`, backlog: 511 });
    const handle = (server as unknown as { _handle: { fd: number } | null })._handle;
    if (!handle) throw new Error(`cannot bind a unix socket in ${dir}`);
    fs.chmodSync(temp, 0o600);
    fs.renameSync(temp, file);
    return { fd: handle.fd, close: release };
  } catch (error) {
    release();
    throw error;
  }
}

const SCRIPT = fileURLToPath(new URL("./spawner-process.mjs", import.meta.url));

/** Spawns through a small launcher process, forked once (when the first sandbox starts). */
export function createLauncherSpawner(): Spawner {
  let launcher: { child: ChildProcess; live: Map<number, Spawned> } | undefined;
  let nextId = 0;

  function connect(): { child: ChildProcess; live: Map<number, Spawned> } {
    if (launcher?.child.connected) return launcher;
    const child = fork(SCRIPT, [], {
      execArgv: [],
      stdio: ["ignore", "ignore", "inherit", "ipc"],
      serialization: "json",
    });
    // Each launcher answers for what it started: a launcher closed a moment ago may exit after
    // its successor has started new processes, which must not be reported gone with it.
    const live = new Map<number, Spawned>();
    child.on(
      "message",
      (m: {
        type: string;
        id: number;
        pid?: number;
        code?: number | null;
        signal?: NodeJS.Signals | null;
        message?: string;
      }) => {
        const target = live.get(m.id);
        if (!target) return;
        switch (m.type) {
          case "spawned":
            target.spawned(m.pid!);
            break;
          case "ready":
            target.emit("ready");
            break;
          case "exit":
            live.delete(m.id);
            target.exited(m.code ?? null, m.signal ?? null);
            break;
          case "error":
            live.delete(m.id);
            target.emit("error", new Error(m.message ?? "cannot start"));
            target.exited(null, null);
            break;
        }
      },
    );
    child.once("exit", () => {
      if (launcher?.child === child) launcher = undefined;
      // Its children die with it (--die-with-parent, or killed as it went); report them gone.
      for (const [id, target] of live) {
        live.delete(id);
        target.exited(null, "SIGKILL");
      }
    });
    // The launcher must not keep the service alive on its own.
    child.unref();
    (child as unknown as { channel?: { unref(): void } }).channel?.unref();
    launcher = { child, live };
    return launcher;
  }

  return {
    spawn(command, args, options) {
      const target = new Spawned();
      const id = ++nextId;
      const { child, live } = connect();
      live.set(id, target);
      child.send({
        type: "spawn",
        id,
        command,
        args,
        env: options.env,
        cwd: options.cwd,
        detached: options.detached || options.survive === true,
        survive: options.survive === true,
        logPath: options.logPath,
        socket: options.socket,
      });
      return target;
    },
    close() {
      const child = launcher?.child;
      launcher = undefined;
      if (child?.connected) child.disconnect();
    },
  };
}

/** Spawns in this process (what the launcher does, for where it cannot run). */
export function createDirectSpawner(): Spawner {
  return {
    spawn(command, args, options) {
      const target = new Spawned();
      let log: number;
      try {
        log = fs.openSync(options.logPath, "w", 0o600);
      } catch (error) {
        queueMicrotask(() => {
          target.emit("error", error);
          target.exited(null, null);
        });
        return target;
      }
      let socket: { fd: number; close(): void } | undefined;
      const stdio: ("ignore" | "pipe" | number)[] = ["ignore", "pipe", log];
      try {
        if (options.socket) {
          socket = bindHostSocket(options.socket.path);
          while (stdio.length < options.socket.fd) stdio.push("ignore");
          stdio[options.socket.fd] = socket.fd;
        }
      } catch (error) {
        fs.closeSync(log);
        queueMicrotask(() => {
          target.emit("error", error);
          target.exited(null, null);
        });
        return target;
      }
      let child: ChildProcess;
      try {
        child = spawn(command, [...args], {
          stdio,
          env: options.env,
          detached: options.detached || options.survive === true,
          cwd: options.cwd,
        });
      } finally {
        fs.closeSync(log);
        socket?.close();
      }
      child.once("spawn", () => target.spawned(child.pid!));
      let seen = "";
      let ready = false;
      child.stdout!.on("data", (data: Buffer) => {
        if (ready) return;
        seen += data.toString("utf8");
        if (seen.includes("ready\n")) {
          ready = true;
          target.emit("ready");
        }
      });
      child.once("error", (error) => {
        target.emit("error", error);
        // A program that could not be run never reports an exit.
        if (child.pid === undefined) queueMicrotask(() => target.exited(null, null));
      });
      child.once("exit", (code, signal) => target.exited(code, signal));
      return target;
    },
    close() {},
  };
}
