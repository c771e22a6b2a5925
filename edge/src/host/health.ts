import type { NodeHandler, NodeRequest, NodeResponse } from "../transcoder/transcoder.js";

export interface HealthCheck {
  readonly name: string;
  /** Resolves true when this part can serve; false or a rejection means not ready. */
  check(): Promise<boolean> | boolean;
}

/**
 * `GET /healthz` (the process is alive) and `GET /readyz` (every check passes), both without
 * a token, as load balancers and orchestrators call them. Other paths go to `next`.
 */
export function createHealthHandler(checks: readonly HealthCheck[], next: NodeHandler): NodeHandler {
  return (req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path === "/healthz" && isRead(req)) return reply(res, 200, { status: "ok" });
    if (path === "/readyz" && isRead(req)) {
      void Promise.all(
        checks.map(async (c) => [c.name, await Promise.resolve(c.check()).catch(() => false)] as const),
      ).then((results) => {
        const failing = results.filter(([, ok]) => !ok).map(([name]) => name);
        reply(
          res,
          failing.length === 0 ? 200 : 503,
          failing.length === 0 ? { status: "ready" } : { status: "not ready", failing },
        );
      });
      return;
    }
    next(req, res);
  };
}

function isRead(req: NodeRequest): boolean {
  return req.method === "GET" || req.method === "HEAD";
}

function reply(res: NodeResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(text);
}
