// An engine's log as a WebSocket, as the real service streams it:
// `GET /v1/workspaces/<ws>/{daiEngines,h2oEngines}/<id>:stream_logs?follow=true`, signed in with
// `Authorization: Bearer`. While the engine does not run, a line saying its logs are not available
// yet comes every two seconds; once it runs, each log line (with its newline) is one text message,
// from the log's start, and with `follow=true` new lines follow as they are written. The stream
// ends when the engine is gone. The caller needs what downloading the logs needs.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { ConnectError } from "@connectrpc/connect";
import { Action, type Policy } from "@aiem/kit/authz";
import { Code } from "@aiem/kit/errors";
import type { Authenticator, Principal } from "@aiem/kit/identity";
import type { Logger } from "@aiem/kit/logger";
import { forwardUpgrade } from "@aiem/kit/server";
import { canManage, canSee } from "./access.js";
import { S } from "./kinds.js";
import type { EngineHttpRoute } from "./proxy.js";
import type { EngineRuntime } from "./runtime/runtime.js";
import type { EngineRow } from "./store.js";
import { acceptWebSocket, isWebSocketRequest, type TextSocket } from "./websocket.js";

export const LOG_STREAM_PREFIX = "/v1/workspaces/";
const STREAM_PATH = /^\/v1\/(workspaces\/[^/]+\/(daiEngines|h2oEngines)\/[^/:]+):stream_logs$/;

/** What a stream says while there is no log to read, as the real service words it. */
export const NOT_AVAILABLE: Readonly<Record<"daiEngines" | "h2oEngines", string>> = {
  daiEngines: "Driverless AI logs are not available yet\n",
  h2oEngines: "H2O logs are not available yet",
};
const NOT_AVAILABLE_EVERY_MS = 2_000;
const FOLLOW_EVERY_MS = 250;
const CHUNK_BYTES = 1024 * 1024;

type StreamRow = Pick<EngineRow, "uid" | "name" | "type" | "workspace" | "creator" | "shared" | "state" | "placement">;

export interface LogStreamOptions {
  readonly authenticator: Authenticator;
  readonly policy: Policy;
  readonly logger: Logger;
  readonly lookup: (name: string) => Promise<StreamRow | undefined>;
  readonly runtime: () => EngineRuntime | undefined;
  /** The URL of the replica running the engine when it is not this one. */
  readonly servedAt?: (row: StreamRow) => Promise<string | undefined>;
}

/** Why a log stream is refused before it opens: the HTTP status and Connect code it is answered with. */
class LogStreamRefusedError extends Error {
  override readonly name = "LogStreamRefusedError";
  constructor(
    readonly status: number,
    readonly code: Code,
    message: string,
  ) {
    super(message);
  }
}

function refuse(socket: Duplex, err: unknown): void {
  const e =
    err instanceof LogStreamRefusedError ? err : new LogStreamRefusedError(500, Code.Internal, "the log stream failed");
  const body = JSON.stringify({ code: e.code, message: e.message, details: [] });
  socket.end(
    `HTTP/1.1 ${e.status} ${e.status === 401 ? "Unauthorized" : "Error"}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Resolves after `ms`, or at once when the socket closes. */
function pause(ws: TextSocket, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    ws.onClose(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** The engine whose log a request asks for, once the caller is signed in and may read it. */
async function openLogStream(
  options: LogStreamOptions,
  req: IncomingMessage,
): Promise<{ row: StreamRow; follow: boolean }> {
  const { authenticator, policy } = options;
  const url = new URL(req.url ?? "/", "http://engine");
  const match = STREAM_PATH.exec(decodeURIComponent(url.pathname));
  if (!match) throw new LogStreamRefusedError(404, Code.NotFound, `no log stream at ${url.pathname}`);
  if (!isWebSocketRequest(req))
    throw new LogStreamRefusedError(400, Code.InvalidArgument, "stream_logs is a WebSocket");
  const auth = req.headers.authorization;
  if (typeof auth !== "string" || !/^bearer\s+/i.test(auth))
    throw new LogStreamRefusedError(401, Code.Unauthenticated, "sign in: send Authorization: Bearer <token>");
  let principal: Principal;
  try {
    principal = await authenticator.authenticate(auth);
  } catch (err) {
    const e = ConnectError.from(err);
    throw new LogStreamRefusedError(e.code === Code.Unavailable ? 503 : 401, e.code, e.rawMessage);
  }
  const name = match[1]!;
  const row = await options.lookup(name);
  if (!row || row.type !== match[2] || !canSee(policy, principal, row))
    throw new LogStreamRefusedError(404, Code.NotFound, `${name} not found`);
  if (!policy.allows(principal, Action.DOWNLOAD_LOGS, row.type, row.workspace) || !canManage(policy, principal, row))
    throw new LogStreamRefusedError(
      403,
      Code.PermissionDenied,
      `permission denied: ${principal.name} may not read the logs of ${name}`,
    );
  return { row, follow: url.searchParams.get("follow") === "true" };
}

/** Sends the log a line at a time, then (with `follow`) the lines written after, until the engine is gone. */
async function streamLog(options: LogStreamOptions, ws: TextSocket, first: StreamRow, follow: boolean): Promise<void> {
  const notAvailable = NOT_AVAILABLE[first.type as "daiEngines" | "h2oEngines"];
  let offset = 0;
  let partial = "";
  const decoder = new TextDecoder();
  while (!ws.closed) {
    const row = await options.lookup(first.name);
    if (!row || row.uid !== first.uid) return ws.close(1000, "the engine is gone");
    const runtime = options.runtime();
    if (row.state !== S.RUNNING && offset === 0) {
      ws.send(notAvailable);
      if (!follow) return ws.close();
      await pause(ws, NOT_AVAILABLE_EVERY_MS);
      continue;
    }
    if (!runtime) return ws.close(1011, "the engine runtime is not running");
    let data: Uint8Array;
    let size: number;
    if (runtime.logsFrom) {
      ({ data, size } = await runtime.logsFrom(row.uid, offset, CHUNK_BYTES));
      if (size < offset) {
        // The log started over: read it from its start.
        offset = 0;
        partial = "";
        continue;
      }
    } else {
      // Without reading from an offset, what `logs` holds is sent once.
      data = offset === 0 ? await runtime.logs(row.uid, CHUNK_BYTES) : new Uint8Array();
      size = offset + data.length;
    }
    offset += data.length;
    const text = partial + decoder.decode(data, { stream: true });
    const lines = text.split("\n");
    partial = lines.pop()!;
    for (const line of lines) if (!ws.send(`${line}\n`)) return;
    if (offset < size) continue;
    if (!follow) {
      if (partial !== "") ws.send(partial);
      return ws.close();
    }
    await pause(ws, FOLLOW_EVERY_MS);
  }
}

async function upgradeLogStream(
  options: LogStreamOptions,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const { row, follow } = await openLogStream(options, req);
  const owner = await options.servedAt?.(row).catch((err: unknown) => {
    throw new LogStreamRefusedError(503, Code.Unavailable, err instanceof Error ? err.message : String(err));
  });
  // The engine runs on another replica: the request goes there as it came.
  if (owner) {
    if (forwardUpgrade(req, socket, head, owner)) return;
    throw new LogStreamRefusedError(503, Code.Unavailable, `${row.name} is served by another replica; retry shortly`);
  }
  const ws = acceptWebSocket(req, socket, head);
  await streamLog(options, ws, row, follow).catch((err: unknown) => {
    options.logger.warn("engine log stream failed", {
      engine: row.name,
      error: err instanceof Error ? err.message : String(err),
    });
    ws.close(1011, "the log stream failed");
  });
}

export function createLogStreamRoute(options: LogStreamOptions): EngineHttpRoute {
  return {
    prefix: LOG_STREAM_PREFIX,
    upgradeOnly: true,
    handler(_req, res) {
      const body = JSON.stringify({ code: Code.NotFound, message: "not found", details: [] });
      res.writeHead(404, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      res.end(body);
    },
    upgrade(req, socket, head) {
      upgradeLogStream(options, req, socket, head).catch((err: unknown) => refuse(socket, err));
    },
  };
}
