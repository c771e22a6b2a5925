// The edge library: REST transcoding, the Connect / gRPC / gRPC-Web front door and gRPC server
// reflection, all on one port. Hosting services in this process:
//
//   const registry = loadImageRegistry();
//   const routes = (router: ConnectRouter) => modules.forEach((m) => m.register(router));
//   const handler = createEdgeHandler({
//     registry,
//     ...createInProcessServices(routes, registry), // { routes, services: [{ service, transport }] }
//     interceptors: [authInterceptor],
//     cors: { allowedOrigins: "*" },
//     bodyLimitBytes: 4 << 20,
//     logger,
//     fallback: docsAndHealth, // paths that are neither RPCs nor REST routes
//   });
//   const server = createEdgeServer(handler);
//   await server.listen(8080, "0.0.0.0");
//
// A service in another process is `{ service, transport: createConnectTransport(...) }` in
// `services`, without `routes`: REST and every RPC protocol are passed on through the transport.
export { createEdgeHandler, type EdgeHandler, type EdgeHandlerOptions, type Routes } from "./server/edge-handler.js";
export { createEdgeServer, type EdgeServer, type EdgeServerOptions } from "./server/front-door.js";
export { createInProcessServices, type InProcessServices } from "./server/in-process.js";
export { createInProcessTransport } from "./server/in-process-transport.js";
export { createCors, type Cors, type CorsOptions } from "./server/cors.js";
export { registerForwardingService } from "./server/forwarding.js";
export { registerReflection, reflectionServiceNames, type ReflectionOptions } from "./reflection/reflection.js";
export {
  createTranscoder,
  DEFAULT_BODY_LIMIT_BYTES,
  type NodeHandler,
  type NodeRequest,
  type NodeResponse,
  type RestRoute,
  type TranscodedService,
  type Transcoder,
  type TranscoderOptions,
} from "./transcoder/transcoder.js";
export { httpStatusOf, statusJson } from "./transcoder/status.js";
export { loadImageRegistry } from "./registry.js";
export type { EdgeLogger } from "./logger.js";
