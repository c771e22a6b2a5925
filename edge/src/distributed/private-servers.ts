// A PostgreSQL cluster and a NATS server of the fault suite's own, on free ports, so that it can
// kill and restart them while other suites on the machine keep using the shared ones. Both keep
// their data across restarts (the point of restarting them). Debian's binaries: nats-server on
// PATH, PostgreSQL under /usr/lib/postgresql/<version>/bin, run as the `postgres` user when this
// process is root (PostgreSQL refuses to run as root).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmod, chown, mkdir, readdir, readFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { userInfo } from "node:os";
import { freePort } from "../testing/free-port.js";

export interface PrivateServer {
  readonly url: string;
  /** Stops it abruptly (SIGKILL for NATS, PostgreSQL's immediate shutdown) and starts it again. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

async function untilAccepting(port: number, what: string, child: ChildProcess, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`${what} did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => child.once("exit", () => resolve()));
}

export async function startPrivateNats(dir: string): Promise<PrivateServer> {
  const port = await freePort();
  await mkdir(dir, { recursive: true });
  let child: ChildProcess;
  const start = async () => {
    child = spawn("nats-server", ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", dir], { stdio: "ignore" });
    await untilAccepting(port, "nats-server", child);
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    async restart() {
      child.kill("SIGKILL");
      await exited(child);
      await start();
    },
    async stop() {
      child.kill("SIGTERM");
      await exited(child);
    },
  };
}

async function postgresBin(): Promise<string> {
  const versions = (await readdir("/usr/lib/postgresql")).sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error("no PostgreSQL under /usr/lib/postgresql (Debian package postgresql)");
  return join("/usr/lib/postgresql", versions[0]!, "bin");
}

export async function startPrivatePostgres(dir: string): Promise<PrivateServer> {
  const bin = await postgresBin();
  const port = await freePort();
  const asRoot = userInfo().uid === 0;
  const run = (cmd: string, args: string[]) =>
    asRoot ? { cmd: "runuser", args: ["-u", "postgres", "--", cmd, ...args] } : { cmd, args };
  await mkdir(dir, { recursive: true });
  if (asRoot) {
    const id = (flag: string) => Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
    await chown(dir, id("-u"), id("-g"));
  }
  await chmod(dir, 0o700);
  const init = run(join(bin, "initdb"), ["-D", dir, "-A", "trust", "-U", "postgres", "--no-sync"]);
  const made = spawnSync(init.cmd, init.args, { encoding: "utf8" });
  if (made.status !== 0) throw new Error(`initdb failed: ${made.stderr}`);
  let child: ChildProcess;
  const start = async () => {
    // fsync off: a test cluster, restarted by "crash" (immediate shutdown) only, on one machine.
    const server = run(join(bin, "postgres"), [
      "-D",
      dir,
      "-p",
      String(port),
      "-k",
      dir,
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "fsync=off",
      "-c",
      "max_connections=300",
    ]);
    child = spawn(server.cmd, server.args, { stdio: "ignore" });
    await untilAccepting(port, "postgres", child);
    // Accepting connections is not accepting queries while it recovers; pg_isready tells.
    const ready = run(join(bin, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port)]);
    for (const until = Date.now() + 30_000; spawnSync(ready.cmd, ready.args).status !== 0; ) {
      if (Date.now() > until) throw new Error("postgres did not become ready");
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async restart() {
      // SIGQUIT to the postmaster (not to runuser, which need not pass it on) is PostgreSQL's
      // immediate shutdown: no checkpoint, crash recovery at the next start.
      process.kill(await postmasterPid(), "SIGQUIT");
      await exited(child);
      await start();
    },
    async stop() {
      process.kill(await postmasterPid(), "SIGINT");
      await exited(child);
    },
  };

  async function postmasterPid(): Promise<number> {
    return Number((await readFile(join(dir, "postmaster.pid"), "utf8")).split("\n")[0]);
  }
}
