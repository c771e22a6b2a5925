// Engine URLs through the edge: `/engines/<uid>/...` is forwarded to the engine's own web server
// (the DAI or H2O login page and API, Jupyter), WebSockets included. The caller authenticates
// with `Authorization: Bearer`, or once with `?token=` in the URL, which is traded for a session
// (proxy-session.ts), and must be allowed to open the engine (proxy-access.ts). The Authorization
// header and our cookies never reach the engine, and its cookies stay on its own origin
// (proxy-headers.ts). Traffic counts as activity on the engine.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { Code } from "@aiem/kit/errors";
import type { Logger } from "@aiem/kit/logger";
import { forwardHttp, forwardUpgrade } from "@aiem/kit/server";
import type { ActivityTracker } from "./activity.js";
import type { AnyRequest, AnyResponse, EngineHttpRoute } from "./engine-http-route.js";
import { type Admitted, type ProxiedEngine, type ProxyAccessOptions, admit } from "./proxy-access.js";
import { ProxyError, answerError, answerUpgradeError } from "./proxy-error.js";
import { type Endpoint, forwardToEngine, spliceToEngine } from "./proxy-forward.js";
import { startSession } from "./proxy-session.js";
import { ENGINE_PATH_PREFIX, type EngineTarget, parseTarget } from "./proxy-target.js";
import type { EngineRuntime } from "./runtime/runtime.js";

export type { EngineHttpRoute } from "./engine-http-route.js";
export { createNameRoute } from "./name-route.js";
export { ENGINE_ORIGIN_HEADER, ENGINE_PATH_PREFIX } from "./proxy-target.js";

export interface EngineProxyOptions extends ProxyAccessOptions {
  readonly logger: Logger;
  readonly runtime: () => EngineRuntime | undefined;
  readonly activity: ActivityTracker;
  /** The URL of the replica running the engine when it is not this one (see ServiceContext.servedAt). */
  readonly servedAt?: (row: { name: string; placement: string | null }) => Promise<string | undefined>;
}

export function createEngineProxy(options: EngineProxyOptions): EngineHttpRoute {
  /** The replica that runs the engine, when it is not this one. */
  async function ownerOf(row: ProxiedEngine): Promise<string | undefined> {
    return options.servedAt?.(row).catch((err: unknown) => {
      throw new ProxyError(503, Code.Unavailable, err instanceof Error ? err.message : String(err));
    });
  }

  async function endpointOf(uid: string): Promise<Endpoint> {
    const endpoint = await options.runtime()?.endpoint(uid);
    if (!endpoint) throw new ProxyError(503, Code.Unavailable, "the engine is not reachable yet; retry shortly");
    return endpoint;
  }

  async function serveHere(req: AnyRequest, res: AnyResponse, target: EngineTarget, admitted: Admitted) {
    const { principal, queryToken, row } = admitted;
    if (queryToken !== undefined) {
      const sessionKey = await options.sessionKey();
      const start = { sessionKey, principal, queryToken, uid: row.uid, forwardPath: target.forwardPath };
      if (startSession(req, res, start)) return;
    }
    const endpoint = await endpointOf(row.uid);
    options.activity.touch(row.uid);
    await forwardToEngine(req, res, endpoint, target.forwardPath, (err) => answerError(res, err, options.logger));
  }

  async function handle(req: AnyRequest, res: AnyResponse): Promise<void> {
    const target = parseTarget(req.url ?? "/");
    if (!target)
      throw new ProxyError(404, Code.NotFound, "no engine at this path; engine URLs look like /engines/<uid>/");
    if (target.needsSlash) {
      res.writeHead(301, { location: target.forwardPath.replace(/^(\/engines\/[^/?]+)/, "$1/") });
      res.end();
      return;
    }
    const admitted = await admit(options, req, target);
    const owner = await ownerOf(admitted.row);
    // The engine runs on another replica's host: the request goes there as it came, token included.
    if (owner && forwardHttp(req, res, owner)) return;
    if (owner)
      throw new ProxyError(503, Code.Unavailable, `${admitted.row.name} is served by another replica; retry shortly`);
    await serveHere(req, res, target, admitted);
  }

  async function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const target = parseTarget(req.url ?? "/");
    if (!target) throw new ProxyError(404, Code.NotFound, "no engine at this path");
    const { row } = await admit(options, req, target);
    const owner = await ownerOf(row);
    if (owner) {
      if (forwardUpgrade(req, socket, head, owner)) return;
      throw new ProxyError(503, Code.Unavailable, "the engine moved between replicas; retry shortly");
    }
    const endpoint = await endpointOf(row.uid);
    options.activity.touch(row.uid);
    spliceToEngine(req, socket, head, endpoint, target.forwardPath, () => options.activity.touch(row.uid));
  }

  return {
    prefix: ENGINE_PATH_PREFIX,
    handler(req, res) {
      handle(req, res).catch((err: unknown) => answerError(res, err, options.logger));
    },
    upgrade(req, socket, head) {
      handleUpgrade(req, socket, head).catch((err: unknown) => answerUpgradeError(socket, err));
    },
  };
}
