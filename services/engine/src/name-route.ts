// The engine proxy's second route: DAI and H2O engines by name (docs/adr/0210).
import { Code } from "@aiem/kit/errors";
import type { AnyRequest, EngineHttpRoute } from "./engine-http-route.js";
import { ENGINE_PATH_PREFIX } from "./proxy-target.js";

/** DAI and H2O engines by name: their `api_url` and `login_url`, and the context path of `h2o.connect`. */
export const NAME_PATH_PREFIX = "/workspaces/";
/** Stands in for an unknown name, so that it is refused exactly like an engine the caller may not see. */
const NO_ENGINE_UID = "00000000-0000-0000-0000-000000000000";

/**
 * DAI and H2O engines a second time at `/workspaces/<ws>/{daiEngines,h2oEngines}/<id>/...`, the
 * path of their `api_url` and `login_url` and the context path that the official client's
 * `get_connection_config()` hands to `h2o.connect`. The path is rewritten to the engine's
 * `/engines/<uid>/...` (where the engine runs with that context path) and handled by `route`, so
 * authentication, access checks and activity are the same. Neither H2O-3's REST answers nor
 * Driverless AI's carry absolute paths, so the rewrite is enough for their client libraries.
 */
export function createNameRoute(
  route: EngineHttpRoute,
  lookupUid: (name: string) => Promise<string | undefined>,
): EngineHttpRoute {
  const rewrite = async (req: AnyRequest): Promise<void> => {
    const url = req.url ?? "/";
    const match = /^\/(workspaces\/[^/?]+\/(?:daiEngines|h2oEngines)\/[^/?]+)(\/[^?]*)?(\?.*)?$/.exec(url);
    const uid = (match && (await lookupUid(match[1]!))) ?? NO_ENGINE_UID;
    req.url = `${ENGINE_PATH_PREFIX}${uid}${match?.[2] ?? ""}${match?.[3] ?? ""}`;
  };
  return {
    prefix: NAME_PATH_PREFIX,
    handler(req, res) {
      rewrite(req).then(
        () => route.handler(req, res),
        () => {
          res.writeHead(503, { "content-type": "application/json" });
          res.end(JSON.stringify({ code: Code.Unavailable, message: "the engine service is not ready", details: [] }));
        },
      );
    },
    upgrade(req, socket, head) {
      rewrite(req).then(
        () => route.upgrade(req, socket, head),
        () => socket.destroy(),
      );
    },
  };
}
