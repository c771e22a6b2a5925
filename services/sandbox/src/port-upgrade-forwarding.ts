// A WebSocket (or any upgrade) to the program in a sandbox: the handshake is replayed on a tunnel
// the agent opens and the program answers it; then both ways are spliced.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { forwardUpgrade, pipeUserUpgradeAnswer } from "@aiem/kit/server";
import { admit } from "./port-admission.js";
import type { PortConnections } from "./port-connections.js";
import { forwardHeaders } from "./port-forward-headers.js";
import type { PortProxyDeps } from "./port-proxy.js";

/** Answers an upgrade it does not take with a plain HTTP answer (a JSON Status) and closes the socket. */
export function refuseUpgrade(
  socket: Duplex,
  http: number,
  code: number,
  message: string,
  extra: Record<string, string> = {},
): void {
  const body = JSON.stringify({ code, message, details: [] });
  const lines = [
    `HTTP/1.1 ${http} ${http < 400 ? "Redirect" : "Refused"}`,
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(body)}`,
    "connection: close",
  ];
  for (const [name, value] of Object.entries(extra)) lines.push(`${name}: ${value}`);
  socket.end(`${lines.join("\r\n")}\r\n\r\n${body}`);
}

export async function forwardPortUpgrade(
  deps: PortProxyDeps,
  connections: PortConnections,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const { lifecycle } = deps;
  const admission = await admit(deps, req, true);
  if ("refuse" in admission) return refuseUpgrade(socket, ...admission.refuse);
  if ("elsewhere" in admission) {
    if (forwardUpgrade(req, socket, head, admission.elsewhere)) return;
    return refuseUpgrade(socket, 503, 14, "the sandbox moved between replicas; retry shortly");
  }
  if ("redirect" in admission)
    return refuseUpgrade(socket, admission.redirect.status, 5, "", admission.redirect.headers);
  const go = admission.go;
  const { state, finish: end } = connections.forwarded(go, () => socket.destroy());
  const finish = () => {
    end();
    socket.destroy();
  };
  socket.once("close", finish);
  socket.on("error", finish);
  let tunnel: Duplex;
  try {
    tunnel = state.tunnel = await go.agent.openTunnel(go.port);
  } catch {
    if (!state.finished)
      refuseUpgrade(socket, 502, 14, `nothing accepts connections on port ${go.port} in the sandbox`);
    finish();
    return;
  }
  if (state.finished) {
    tunnel.destroy();
    return;
  }
  const remaining = go.query.toString();
  const lines = [`${req.method ?? "GET"} ${go.rest}${remaining ? `?${remaining}` : ""} HTTP/1.1`];
  for (const [name, value] of Object.entries(forwardHeaders(req, go, true))) {
    for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${String(v)}`);
  }
  tunnel.write(`${lines.join("\r\n")}\r\n\r\n`);
  if (head.length > 0) tunnel.write(head);
  tunnel.on("data", () => lifecycle.touch(go.uid));
  socket.on("data", () => lifecycle.touch(go.uid));
  tunnel.on("error", finish);
  tunnel.once("close", finish);
  pipeUserUpgradeAnswer(tunnel, socket);
  socket.pipe(tunnel);
}
