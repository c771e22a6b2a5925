// What the local runtime needs of the host: executables on the PATH, free ports, files written
// whole, processes by pid (and whether a pid is still an engine's), HTTP probes and directory sizes.
/** Finds an executable on the PATH, as a shell would. */
import { type Dirent, constants as fsConstants, existsSync } from "node:fs";
import { access, readFile, readdir, rename, stat, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { createServer } from "node:net";
import path from "node:path";
import type { EngineExit } from "./runtime.js";

export async function findOnPath(command: string, envPath = process.env.PATH ?? ""): Promise<string | undefined> {
  if (command.includes("/")) return (await isExecutable(command)) ? command : undefined;
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, fsConstants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export async function writeAtomic(file: string, content: string): Promise<void> {
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(tmp, content);
  await rename(tmp, file);
}

export async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch {
    return undefined;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** True when `pid` runs and is the engine whose directory is `dir` (not a recycled pid, not a zombie). */
export async function isEngineProcess(pid: number, dir: string): Promise<boolean> {
  if (!processExists(pid)) return false;
  const cmdline = await readText(`/proc/${pid}/cmdline`);
  if (cmdline === undefined) return !existsSync("/proc/self");
  if (!cmdline.includes(dir)) return false;
  const stat = await readText(`/proc/${pid}/stat`);
  const state = stat?.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  return state !== "Z" && state !== "X";
}

export function describeExit(
  code: number | null,
  signal: NodeJS.Signals | null,
): { cause: EngineExit["cause"]; message: string } {
  if (signal === "SIGKILL") {
    return {
      cause: "oom",
      message: "the engine process was killed (SIGKILL), most likely because it ran out of memory",
    };
  }
  if (signal) return { cause: "error", message: `the engine process was killed by ${signal}` };
  return {
    cause: "error",
    message:
      code === 0 ? "the engine process exited on its own (exit code 0)" : `the engine process exited with code ${code}`,
  };
}

export function httpOk(port: number, pathname: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: pathname, method: "GET", timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode !== undefined && res.statusCode < 400);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}

/**
 * Kills processes whose command line names `dir`: what a start left behind when the service died
 * between starting the process and recording its pid. Only needed after such a crash, so the
 * scan of /proc is rare.
 */
export async function killOrphans(dir: string): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return 0;
  }
  const killed: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cmdline = await readText(`/proc/${entry}/cmdline`);
    if (!cmdline?.split("\0").some((arg) => arg.includes(dir))) continue;
    try {
      process.kill(-Number(entry), "SIGKILL");
    } catch {
      try {
        process.kill(Number(entry), "SIGKILL");
      } catch {}
    }
    killed.push(Number(entry));
  }
  // A SIGKILL is delivered at once but a large process (a JVM's heap) takes a moment to go: the
  // caller goes on to start or report, so it waits until they are gone (zombies count as gone).
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline && (await Promise.all(killed.map((pid) => isEngineProcess(pid, dir)))).some(Boolean))
    await sleep(20);
  return killed.length;
}

/** Size in bytes of everything under `dir` (files as stored, symlinks not followed). */
export async function directorySize(dir: string): Promise<bigint> {
  let total = 0n;
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const p = path.join(current, entry.name);
      if (entry.isDirectory()) stack.push(p);
      else if (entry.isFile()) {
        try {
          total += BigInt((await stat(p)).size);
        } catch {}
      }
    }
  }
  return total;
}
