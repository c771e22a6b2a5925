// How the engine proxy refuses a request: a ProxyError carries the HTTP status and the Connect
// code of its JSON answer; anything else thrown is the engine not answering (502).
import type { Duplex } from "node:stream";
import { Code } from "@aiem/kit/errors";
import type { Logger } from "@aiem/kit/logger";
import type { AnyResponse } from "./engine-http-route.js";

export class ProxyError extends Error {
  constructor(
    readonly status: number,
    readonly code: Code,
    message: string,
  ) {
    super(message);
    this.name = "ProxyError";
  }
}

function asProxyError(err: unknown): ProxyError {
  return err instanceof ProxyError ? err : new ProxyError(502, Code.Unavailable, "the engine did not answer");
}

function bodyOf(e: ProxyError): string {
  return JSON.stringify({ code: e.code, message: e.message, details: [] });
}

/** Answers `err` on `res`, or cuts the response when the engine's answer had begun. */
export function answerError(res: AnyResponse, err: unknown, logger: Logger): void {
  const e = asProxyError(err);
  if (!(err instanceof ProxyError))
    logger.warn("engine proxy failed", { error: err instanceof Error ? err.message : String(err) });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = bodyOf(e);
  res.writeHead(e.status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/** Answers `err` on an upgrade's socket, in HTTP/1.1, and closes it. */
export function answerUpgradeError(socket: Duplex, err: unknown): void {
  const e = asProxyError(err);
  const body = bodyOf(e);
  socket.end(
    `HTTP/1.1 ${e.status} ${e.status === 401 ? "Unauthorized" : "Error"}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
