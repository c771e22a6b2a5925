// The test cluster's processes: started with their logs in the cluster's directory, waited on
// until ready, and stopped in reverse order.
import { type ChildProcess, spawn } from "node:child_process";
import { openSync, readFileSync } from "node:fs";
import { request } from "node:https";
import { createServer } from "node:net";
import { join } from "node:path";
import type { Pki } from "./test-cluster-pki.js";

export interface ProcessGroup {
  readonly processes: readonly { name: string; child: ChildProcess }[];
  /** Starts `command`, its output appended to `<name>.log` in the directory. */
  start(name: string, command: string, args: readonly string[]): void;
  /** The last lines of a process's log. */
  logTail(name: string): string;
  /** SIGKILLs every process at once (a test process exiting without stop()). */
  killAll(): void;
}

export function createProcessGroup(dir: string): ProcessGroup {
  const processes: { name: string; child: ChildProcess }[] = [];
  return {
    processes,
    start(name, command, args) {
      const log = openSync(join(dir, `${name}.log`), "a");
      const child = spawn(command, args, { stdio: ["ignore", log, log] });
      processes.push({ name, child });
    },
    logTail(name) {
      try {
        return readFileSync(join(dir, `${name}.log`), "utf8")
          .split("\n")
          .slice(-15)
          .join("\n");
      } catch {
        return "(no log)";
      }
    },
    killAll() {
      for (const { child } of processes) child.kill("SIGKILL");
    },
  };
}

export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<import("node:net").Server>((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    return typeof address === "object" && address ? address.port : 0;
  });
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

function probe(url: string, pki: Pki): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        ca: readFileSync(pki.caCert),
        cert: readFileSync(pki.adminCert),
        key: readFileSync(pki.adminKey),
        timeout: 2000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}

export async function waitUntilReady(url: string, pki: Pki, timeoutMs: number, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // A server coming up offers nothing to watch; asking every 200 ms is the only way to learn it.
  while (Date.now() < deadline) {
    if (await probe(url, pki)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} not ready after ${timeoutMs / 1000} s\n${log()}`);
}

export async function stopProcesses(processes: readonly { child: ChildProcess }[]): Promise<void> {
  // Reverse order: the clients of the apiserver first, etcd last.
  for (const { child } of [...processes].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
}
