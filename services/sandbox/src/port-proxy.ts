// Serves a sandbox's ports through the edge, under `/sandboxes/{uid}/ports/{port}/...` (the
// port's internal URL: the sandbox creator's token is required) and `/sandboxes/{uid}/public/
// {port}/...` (its public URL, open to anyone while the port is public). Each request is sent
// over a tunnel that the sandbox's agent opens to the port on the sandbox's own loopback, so
// sandboxes never take host ports and never collide.
//
// A browser cannot add a bearer header to a link: `?token=<token>` on the internal URL is
// checked and traded for a session of that port's origin (or path) in an HttpOnly cookie, never
// the token itself, and the browser is sent to the same URL without the token. The token, our
// cookies and the Authorization header are removed before the request reaches the program in the
// sandbox, on public ports too; the program's cookies stay on its own origin (see
// user-content.ts in the kit).
//
// At a port's own origin (`{port}-{uid}.sandboxes.<base>`, see the edge's content-origins.ts) the
// edge rewrites the request to the path above and sets CONTENT_ORIGIN_HEADER: the port's paths
// are then the program's own, with no prefix in redirects, and the session cookie is the
// origin's `__Host-` one. WebSockets take the same way (`upgrade`).
import type { Authenticator } from "@aiem/kit/identity";
import type { Logger } from "@aiem/kit/logger";
import type { HttpRoute } from "@aiem/kit/server";
import type { Lifecycle } from "./lifecycle.js";
import { createPortConnections } from "./port-connections.js";
import { forwardPortRequest, sendStatus } from "./port-http-forwarding.js";
import { forwardPortUpgrade, refuseUpgrade } from "./port-upgrade-forwarding.js";
import type { ServiceContext } from "./service-context.js";

export { CONTENT_ORIGIN_HEADER } from "./port-admission.js";

export interface PortProxyDeps {
  readonly context: ServiceContext;
  readonly lifecycle: Lifecycle;
  readonly authenticator: Authenticator;
  readonly logger: Logger;
  /** Seals and opens the sessions of port origins (content-session.ts in the kit's config). */
  readonly sessionKey: () => Promise<Uint8Array>;
}

export interface PortProxy {
  readonly route: HttpRoute;
  /** Cuts the forwarded connections of a port (only those through its public URL, if asked). */
  closeConnections(sandboxUid: string, port: number, onlyPublic: boolean): void;
}

export function createPortProxy(deps: PortProxyDeps): PortProxy {
  const connections = createPortConnections(deps.lifecycle);
  return {
    route: {
      prefix: "/sandboxes/",
      upgrade: (req, socket, head) => {
        forwardPortUpgrade(deps, connections, req, socket, head).catch((err: unknown) => {
          deps.logger.error("forwarding an upgrade to a sandbox port failed", {
            error: err instanceof Error ? err.message : String(err),
          });
          refuseUpgrade(socket, 500, 13, "internal error");
        });
      },
      handler: (req, res) => {
        forwardPortRequest(deps, connections, req, res).catch((err: unknown) => {
          deps.logger.error("forwarding to a sandbox port failed", {
            error: err instanceof Error ? err.message : String(err),
          });
          sendStatus(res, 500, 13, "internal error");
        });
      },
    },
    closeConnections: connections.closeConnections,
  };
}
