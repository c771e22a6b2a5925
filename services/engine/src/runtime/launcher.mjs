// The local runtime's launcher: a small process that starts engine processes for the engine
// service and reports how they end. Starting a process copies the page tables of the process that
// starts it, which takes tens of milliseconds from a service holding an embedded database and
// well under one from this one. Engines start detached in their own session, so they outlive
// both this launcher and the service; the launcher exits when the service goes away.
//
// Messages (Node IPC), service to launcher:
//   { id, op: "spawn", cmd, args, cwd, env, log, pidFile }
// launcher to service:
//   { id, pid } or { id, error }                  the answer to a spawn
//   { op: "exit", pid, code, signal }             a started process ended
import { spawn } from "node:child_process";
import { closeSync, openSync, renameSync, writeFileSync } from "node:fs";

process.on("disconnect", () => process.exit(0));

process.on("message", (msg) => {
  if (msg?.op !== "spawn") return;
  let fd;
  try {
    fd = openSync(msg.log, "a");
    const child = spawn(msg.cmd, msg.args, { cwd: msg.cwd, env: msg.env, detached: true, stdio: ["ignore", fd, fd] });
    if (child.pid === undefined) {
      child.once("error", (err) => process.send?.({ id: msg.id, error: err.message }));
      return;
    }
    // Recorded in the same tick as the start, so a process never runs without its pid file.
    writeFileSync(`${msg.pidFile}.tmp`, String(child.pid));
    renameSync(`${msg.pidFile}.tmp`, msg.pidFile);
    const pid = child.pid;
    child.on("error", () => {});
    child.once("exit", (code, signal) => process.send?.({ op: "exit", pid, code, signal }));
    process.send?.({ id: msg.id, pid });
  } catch (err) {
    process.send?.({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
});
