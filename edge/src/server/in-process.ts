// Wiring for services that run in the edge's own process (the all-in-one launcher, tests,
// benchmarks): their routes go on the edge router as they are, and the transcoder calls their
// implementations directly through an in-process transport over the same routes.
import type { DescService, Registry } from "@bufbuild/protobuf";
import { createConnectRouter, type Transport } from "@connectrpc/connect";
import type { TranscodedService } from "../transcoder/transcoder.js";
import type { Routes } from "./edge-handler.js";
import { createInProcessTransport } from "./in-process-transport.js";

export interface InProcessServices {
  readonly routes: Routes;
  readonly services: readonly TranscodedService[];
  readonly transport: Transport;
}

/**
 * Every service that `routes` registers, bound to one in-memory transport. With a registry,
 * each service's descriptor is taken from it (the image carries the comments and options).
 */
export function createInProcessServices(routes: Routes, registry?: Registry): InProcessServices {
  const probe = createConnectRouter();
  routes(probe);
  const byName = new Map<string, DescService>();
  for (const h of probe.handlers) {
    if (!byName.has(h.service.typeName))
      byName.set(h.service.typeName, registry?.getService(h.service.typeName) ?? h.service);
  }
  const transport = createInProcessTransport(routes);
  return { routes, transport, services: [...byName.values()].map((service) => ({ service, transport })) };
}
