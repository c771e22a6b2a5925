import type { NodeRequest, NodeResponse } from "../transcoder/transcoder.js";

/** Answers with a JSON body (headers only for HEAD). */
export function replyJson(
  req: NodeRequest,
  res: NodeResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(text)),
    ...headers,
  });
  if (req.method === "HEAD") res.end();
  else res.end(text);
}

/** The request path without its query. */
export function pathOf(req: NodeRequest): string {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  return q < 0 ? url : url.slice(0, q);
}

export function isRead(req: NodeRequest): boolean {
  return req.method === "GET" || req.method === "HEAD";
}

/** Answers 405 to a method other than GET or HEAD on a read-only path (code 12: UNIMPLEMENTED). */
export function replyReadOnly(req: NodeRequest, res: NodeResponse, path: string): void {
  const message = `${req.method} is not allowed on ${path}; use GET`;
  replyJson(req, res, 405, { code: 12, message, details: [] }, { allow: "GET, HEAD" });
}
