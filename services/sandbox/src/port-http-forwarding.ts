// A plain HTTP request to a sandbox's port, sent to the program over a tunnel the agent opens.
import { request as httpRequest } from "node:http";
import type { Duplex } from "node:stream";
import { forwardHttp, type HttpHandler } from "@aiem/kit/server";
import { admit } from "./port-admission.js";
import type { PortConnections } from "./port-connections.js";
import { answerHeaders, forwardHeaders } from "./port-forward-headers.js";
import type { PortProxyDeps } from "./port-proxy.js";

type NodeRequest = Parameters<HttpHandler>[0];
type NodeResponse = Parameters<HttpHandler>[1];

/** Answers with the REST API's JSON Status (or cuts an answer already under way). */
export function sendStatus(
  res: NodeResponse,
  http: number,
  code: number,
  message: string,
  extra: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(http, { "content-type": "application/json", ...extra });
  res.end(JSON.stringify({ code, message, details: [] }));
}

export async function forwardPortRequest(
  deps: PortProxyDeps,
  connections: PortConnections,
  req: NodeRequest,
  res: NodeResponse,
): Promise<void> {
  const { lifecycle } = deps;
  const admission = await admit(deps, req, false);
  if ("refuse" in admission) return sendStatus(res, ...admission.refuse);
  if ("elsewhere" in admission) {
    if (forwardHttp(req, res, admission.elsewhere)) return;
    return sendStatus(res, 503, 14, "the sandbox moved between replicas; retry shortly");
  }
  if ("redirect" in admission) {
    res.writeHead(admission.redirect.status, admission.redirect.headers);
    res.end();
    return;
  }
  const go = admission.go;
  const { uid, port, prefix, rest, query, agent } = go;
  const { state, finish } = connections.forwarded(go, () => {
    if (!res.writableEnded) (res as { destroy?: () => void }).destroy?.();
  });
  res.once("close", finish);
  let tunnel: Duplex;
  try {
    tunnel = state.tunnel = await agent.openTunnel(port);
  } catch {
    finish();
    return sendStatus(res, 502, 14, `nothing accepts connections on port ${port} in the sandbox`);
  }
  if (state.finished) {
    tunnel.destroy();
    return;
  }
  tunnel.on("data", () => lifecycle.touch(uid));
  tunnel.on("error", () => undefined);

  const remaining = query.toString();
  const upstream = httpRequest(
    {
      // node:http takes any Duplex as the connection; its type asks for a net.Socket.
      createConnection: () => tunnel as never,
      method: req.method,
      path: `${rest}${remaining ? `?${remaining}` : ""}`,
      headers: forwardHeaders(req, go, false),
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answerHeaders(answer.headers, prefix));
      answer.on("data", () => lifecycle.touch(uid));
      answer.pipe(res as unknown as NodeJS.WritableStream);
      answer.once("error", () => (res as { destroy?: () => void }).destroy?.());
    },
  );
  upstream.on("error", () => {
    sendStatus(res, 502, 14, `the program on port ${port} closed the connection`);
    finish();
  });
  res.once("close", () => upstream.destroy());
  (req as unknown as NodeJS.ReadableStream).pipe(upstream);
}
