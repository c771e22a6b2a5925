// The agent's process table. Every process is started through the spawn helper (see
// spawn-helper.c) when one is available, so that its exit status is exact for every signal and
// its per-process settings apply before it runs: the resident helper (resident-helper.ts) where
// /proc lets it lend the agent the output pipes, otherwise a helper per process; without a helper
// directly, where Node cannot name the real-time signals (32-64) that end a process. Output is
// read continuously into the process's output log, whether or not anyone is listening, so no
// process ever blocks on a full pipe.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Readable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import { alreadyExists, errnoCode, failedPrecondition, invalidArgument, notFound, permissionDenied } from "./errors.js";
import { type OutputLog, type StreamName, createOutputLog } from "./output-log.js";
import { ExecFailed, type ResidentHelper, startResidentHelper } from "./resident-helper.js";
import { WORKSPACE, joinSegments, pathSegments } from "./paths.js";

export const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export interface ProcessExitInfo {
  /** The exit code; 128 + N for a process killed by signal N. */
  readonly exitCode: number;
  /** The signal that killed the process; undefined when it exited by itself. */
  readonly signal?: number;
  readonly endTime: Date;
}

export interface ProcessRecord {
  readonly id: string;
  readonly pid: number;
  readonly log: OutputLog;
  /** Set once the process has ended. */
  readonly exit: ProcessExitInfo | undefined;
  /** Resolves when the process has ended. */
  readonly exited: Promise<ProcessExitInfo>;
}

export interface StartRequest {
  readonly processId: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly workingDirectory: string;
  readonly environment: Readonly<Record<string, string>>;
}

export interface ProcessManagerOptions {
  /** The sandbox root as the agent sees it (`/` under bubblewrap). */
  readonly root: string;
  /** Path of the compiled spawn helper; undefined to spawn directly. */
  readonly helperPath?: string | undefined;
  /** Start processes through one resident helper (default), not a helper per process. */
  readonly residentHelper?: boolean | undefined;
  /** Bytes of output kept per process. */
  readonly outputLimitBytes: number;
  /**
   * Bytes of output kept across all processes. Past it, the logs of processes that ended are
   * released, oldest end first (their bytes count as dropped); running processes keep theirs.
   * Default: no total limit.
   */
  readonly totalOutputLimitBytes?: number | undefined;
  /** How long after a process exits its output is still awaited from children holding the pipes. */
  readonly drainTimeoutMs: number;
  /** oom_score_adj given to every process, so the kernel picks them before the agent. */
  readonly oomScoreAdj?: number | undefined;
  /** Fallback limits when the machine has no cgroups: RLIMIT_AS and RLIMIT_FSIZE per process. */
  readonly rlimitAsBytes?: number | undefined;
  readonly rlimitFsizeBytes?: number | undefined;
}

export interface ProcessManager {
  start(request: StartRequest): Promise<ProcessRecord>;
  get(processId: string): ProcessRecord;
  signal(processId: string, signal: number): void;
  /** Resolves when the process has ended; a process being started is waited for once it started. */
  wait(processId: string, signal?: AbortSignal): Promise<ProcessExitInfo>;
  /** Kills every process group still running (agent shutdown outside bubblewrap). */
  killAll(): void;
  /** Lets the resident helper go (the processes it started run on). */
  close(): void;
}

/** A start that passed its checks: the program's path found, its directory and environment set. */
interface Launch {
  readonly processId: string;
  readonly file: string;
  readonly request: StartRequest;
  readonly cwd: string;
  readonly env: Record<string, string>;
}

interface MutableRecord extends ProcessRecord {
  pid: number;
  exit: ProcessExitInfo | undefined;
}

const signalNumbers = os.constants.signals as Record<string, number>;

function hostPath(root: string, segments: readonly string[]): string {
  return root === "/" ? joinSegments(segments) : path.join(root, ...segments);
}

function executableError(display: string, error: unknown): ConnectError {
  const code = errnoCode(error);
  if (code === "ENOENT" || code === "ENOTDIR") return notFound(`command: ${display} does not exist`);
  // A fork refused for want of pids or memory: the sandbox's or the host's bound, not the program.
  if (code === "EAGAIN" || code === "ENOMEM")
    return new ConnectError(
      `cannot start ${display}: the sandbox has reached its process or memory limit`,
      Code.ResourceExhausted,
    );
  return permissionDenied(`command: ${display} is not executable`);
}

function checkExecutable(file: string, display: string): void {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (error) {
    throw executableError(display, error);
  }
  if (!st.isFile()) throw permissionDenied(`command: ${display} is not executable`);
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch (error) {
    throw executableError(display, error);
  }
}

/** Finds the program the way execvp does: a name with a slash as a path, otherwise along PATH. */
function resolveCommand(command: string, cwd: string, envPath: string): string {
  if (command.includes("/")) {
    const file = path.resolve(cwd, command);
    checkExecutable(file, command);
    return file;
  }
  let denied = false;
  for (const dir of envPath.split(":")) {
    const file = path.resolve(cwd, dir === "" ? "." : dir, command);
    try {
      checkExecutable(file, command);
      return file;
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.PermissionDenied) denied = true;
    }
  }
  if (denied) throw permissionDenied(`command: ${command} is not executable`);
  throw notFound(`command: ${command} was not found in PATH`);
}

function exitFromStatus(status: number): { exitCode: number; signal?: number } {
  const termSignal = status & 0x7f;
  if (termSignal === 0) return { exitCode: (status >> 8) & 0xff };
  if (termSignal === 0x7f) return { exitCode: 255 }; // stopped: cannot be the final status
  return { exitCode: 128 + termSignal, signal: termSignal };
}

function errnoName(errno: number): string | undefined {
  for (const [name, value] of Object.entries(os.constants.errno)) if (value === errno) return name;
  return undefined;
}

export function createProcessManager(options: ProcessManagerOptions): ProcessManager {
  const records = new Map<string, MutableRecord>();
  const reserved = new Set<string>();
  /** Starts in flight, by process id: a wait that comes while its process is being started waits for the start. */
  const starting = new Map<string, Promise<MutableRecord | undefined>>();
  /** Records whose log is sealed and still holds bytes, in the order they were sealed. */
  const sealedOrder: MutableRecord[] = [];

  /** Seals a finished process's log and keeps the total of kept output within its budget. */
  function sealLog(record: MutableRecord): void {
    if (record.log.sealed) return;
    record.log.seal();
    const budget = options.totalOutputLimitBytes;
    if (budget === undefined) return;
    sealedOrder.push(record);
    let total = 0;
    for (const r of records.values()) total += r.log.kept;
    if (!records.has(record.id)) total += record.log.kept;
    while (total > budget && sealedOrder.length > 0) {
      const oldest = sealedOrder.shift()!;
      total -= oldest.log.kept;
      oldest.log.release();
    }
  }

  function lookup(processId: string): MutableRecord {
    if (processId === "") throw invalidArgument("process_id: is required");
    const record = records.get(processId);
    if (record === undefined) throw notFound(`process ${processId} not found`);
    return record;
  }

  async function start(request: StartRequest): Promise<ProcessRecord> {
    const { processId, command } = request;
    if (processId === "") throw invalidArgument("process_id: is required");
    if (command === "") throw invalidArgument("command: is required");
    if (command.includes("\0") || request.args.some((a) => a.includes("\0"))) {
      throw invalidArgument("command: arguments must not contain NUL bytes");
    }
    if (records.has(processId) || reserved.has(processId)) {
      throw alreadyExists(`process ${processId} already exists`);
    }
    const cwdSegments = pathSegments(request.workingDirectory || WORKSPACE, "working_directory");
    const cwd = hostPath(options.root, cwdSegments);
    let cwdStat: fs.Stats;
    try {
      cwdStat = fs.statSync(cwd);
    } catch {
      throw notFound(`working_directory: ${joinSegments(cwdSegments)} does not exist`);
    }
    if (!cwdStat.isDirectory()) {
      throw failedPrecondition(`working_directory: ${joinSegments(cwdSegments)} is not a directory`);
    }
    // Checked here so that Node never builds an error message out of a (secret) value.
    for (const [name, value] of Object.entries(request.environment)) {
      if (name === "" || name.includes("=") || name.includes("\0")) {
        throw invalidArgument(`environment: invalid variable name ${JSON.stringify(name)}`);
      }
      if (value.includes("\0")) throw invalidArgument(`environment: the value of ${name} contains a NUL byte`);
    }
    const env: Record<string, string> = { ...request.environment };
    if (env["PATH"] === undefined) env["PATH"] = DEFAULT_PATH;
    const file = resolveCommand(command, cwd, env["PATH"]);

    const launch: Launch = { processId, file, request, cwd, env };
    reserved.add(processId);
    try {
      const spawning = !options.helperPath
        ? spawnDirect(launch)
        : residentHelper()
          ? spawnResident(launch)
          : spawnWithHelper(launch);
      starting.set(
        processId,
        spawning.catch(() => undefined),
      );
      const record = await spawning;
      records.set(processId, record);
      return record;
    } catch (error) {
      if (error instanceof ConnectError) throw error;
      // Never pass on a system error's text: it may quote the environment.
      throw new ConnectError(`cannot start the process: ${errnoCode(error) ?? "unexpected error"}`, Code.Internal);
    } finally {
      reserved.delete(processId);
      starting.delete(processId);
    }
  }

  function newRecord(processId: string): {
    record: MutableRecord;
    finish: (exit: { exitCode: number; signal?: number }) => void;
  } {
    let resolveExit!: (e: ProcessExitInfo) => void;
    const exited = new Promise<ProcessExitInfo>((r) => (resolveExit = r));
    const record: MutableRecord = {
      id: processId,
      pid: 0,
      log: createOutputLog(options.outputLimitBytes),
      exit: undefined,
      exited,
    };
    const finish = (exit: { exitCode: number; signal?: number }) => {
      if (record.exit !== undefined) return;
      record.exit = { ...exit, endTime: new Date() };
      resolveExit(record.exit);
    };
    return { record, finish };
  }

  /**
   * Feeds both pipes into the log. The log is complete once the process has ended and both pipes
   * are closed, or a while after it ended when something it started still holds them.
   */
  function capture(stdout: Readable | null, stderr: Readable | null, record: MutableRecord): void {
    let open = 2;
    let ended = false;
    const onData = (stream: StreamName) => (data: Buffer) => record.log.append(stream, data);
    const onClose = () => {
      if (--open === 0 && ended) sealLog(record);
    };
    for (const [stream, pipe] of [
      ["stdout", stdout],
      ["stderr", stderr],
    ] as const) {
      if (pipe === null) {
        open--;
        continue;
      }
      pipe.on("data", onData(stream));
      pipe.once("close", onClose);
      pipe.on("error", () => undefined);
    }
    void record.exited.then(() => {
      ended = true;
      if (open === 0) {
        sealLog(record);
        return;
      }
      // Keep reading (and, once sealed, dropping) so that the holder never blocks on a full pipe.
      const timer = setTimeout(() => sealLog(record), options.drainTimeoutMs);
      timer.unref();
    });
  }

  /** The helper's flags: the settings every program gets. */
  function helperFlags(): string[] {
    const flags: string[] = [];
    if (options.oomScoreAdj !== undefined) flags.push("-a", String(options.oomScoreAdj));
    if (options.rlimitAsBytes !== undefined) flags.push("-m", String(options.rlimitAsBytes));
    if (options.rlimitFsizeBytes !== undefined) flags.push("-f", String(options.rlimitFsizeBytes));
    return flags;
  }

  let resident: ResidentHelper | undefined;
  // The agent reads a program's pipes through /proc/<helper>/fd; checked before any program runs,
  // since a program that started but could not be followed is ended, not started again.
  let residentWorks = options.residentHelper !== false && fs.existsSync(`/proc/${process.pid}/fd`);

  /** The resident helper, started (again, if it went away) on demand; undefined when not used. */
  function residentHelper(): ResidentHelper | undefined {
    if (!residentWorks) return undefined;
    if (!resident?.alive) resident = startResidentHelper(options.helperPath!, helperFlags());
    return resident;
  }

  async function spawnResident({ processId, file, request, cwd, env }: Launch): Promise<MutableRecord> {
    const helper = resident!;
    let started;
    try {
      started = await helper.start({ file, argv: [request.command, ...request.args], cwd, env });
    } catch (error) {
      if (error instanceof ExecFailed) throw executableError(request.command, { code: errnoName(error.errno) });
      // The pipes could not be opened after all: a helper per process from now on.
      if (errnoCode(error) !== undefined) residentWorks = false;
      throw error;
    }
    const { record, finish } = newRecord(processId);
    record.pid = started.pid;
    capture(started.stdout, started.stderr, record);
    started.exited.then(
      (status) => finish(exitFromStatus(status)),
      // The helper went away before it could report: the program cannot be followed any more.
      () => {
        try {
          process.kill(-started.pid, "SIGKILL");
        } catch {
          // already gone
        }
        finish({ exitCode: 128 + 9, signal: 9 });
      },
    );
    return record;
  }

  function spawnWithHelper({ processId, file, request, cwd, env }: Launch): Promise<MutableRecord> {
    const { record, finish } = newRecord(processId);
    const helper = spawn(options.helperPath!, [...helperFlags(), "--", file, request.command, ...request.args], {
      cwd,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    capture(helper.stdout, helper.stderr, record);
    return new Promise<MutableRecord>((resolve, reject) => {
      let started = false;
      let pending = "";
      const status = helper.stdio[3] as NodeJS.ReadableStream | null;
      const fail = (error: ConnectError) => {
        if (!started) reject(error);
      };
      helper.once("error", (error) =>
        fail(new ConnectError(`cannot start the process: ${errnoCode(error) ?? "error"}`, Code.Internal)),
      );
      status?.on("data", (data: Buffer) => {
        pending += data.toString("latin1");
        let newline: number;
        while ((newline = pending.indexOf("\n")) >= 0) {
          const [kind, value] = pending.slice(0, newline).split(" ");
          pending = pending.slice(newline + 1);
          const n = Number(value);
          if (kind === "started") {
            record.pid = n;
            started = true;
            resolve(record);
          } else if (kind === "error") {
            fail(executableError(request.command, { code: errnoName(n) }));
          } else if (kind === "exit") {
            finish(exitFromStatus(n));
          }
        }
      });
      // fd 3 is close-on-exec in the program, so it ends exactly when the helper does, after
      // every status line; the helper's "exit" event may come before those lines are read.
      let helperExit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      let statusClosed = false;
      const settle = () => {
        if (!statusClosed || helperExit === undefined) return;
        if (!started) {
          fail(new ConnectError("cannot start the process: the spawn helper failed", Code.Internal));
          return;
        }
        if (record.exit === undefined) {
          // Only when the helper itself was killed before it could report.
          const { code, signal } = helperExit;
          finish(signal !== null ? { exitCode: 128 + (signalNumbers[signal] ?? 0) } : { exitCode: code ?? 255 });
        }
      };
      helper.once("exit", (code, signal) => {
        helperExit = { code, signal };
        settle();
      });
      if (status === null) statusClosed = true;
      else
        status.once("close", () => {
          statusClosed = true;
          settle();
        });
    });
  }

  function spawnDirect({ processId, file, request, cwd, env }: Launch): Promise<MutableRecord> {
    const { record, finish } = newRecord(processId);
    const child = spawn(file, [...request.args], {
      argv0: request.command,
      cwd,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    capture(child.stdout, child.stderr, record);
    child.once("exit", (code, signal) => {
      if (signal !== null) {
        const n = signalNumbers[signal] ?? 0;
        finish({ exitCode: 128 + n, signal: n });
      } else {
        finish({ exitCode: code ?? 0 });
      }
    });
    return new Promise<MutableRecord>((resolve, reject) => {
      child.once("spawn", () => {
        record.pid = child.pid ?? 0;
        if (options.oomScoreAdj !== undefined) {
          try {
            fs.writeFileSync(`/proc/${record.pid}/oom_score_adj`, String(options.oomScoreAdj));
          } catch {
            // the process may already be gone
          }
        }
        resolve(record);
      });
      child.once("error", (error) => reject(executableError(request.command, error)));
    });
  }

  function signal(processId: string, signalNumber: number): void {
    if (!Number.isInteger(signalNumber) || signalNumber < 1 || signalNumber > 64) {
      throw invalidArgument("signal: must be between 1 and 64");
    }
    const record = lookup(processId);
    if (record.exit !== undefined) throw failedPrecondition(`process ${processId} has already ended`);
    try {
      process.kill(-record.pid, signalNumber);
    } catch (error) {
      if (errnoCode(error) === "ESRCH") throw failedPrecondition(`process ${processId} has already ended`);
      throw permissionDenied(`process ${processId}: cannot send signal ${signalNumber}`);
    }
  }

  async function wait(processId: string, abort?: AbortSignal): Promise<ProcessExitInfo> {
    // The service may ask for the exit together with the start; one that failed is unknown.
    const pending = starting.get(processId);
    const record = (pending && (await pending)) || lookup(processId);
    if (record.exit !== undefined) return record.exit;
    if (abort === undefined) return record.exited;
    return new Promise<ProcessExitInfo>((resolve, reject) => {
      // Report why the wait stopped (a deadline, or the client going away), not a new reason.
      const onAbort = () =>
        reject(abort.reason instanceof ConnectError ? abort.reason : new ConnectError("wait cancelled", Code.Canceled));
      if (abort.aborted) return onAbort();
      abort.addEventListener("abort", onAbort, { once: true });
      void record.exited.then((exit) => {
        abort.removeEventListener("abort", onAbort);
        resolve(exit);
      });
    });
  }

  function killAll(): void {
    for (const record of records.values()) {
      if (record.exit !== undefined) continue;
      try {
        process.kill(-record.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }

  function close(): void {
    resident?.close();
  }

  return { start, get: lookup, signal, wait, killAll, close };
}
