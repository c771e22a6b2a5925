// The launcher of sandbox agents: a small Node process that the runtime forks once and that
// starts every sandbox for it. fork() copies the page tables of the process that calls it, so
// in a large service it holds the event loop for tens of milliseconds; here it costs a few.
// Plain JavaScript, so it runs without a build step.
//
// Messages from the runtime: {type: "spawn", id, command, args, env, cwd, detached, survive, logPath,
// socket?: {path, fd}} (socket: a unix socket made and bound here at `path`, handed to the child as
// descriptor `fd`; see spawner.ts).
// Messages to it: {type: "spawned", id, pid}, {type: "ready", id} (the child printed "ready"),
// {type: "exit", id, code, signal}, {type: "error", id, message}.
// When the runtime's process goes away (the channel closes), every child is killed, except those
// started with `survive` (sandboxes meant to outlive the service), and the launcher exits;
// bubblewrap's --die-with-parent, where it is used, follows this process.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";

/**
 * A listening unix socket at `file`, mode 0600, made in a private directory beside it and moved
 * into place (whatever the umask, nobody else can connect at any moment). Returns its server,
 * whose descriptor goes to the child; closing the server afterwards leaves the file (Node removes
 * the name it bound, which is gone by then).
 */
function bindHostSocket(file) {
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
    const handle = server._handle;
    if (!handle) throw new Error(`cannot bind a unix socket in ${dir}`);
    fs.chmodSync(temp, 0o600);
    fs.renameSync(temp, file);
    return { fd: handle.fd, close: release };
  } catch (error) {
    release();
    throw error;
  }
}

const children = new Map();

function send(message) {
  if (process.connected) process.send(message);
}

process.on("message", (m) => {
  if (m?.type !== "spawn") return;
  let log;
  try {
    log = fs.openSync(m.logPath, "w", 0o600);
  } catch (error) {
    send({ type: "error", id: m.id, message: `cannot open ${m.logPath}: ${error.code ?? error.message}` });
    return;
  }
  let socket;
  const stdio = ["ignore", "pipe", log];
  if (m.socket) {
    try {
      socket = bindHostSocket(m.socket.path);
    } catch (error) {
      fs.closeSync(log);
      send({ type: "error", id: m.id, message: `cannot make the agent's socket: ${error.code ?? error.message}` });
      return;
    }
    while (stdio.length < m.socket.fd) stdio.push("ignore");
    stdio[m.socket.fd] = socket.fd;
  }
  let child;
  try {
    child = spawn(m.command, m.args, { stdio, env: m.env, detached: m.detached, cwd: m.cwd });
  } catch (error) {
    fs.closeSync(log);
    socket?.close();
    send({ type: "error", id: m.id, message: `cannot run ${m.command}: ${error.code ?? error.message}` });
    return;
  }
  fs.closeSync(log);
  socket?.close();
  children.set(m.id, { child, detached: m.detached, survive: m.survive === true });
  child.once("spawn", () => send({ type: "spawned", id: m.id, pid: child.pid }));
  let seen = "";
  let ready = false;
  child.stdout.on("data", (data) => {
    if (ready) return;
    seen += data.toString("utf8");
    if (seen.includes("ready\n")) {
      ready = true;
      send({ type: "ready", id: m.id });
    }
  });
  child.once("error", (error) =>
    send({ type: "error", id: m.id, message: `cannot run ${m.command}: ${error.code ?? error.message}` }),
  );
  child.once("exit", (code, signal) => {
    children.delete(m.id);
    send({ type: "exit", id: m.id, code, signal });
  });
});

process.on("disconnect", () => {
  for (const { child, detached, survive } of children.values()) {
    if (survive) continue;
    try {
      if (detached) process.kill(-child.pid, "SIGKILL");
      else child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
  process.exit(0);
});

send({ type: "started" });
