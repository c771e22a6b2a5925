// A host's front: the services it routes (in-process, remote, or UNIMPLEMENTED), the content
// origins when users reach it, and its listening server.
import { contentDomain, createTicketLedger, loadTicketKey } from "@aiem/kit/config";
import { createEdgeServer } from "../server/front-door.js";
import type { NodeHandler } from "../transcoder/transcoder.js";
import { createContentOriginHandler, createContentOriginUpgrade, createPathUpgrade } from "./content-origins.js";
import { createHostServices } from "./host-services.js";
import type { HostSetup, HostState } from "./host-state.js";
import { withRequestLog } from "./request-log.js";

/** Routes the host's services and listens; nothing opens when a stop came first. */
export async function serveHost(setup: HostSetup, state: HostState, notFound: NodeHandler): Promise<void> {
  const { options, config, logger } = setup;
  const services = createHostServices({
    registry: setup.registry,
    modules: state.modules,
    remotes: options.remotes ?? {},
    identity: setup.identity,
    edge: options.edge,
    metrics: setup.metrics,
    logger,
    fallback: options.fallback ?? notFound,
  });
  state.pools = services.pools;
  const { handler, httpRoutes } = services;
  const front = options.front ?? true;
  const ticketKey = front ? await loadTicketKey(config.dataDir, options.edge.internalKey) : undefined;
  const content = {
    domain: () => contentDomain(config, setup.publicUrl()),
    pathUrls: config.pathUrls ?? false,
    routes: httpRoutes,
    tickets: { key: () => ticketKey, ledger: createTicketLedger() },
  };
  if (front && content.pathUrls) {
    logger.warn(
      "AIEM_PATH_URLS is set: engine UIs and sandbox ports are also served at paths of the API's origin, where a page they serve runs with that origin's rights",
    );
  }
  if (state.stopRequested) return;
  // A part behind the edge takes the paths as they come: the edge has applied the origin rules.
  const server = createEdgeServer(
    withRequestLog(front ? createContentOriginHandler(content, handler) : handler, logger.child({ component: "edge" })),
  );
  state.server = server;
  server.http1.on("upgrade", front ? createContentOriginUpgrade(content) : createPathUpgrade(httpRoutes));
  const address = await server.listen(config.port, config.host);
  state.listeningPort = address.port;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  state.url = `http://${shownHost}:${address.port}`;
  logger.info("listening", {
    url: state.url,
    modules: state.modules.map((m) => m.name),
    remotes: options.remotes ?? {},
    ...(state.metricsServer ? { metrics: state.metricsServer.url } : {}),
  });
}
