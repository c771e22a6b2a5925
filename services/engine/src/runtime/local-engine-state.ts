// What the `local` runtime knows of its engines between calls, and the reads of an engine's
// directory that every step shares. Files in `<root>/<uid>/` are the truth; the maps only cache
// them or track the processes this instance started.
import path from "node:path";
import { httpOk, isEngineProcess, readText, writeAtomic } from "./host-process.js";
import type { LocalRuntimeOptions } from "./local-runtime-options.js";
import type { EngineExit } from "./runtime.js";

/** A process this instance started; `exited` settles once its end is recorded. */
export interface LocalChild {
  readonly pid: number;
  stopping: boolean;
  ended: boolean;
  readonly exited: Promise<void>;
  readonly done: () => void;
}

export interface LocalEngineState {
  readonly options: LocalRuntimeOptions;
  readonly children: Map<string, LocalChild>;
  readonly byPid: Map<number, string>;
  /** The health path and server of each engine, from its spec.json. */
  readonly servers: Map<string, EngineServer>;
  readonly ready: Set<string>;
  readonly probing: Set<string>;
  readonly ports: Map<string, number>;
  readonly listeners: Set<(uid: string) => void>;
  closed: boolean;
}

export interface EngineServer {
  readonly health: string;
  readonly server: string;
}

/** Why an engine stopped on its own, as `exit.json` holds it. */
export interface ExitRecord {
  readonly cause: EngineExit["cause"];
  readonly message: string;
  readonly at: string;
}

export function createLocalEngineState(options: LocalRuntimeOptions): LocalEngineState {
  return {
    options,
    children: new Map(),
    byPid: new Map(),
    servers: new Map(),
    ready: new Set(),
    probing: new Set(),
    ports: new Map(),
    listeners: new Set(),
    closed: false,
  };
}

export function engineDir(state: LocalEngineState, uid: string): string {
  if (!/^[A-Za-z0-9-]+$/.test(uid)) throw new Error(`not an engine uid: ${uid}`);
  return path.join(state.options.root, uid);
}

export function engineFile(state: LocalEngineState, uid: string, name: string): string {
  return path.join(engineDir(state, uid), name);
}

export function notify(state: LocalEngineState, uid: string): void {
  for (const listener of state.listeners) {
    try {
      listener(uid);
    } catch (err) {
      state.options.logger.warn("runtime listener failed", {
        uid,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
}

export async function writeExitRecord(dir: string, cause: EngineExit["cause"], message: string): Promise<void> {
  await writeAtomic(
    path.join(dir, "exit.json"),
    JSON.stringify({ cause, message, at: new Date().toISOString() } satisfies ExitRecord),
  );
}

export async function readPid(state: LocalEngineState, uid: string): Promise<number | undefined> {
  const text = await readText(engineFile(state, uid, "pid"));
  const pid = text === undefined ? NaN : Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

export async function alivePid(state: LocalEngineState, uid: string): Promise<number | undefined> {
  // Our own child: its exit event says when it ends, no need to look in /proc.
  const own = state.children.get(uid);
  if (own && !own.ended) return own.pid;
  const pid = await readPid(state, uid);
  return pid !== undefined && (await isEngineProcess(pid, engineDir(state, uid))) ? pid : undefined;
}

export async function readPort(state: LocalEngineState, uid: string): Promise<number | undefined> {
  const cached = state.ports.get(uid);
  if (cached !== undefined) return cached;
  const text = await readText(engineFile(state, uid, "port"));
  const port = text === undefined ? NaN : Number(text.trim());
  if (!Number.isInteger(port) || port <= 0) return undefined;
  state.ports.set(uid, port);
  return port;
}

export async function serverOf(state: LocalEngineState, uid: string): Promise<EngineServer> {
  const cached = state.servers.get(uid);
  if (cached) return cached;
  const spec = JSON.parse((await readText(engineFile(state, uid, "spec.json"))) ?? "{}") as {
    basePath?: string;
    server?: string;
  };
  const base = spec.basePath ?? `/engines/${uid}/`;
  const server = spec.server ?? "stand-in";
  const health = server === "jupyter" ? `${base}api` : server === "h2o-3" ? `${base}3/Cloud` : `${base}api/health`;
  const value = { health, server };
  state.servers.set(uid, value);
  return value;
}

export async function probe(state: LocalEngineState, uid: string, timeoutMs: number): Promise<boolean> {
  const port = await readPort(state, uid);
  if (port === undefined) return false;
  return httpOk(port, (await serverOf(state, uid)).health, timeoutMs);
}
