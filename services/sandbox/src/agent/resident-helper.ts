// The spawn helper in its resident mode (spawn-helper.c, `--serve`): one helper per agent forks
// and execs every process, so a start costs a fork of a small C program, not a fork of the
// agent's Node plus an exec of the helper. The helper keeps the read ends of each process's
// output pipes until the agent has opened its own (as /proc/<helper>/fd/<n>: Node cannot receive
// descriptors over a socket), so no byte is lost and no pipe is ever without a reader.
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import type { Readable } from "node:stream";

export interface ResidentStart {
  /** The program's path, already resolved. */
  readonly file: string;
  readonly argv: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

export interface ResidentProcess {
  readonly pid: number;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** The raw wait status once the program ended; rejects when the helper went away first. */
  readonly exited: Promise<number>;
}

export interface ResidentHelper {
  /** Resolves once the exec succeeded; rejects with `{ errno }` when it failed. */
  start(request: ResidentStart): Promise<ResidentProcess>;
  /** Whether the helper is still there to take starts. */
  readonly alive: boolean;
  close(): void;
}

export class ExecFailed extends Error {
  constructor(readonly errno: number) {
    super(`exec failed with errno ${errno}`);
  }
}

export class HelperGone extends Error {
  constructor() {
    super("the resident spawn helper ended");
  }
}

interface Pending {
  readonly resolve: (p: ResidentProcess) => void;
  readonly reject: (e: Error) => void;
}

interface Running {
  readonly resolve: (status: number) => void;
  readonly reject: (e: Error) => void;
}

function field(value: string): Buffer[] {
  return [Buffer.from(value), Buffer.alloc(1)];
}

function list(values: readonly string[]): Buffer[] {
  return [...field(String(values.length)), ...values.flatMap(field)];
}

/** Opens another read end of a pipe the helper holds, without blocking the event loop. */
function openPipe(helperPid: number, fd: number): Readable {
  const own = fs.openSync(`/proc/${helperPid}/fd/${fd}`, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  return new net.Socket({ fd: own, readable: true, writable: false });
}

/** Starts the resident helper; `flags` are the per-process settings every program gets. */
export function startResidentHelper(helperPath: string, flags: readonly string[]): ResidentHelper {
  const helper: ChildProcess = spawn(helperPath, [...flags, "--serve"], {
    stdio: ["ignore", "ignore", "inherit", "pipe"],
  });
  const channel = helper.stdio[3] as net.Socket;
  const pending = new Map<number, Pending>();
  const running = new Map<number, Running>();
  let nextId = 1;
  let alive = true;
  let text = "";

  const gone = () => {
    if (!alive) return;
    alive = false;
    const error = new HelperGone();
    for (const p of pending.values()) p.reject(error);
    for (const r of running.values()) r.reject(error);
    pending.clear();
    running.clear();
  };
  helper.once("error", gone);
  helper.once("exit", gone);
  channel.on("error", gone);
  channel.on("close", gone);

  const send = (kind: "S" | "C", id: number, fields: Buffer[] = []) => {
    const head = Buffer.alloc(9);
    const body = Buffer.concat(fields);
    head.writeUInt32LE(5 + body.length, 0);
    head.write(kind, 4, "latin1");
    head.writeUInt32LE(id, 5);
    channel.write(body.length === 0 ? head : Buffer.concat([head, body]));
  };

  const onLine = (line: string) => {
    const [kind, idText, a, b, c] = line.split(" ");
    const id = Number(idText);
    if (kind === "exit") {
      const r = running.get(id);
      running.delete(id);
      r?.resolve(Number(a));
      return;
    }
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    if (kind === "error") {
      p.reject(new ExecFailed(Number(a)));
      return;
    }
    let stdout: Readable | undefined;
    let stderr: Readable | undefined;
    try {
      stdout = openPipe(helper.pid!, Number(b));
      stderr = openPipe(helper.pid!, Number(c));
    } catch (error) {
      stdout?.destroy();
      // The program runs, but nobody could read what it writes: end it rather than keep it.
      try {
        process.kill(-Number(a), "SIGKILL");
      } catch {
        // already gone
      }
      send("C", id);
      p.reject(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    send("C", id);
    const exited = new Promise<number>((resolve, reject) => running.set(id, { resolve, reject }));
    // A caller that never looks at the exit must not see an unhandled rejection.
    exited.catch(() => undefined);
    p.resolve({ pid: Number(a), stdout, stderr, exited });
  };

  channel.setEncoding("latin1");
  channel.on("data", (chunk: string) => {
    text += chunk;
    let newline: number;
    while ((newline = text.indexOf("\n")) >= 0) {
      const line = text.slice(0, newline);
      text = text.slice(newline + 1);
      onLine(line);
    }
  });

  return {
    get alive() {
      return alive;
    },
    start(request) {
      if (!alive) return Promise.reject(new HelperGone());
      const id = nextId++;
      return new Promise<ResidentProcess>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        const env = Object.entries(request.env).map(([name, value]) => `${name}=${value}`);
        send("S", id, [...field(request.file), ...field(request.cwd), ...list(request.argv), ...list(env)]);
      });
    },
    close() {
      channel.end();
      gone();
    },
  };
}
