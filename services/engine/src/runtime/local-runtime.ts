// The `local` runtime: each engine is a process on this machine with its own directory,
// `<root>/<uid>/`, holding `data/` (kept across pause and resume), `logs/engine.log`, `spec.json`
// (what it runs), `pid` and `port` (while it runs) and `exit.json` (why it stopped, when it stopped
// on its own). Processes start detached in their own process group, so they outlive the engine
// service; a restarted service adopts them again by pid (checked against the process's command
// line, so a recycled pid is not mistaken for the engine) and a health probe. H2O engines run a
// real H2O-3 cluster (h2o-cluster.mjs: one JVM per node) unless the stand-in is chosen for them;
// DAI engines run the stand-in server; notebook engines run Jupyter Notebook when it is installed.
import { existsSync, rmSync, watch, writeFileSync, type FSWatcher } from "node:fs";
import { type FileHandle, mkdir, open, readdir, rm, stat, statfs } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import type { Logger } from "@aiem/kit/logger";
import { H2O_CLUSTER, STAND_IN_SERVER } from "./engine-programs.js";
import {
  describeExit,
  directorySize,
  findOnPath,
  freePort,
  httpOk,
  isEngineProcess,
  killOrphans,
  readText,
  sleep,
  writeAtomic,
} from "./host-process.js";
import { createLauncher } from "./launcher-client.js";
import type { DiskUsage, EngineEndpoint, EngineExit, EngineRunSpec, EngineRuntime, EngineStatus } from "./runtime.js";

export { H2O_CLUSTER, LAUNCHER, STAND_IN_SERVER } from "./engine-programs.js";
export { findOnPath } from "./host-process.js";

/** A file smaller than this is not the H2O-3 server jar (h2o-client ships a placeholder of a few hundred bytes). */
const MIN_H2O_JAR_BYTES = 10 * 1024 * 1024;

export interface LocalRuntimeOptions {
  /** Where engine directories live, usually `<AIEM_DATA_DIR>/engines`. */
  readonly root: string;
  /** The Jupyter Notebook executable for notebook engines; undefined runs the stand-in for them too. */
  readonly jupyterCommand?: string | undefined;
  /** What H2O engines run: real H2O-3 (Java and the server jar, checked at each start) or the stand-in. */
  readonly h2o: H2OServer;
  /** Milliseconds a starting engine is probed for before the probe gives up (the reconciler fails it). */
  readonly startTimeoutMs: number;
  /** Milliseconds between SIGTERM and SIGKILL when stopping. */
  readonly stopTimeoutMs: number;
  readonly logger: Logger;
}

export type H2OServer =
  | {
      readonly kind: "h2o-3" /** The java executable (a path or a name on the PATH). */;
      readonly java: string /** The H2O-3 server jar. */;
      readonly jar: string;
    }
  | { readonly kind: "stand-in" };

export interface LocalRuntime extends EngineRuntime {
  /** The engine's directory (tests look inside). */
  engineDir(uid: string): string;
  /** The pid of the engine's process while it runs. */
  pid(uid: string): Promise<number | undefined>;
}

interface ExitRecord {
  readonly cause: EngineExit["cause"];
  readonly message: string;
  readonly at: string;
}

/** Java and the H2O-3 jar, or an error that names what is missing and the setting that points at it. */
async function h2oPrerequisites(h2o: { java: string; jar: string }): Promise<{ java: string; jar: string }> {
  const java = await findOnPath(h2o.java);
  if (!java) {
    throw new Error(
      `H2O engines need Java, and ${JSON.stringify(h2o.java)} is not an executable (install Java 17, e.g. the Debian package openjdk-17-jre-headless, or set AIEM_JAVA)`,
    );
  }
  let size: number;
  try {
    size = (await stat(h2o.jar)).size;
  } catch {
    throw new Error(
      `H2O engines need the H2O-3 server jar, and there is none at ${h2o.jar} (run npm run setup, which installs the h2o package, or set AIEM_H2O_JAR)`,
    );
  }
  if (size < MIN_H2O_JAR_BYTES) {
    throw new Error(
      `${h2o.jar} is not the H2O-3 server jar (${size} bytes; the h2o-client package ships a placeholder there): install the h2o package or set AIEM_H2O_JAR`,
    );
  }
  return { java, jar: h2o.jar };
}

export function createLocalRuntime(options: LocalRuntimeOptions): LocalRuntime {
  const { root, logger } = options;
  // Processes this instance started; `exited` settles once their end is recorded.
  const children = new Map<
    string,
    { pid: number; stopping: boolean; ended: boolean; exited: Promise<void>; done: () => void }
  >();
  const byPid = new Map<number, string>();
  const launcher = createLauncher(
    logger,
    (pid, code, signal) => {
      const uid = byPid.get(pid);
      byPid.delete(pid);
      if (uid !== undefined) void onExit(uid, pid, code, signal);
    },
    () => {
      // Without its launcher nobody reports how these processes end; they are watched like
      // adopted ones from now on.
      for (const [uid, entry] of children) {
        children.delete(uid);
        byPid.delete(entry.pid);
        entry.done();
      }
    },
  );
  const healthPaths = new Map<string, string>();
  const ready = new Set<string>();
  const probing = new Set<string>();
  const ports = new Map<string, number>();
  const listeners = new Set<(uid: string) => void>();
  let closed = false;

  const dirOf = (uid: string) => {
    if (!/^[A-Za-z0-9-]+$/.test(uid)) throw new Error(`not an engine uid: ${uid}`);
    return path.join(root, uid);
  };
  const file = (uid: string, name: string) => path.join(dirOf(uid), name);

  function notify(uid: string): void {
    for (const listener of listeners) {
      try {
        listener(uid);
      } catch (err) {
        logger.warn("runtime listener failed", { uid, error: err instanceof Error ? err.message : String(err) });
      }
    }
  }

  async function readPid(uid: string): Promise<number | undefined> {
    const text = await readText(file(uid, "pid"));
    const pid = text === undefined ? NaN : Number(text.trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  }

  async function alivePid(uid: string): Promise<number | undefined> {
    // Our own child: its exit event says when it ends, no need to look in /proc.
    const own = children.get(uid);
    if (own && !own.ended) return own.pid;
    const pid = await readPid(uid);
    return pid !== undefined && (await isEngineProcess(pid, dirOf(uid))) ? pid : undefined;
  }

  async function readPort(uid: string): Promise<number | undefined> {
    const cached = ports.get(uid);
    if (cached !== undefined) return cached;
    const text = await readText(file(uid, "port"));
    const port = text === undefined ? NaN : Number(text.trim());
    if (!Number.isInteger(port) || port <= 0) return undefined;
    ports.set(uid, port);
    return port;
  }

  async function serverOf(uid: string): Promise<{ health: string; server: string }> {
    const cached = healthPaths.get(uid);
    if (cached) return JSON.parse(cached) as { health: string; server: string };
    const spec = JSON.parse((await readText(file(uid, "spec.json"))) ?? "{}") as { basePath?: string; server?: string };
    const base = spec.basePath ?? `/engines/${uid}/`;
    const server = spec.server ?? "stand-in";
    const health = server === "jupyter" ? `${base}api` : server === "h2o-3" ? `${base}3/Cloud` : `${base}api/health`;
    const value = { health, server };
    healthPaths.set(uid, JSON.stringify(value));
    return value;
  }

  async function healthPath(uid: string): Promise<string> {
    return (await serverOf(uid)).health;
  }

  async function probe(uid: string, timeoutMs: number): Promise<boolean> {
    const port = await readPort(uid);
    if (port === undefined) return false;
    return httpOk(port, await healthPath(uid), timeoutMs);
  }

  /** Polls a starting engine until it answers, ends or the start timeout passes, then notifies. */
  function watchReady(uid: string): void {
    if (probing.has(uid) || closed) return;
    probing.add(uid);
    const deadline = Date.now() + options.startTimeoutMs;
    void (async () => {
      // The stand-in writes its port file once it listens: watching the directory catches that
      // at once, without polling hundreds of starting engines. Jupyter's port is known up front,
      // so it is polled, backing off.
      let kick: (() => void) | undefined;
      let watcher: FSWatcher | undefined;
      try {
        const { server } = await serverOf(uid);
        if (server !== "jupyter") {
          try {
            watcher = watch(dirOf(uid), (_event, name) => {
              if (name === "port") kick?.();
            });
            watcher.on("error", () => {});
          } catch {
            watcher = undefined;
          }
        }
        let delay = watcher ? 500 : 25;
        while (!closed && Date.now() < deadline) {
          if ((await alivePid(uid)) === undefined) break;
          if (await probe(uid, 1000)) {
            ready.add(uid);
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
        probing.delete(uid);
      }
      if (!closed) notify(uid);
    })();
  }

  async function onExit(uid: string, pid: number, code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    const entry = children.get(uid);
    const own = entry?.pid === pid ? entry : undefined;
    if (own) own.ended = true;
    ready.delete(uid);
    ports.delete(uid);
    try {
      // A closed instance no longer speaks for its engines; the next one finds them ended.
      if (own?.stopping || closed) return;
      const described = describeExit(code, signal);
      // The H2O cluster says which node ended and how; that is the reason, not its own exit code.
      const failure = (await readText(file(uid, "failure")))?.trim();
      const cause = described.cause;
      const message = failure || described.message;
      logger.warn("engine process ended", { uid, code, signal, failure });
      try {
        await writeAtomic(
          file(uid, "exit.json"),
          JSON.stringify({ cause, message, at: new Date().toISOString() } satisfies ExitRecord),
        );
      } catch {
        // The directory is gone (removed): nothing to record.
      }
      // The cluster's process ends its nodes before it exits; killed outright, it cannot, and
      // nodes without it are a cluster nobody watches. After the record, so that the reason is
      // there for whoever looks while they go.
      if ((await serverOf(uid).catch(() => undefined))?.server === "h2o-3") await killOrphans(dirOf(uid));
    } finally {
      if (own) {
        children.delete(uid);
        own.done();
      }
    }
    notify(uid);
  }

  async function command(
    spec: EngineRunSpec,
    dir: string,
  ): Promise<{ cmd: string; args: string[]; env: NodeJS.ProcessEnv; server: string }> {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      AIEM_ENGINE_DIR: dir,
      AIEM_ENGINE_UID: spec.uid,
      AIEM_ENGINE_KIND: spec.kind,
      AIEM_ENGINE_BASE_PATH: spec.basePath,
    };
    // Nothing of the engine service's own settings leaks into an engine.
    for (const key of Object.keys(env)) if (key.startsWith("AIEM_") && !key.startsWith("AIEM_ENGINE_")) delete env[key];
    delete env.DATABASE_URL;
    delete env.NATS_URL;
    delete env.NODE_OPTIONS;
    if (spec.kind === "notebook" && options.jupyterCommand) {
      const port = await freePort();
      await writeAtomic(path.join(dir, "port"), String(port));
      const home = path.join(dir, "home");
      await mkdir(home, { recursive: true });
      const args = [
        "--no-browser",
        "--ip=127.0.0.1",
        `--port=${port}`,
        "--port-retries=0",
        `--NotebookApp.base_url=${spec.basePath}`,
        "--NotebookApp.token=",
        "--NotebookApp.password=",
        // The edge authenticates and forwards the browser's Host; Jupyter must accept it.
        "--NotebookApp.allow_remote_access=True",
        `--notebook-dir=${path.join(dir, "data")}`,
      ];
      if (process.getuid?.() === 0) args.push("--allow-root");
      Object.assign(env, {
        HOME: home,
        JUPYTER_RUNTIME_DIR: path.join(dir, "runtime"),
        PYDEVD_DISABLE_FILE_VALIDATION: "1",
      });
      return { cmd: options.jupyterCommand, args, env, server: "jupyter" };
    }
    if (spec.kind === "h2o" && options.h2o.kind === "h2o-3") {
      const { java, jar } = await h2oPrerequisites(options.h2o);
      Object.assign(env, { AIEM_ENGINE_JAVA: java, AIEM_ENGINE_H2O_JAR: jar });
      return { cmd: process.execPath, args: [H2O_CLUSTER, `--engine-dir=${dir}`], env, server: "h2o-3" };
    }
    // `--engine-dir` is not read by the server; it puts the directory in the command line so
    // that adoption can tell this process from one that merely reuses its pid.
    return { cmd: process.execPath, args: [STAND_IN_SERVER, `--engine-dir=${dir}`], env, server: "stand-in" };
  }

  async function start(spec: EngineRunSpec): Promise<void> {
    const dir = dirOf(spec.uid);
    await mkdir(path.join(dir, "data"), { recursive: true });
    await mkdir(path.join(dir, "logs"), { recursive: true });
    if ((await alivePid(spec.uid)) !== undefined) {
      // Already running (adopted after a restart, or a repeated start): leave it.
      if (!ready.has(spec.uid)) watchReady(spec.uid);
      return;
    }
    ready.delete(spec.uid);
    ports.delete(spec.uid);
    await rm(path.join(dir, "exit.json"), { force: true });
    await rm(path.join(dir, "port"), { force: true });
    await rm(path.join(dir, "pid"), { force: true });
    await rm(path.join(dir, "failure"), { force: true });
    let prepared: Awaited<ReturnType<typeof command>>;
    try {
      prepared = await command(spec, dir);
    } catch (err) {
      // What the engine needs is not on this machine: the engine fails, saying what is missing.
      await writeAtomic(
        path.join(dir, "exit.json"),
        JSON.stringify({
          cause: "error",
          message: (err as Error).message,
          at: new Date().toISOString(),
        } satisfies ExitRecord),
      );
      notify(spec.uid);
      return;
    }
    const { cmd, args, env, server } = prepared;
    // JVMs of an H2O cluster whose supervising process was killed outright live on: they would
    // hold the engine's ports and data, so they go before a new cluster starts.
    if (server === "h2o-3") await killOrphans(dir);
    await writeAtomic(
      path.join(dir, "spec.json"),
      JSON.stringify(
        { ...spec, memoryBytes: spec.memoryBytes.toString(), storageBytes: spec.storageBytes.toString(), server },
        null,
        2,
      ),
    );
    // `launching` exists only between spawning the process and recording its pid. Finding it
    // means an earlier start was cut short (the service died): its process may still run.
    const launching = path.join(dir, "launching");
    if (existsSync(launching)) {
      const orphans = await killOrphans(dir);
      if (orphans > 0) logger.warn("killed engine processes left by an interrupted start", { uid: spec.uid, orphans });
    }
    writeFileSync(launching, "");
    let pid: number;
    try {
      pid = await launcher.spawn({
        cmd,
        args,
        cwd: path.join(dir, "data"),
        env,
        log: path.join(dir, "logs", "engine.log"),
        pidFile: path.join(dir, "pid"),
      });
    } catch (err) {
      rmSync(launching, { force: true });
      await writeAtomic(
        path.join(dir, "exit.json"),
        JSON.stringify({
          cause: "error",
          message: `could not start ${path.basename(cmd)}: ${(err as Error).message}`,
          at: new Date().toISOString(),
        } satisfies ExitRecord),
      );
      notify(spec.uid);
      return;
    }
    rmSync(launching, { force: true });
    let done = () => {};
    const exited = new Promise<void>((resolve) => (done = resolve));
    children.set(spec.uid, { pid, stopping: false, ended: false, exited, done });
    byPid.set(pid, spec.uid);
    healthPaths.delete(spec.uid);
    logger.debug("engine process started", { uid: spec.uid, pid, server });
    watchReady(spec.uid);
  }

  async function inspect(uid: string): Promise<EngineStatus> {
    const dir = dirOf(uid);
    if (!existsSync(dir)) return { phase: "absent", dataPresent: false };
    const dataPresent = existsSync(path.join(dir, "data"));
    const pid = await alivePid(uid);
    if (pid !== undefined) {
      if (ready.has(uid)) return { phase: "ready", dataPresent };
      if (!probing.has(uid) && (await probe(uid, 500))) {
        ready.add(uid);
        return { phase: "ready", dataPresent };
      }
      watchReady(uid);
      return { phase: "starting", dataPresent };
    }
    // Our own child that just died: its end is being recorded, wait for that rather than guess.
    const entry = children.get(uid);
    if (entry) await Promise.race([entry.exited, sleep(2_000)]);
    const exit = await readText(path.join(dir, "exit.json"));
    if (exit !== undefined) {
      try {
        const record = JSON.parse(exit) as ExitRecord;
        return { phase: "exited", exit: { cause: record.cause, message: record.message }, dataPresent };
      } catch {
        return { phase: "exited", exit: { cause: "unknown", message: "the engine process ended" }, dataPresent };
      }
    }
    if ((await readPid(uid)) !== undefined) {
      return {
        phase: "exited",
        exit: { cause: "unknown", message: "the engine process ended while the engine service was not watching it" },
        dataPresent,
      };
    }
    return { phase: "stopped", dataPresent };
  }

  async function stop(uid: string): Promise<void> {
    const dir = dirOf(uid);
    const entry = children.get(uid);
    if (entry) entry.stopping = true;
    const pid = await alivePid(uid);
    if (pid !== undefined) {
      const signalGroup = (signal: NodeJS.Signals) => {
        try {
          process.kill(-pid, signal);
        } catch {
          try {
            process.kill(pid, signal);
          } catch {}
        }
      };
      signalGroup("SIGTERM");
      const deadline = Date.now() + options.stopTimeoutMs;
      while (Date.now() < deadline && (await isEngineProcess(pid, dir))) await sleep(20);
      if (await isEngineProcess(pid, dir)) {
        signalGroup("SIGKILL");
        const hard = Date.now() + 5_000;
        while (Date.now() < hard && (await isEngineProcess(pid, dir))) await sleep(20);
      }
    }
    if ((await serverOf(uid).catch(() => undefined))?.server === "h2o-3") await killOrphans(dir);
    ready.delete(uid);
    ports.delete(uid);
    await Promise.all(["pid", "port", "exit.json", "failure"].map((name) => rm(path.join(dir, name), { force: true })));
  }

  return {
    placement: `local:${hostname()}:${root}`,
    engineDir: dirOf,
    async pid(uid) {
      return alivePid(uid);
    },
    start,
    inspect,
    stop,
    async remove(uid) {
      await stop(uid);
      await rm(dirOf(uid), { recursive: true, force: true });
    },
    async resizeStorage(uid, bytes) {
      // A local directory has no size of its own: the new size is recorded and reported.
      const specFile = file(uid, "spec.json");
      const text = await readText(specFile);
      if (text === undefined) return;
      const spec = JSON.parse(text) as Record<string, unknown>;
      spec.storageBytes = bytes.toString();
      await writeAtomic(specFile, JSON.stringify(spec, null, 2));
    },
    async diskUsage(uid, storageBytes): Promise<DiskUsage | undefined> {
      const data = path.join(dirOf(uid), "data");
      if (!existsSync(data)) return undefined;
      const used = await directorySize(data);
      let free = storageBytes > used ? storageBytes - used : 0n;
      try {
        const fs = await statfs(data, { bigint: true });
        const available = fs.bavail * fs.bsize;
        if (available < free) free = available;
      } catch {}
      return { totalBytes: storageBytes, freeBytes: free };
    },
    async logs(uid, maxBytes) {
      const logFile = path.join(dirOf(uid), "logs", "engine.log");
      let handle: FileHandle;
      try {
        handle = await open(logFile, "r");
      } catch {
        return new Uint8Array();
      }
      try {
        const { size } = await handle.stat();
        const length = Math.min(size, maxBytes);
        const buffer = Buffer.alloc(length);
        await handle.read(buffer, 0, length, size - length);
        return new Uint8Array(buffer);
      } finally {
        await handle.close();
      }
    },
    async logsFrom(uid, offset, maxBytes) {
      let handle: FileHandle;
      try {
        handle = await open(path.join(dirOf(uid), "logs", "engine.log"), "r");
      } catch {
        return { data: new Uint8Array(), size: 0 };
      }
      try {
        const size = Number((await handle.stat()).size);
        const length = Math.max(0, Math.min(size - offset, maxBytes));
        const buffer = Buffer.alloc(length);
        if (length > 0) await handle.read(buffer, 0, length, offset);
        return { data: new Uint8Array(buffer), size };
      } finally {
        await handle.close();
      }
    },
    async endpoint(uid): Promise<EngineEndpoint | undefined> {
      const port = await readPort(uid);
      return port === undefined ? undefined : { host: "127.0.0.1", port };
    },
    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      closed = true;
      listeners.clear();
      launcher.close();
    },
  };
}

/**
 * Kills every engine process under `root` (SIGKILL to each process group), for tests and
 * benchmarks that must not leave engines behind.
 */
export async function killEngineProcesses(root: string): Promise<number> {
  let killed = 0;
  let uids: string[] = [];
  try {
    uids = await readdir(root);
  } catch {
    return 0;
  }
  for (const uid of uids) {
    const dir = path.join(root, uid);
    // An H2O cluster's nodes outlive its process when that was killed alone.
    if (existsSync(path.join(dir, "nodes.json"))) killed += await killOrphans(dir);
    const text = await readText(path.join(dir, "pid"));
    const pid = text === undefined ? NaN : Number(text.trim());
    if (!Number.isInteger(pid) || pid <= 0 || !(await isEngineProcess(pid, dir))) continue;
    try {
      process.kill(-pid, "SIGKILL");
      killed++;
    } catch {
      try {
        process.kill(pid, "SIGKILL");
        killed++;
      } catch {}
    }
  }
  return killed;
}

/** The uids of the engines under `root` whose process runs (checked against its command line). */
export async function runningEngines(root: string): Promise<string[]> {
  let uids: string[];
  try {
    uids = await readdir(root);
  } catch {
    return [];
  }
  const running: string[] = [];
  for (const uid of uids) {
    const dir = path.join(root, uid);
    const text = await readText(path.join(dir, "pid"));
    const pid = text === undefined ? NaN : Number(text.trim());
    if (Number.isInteger(pid) && pid > 0 && (await isEngineProcess(pid, dir))) running.push(uid);
  }
  return running;
}

/**
 * Stops every engine process under `root` as the engine service would (SIGTERM to its group,
 * SIGKILL after `stopTimeoutMs`), keeping each engine's data; returns the uids it stopped. For
 * `npm run stop`, while no engine service holds the directory.
 */
export async function stopEngines(root: string, logger: Logger, stopTimeoutMs = 10_000): Promise<string[]> {
  const uids = await runningEngines(root);
  const runtime = createLocalRuntime({ root, h2o: { kind: "stand-in" }, startTimeoutMs: 0, stopTimeoutMs, logger });
  try {
    await Promise.all(uids.map((uid) => runtime.stop(uid)));
  } finally {
    await runtime.close();
  }
  return uids;
}
