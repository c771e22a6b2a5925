// The edge's request handler: CORS first, then Connect / gRPC / gRPC-Web for every service
// (by their `/package.Service/Method` paths), gRPC server reflection, and everything else to the
// REST transcoder.
import type { DescService, FileRegistry } from "@bufbuild/protobuf";
import { createConnectRouter, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { EdgeLogger } from "../logger.js";
import { registerReflection } from "../reflection/reflection.js";
import {
  createTranscoder,
  DEFAULT_BODY_LIMIT_BYTES,
  type NodeHandler,
  type RestRoute,
  type TranscodedService,
} from "../transcoder/transcoder.js";
import { createCors, type CorsOptions } from "./cors.js";
import { registerForwardingService } from "./forwarding.js";

export type Routes = (router: ConnectRouter) => void;

export interface EdgeHandlerOptions {
  /** The descriptor image (with imports); used for Any in JSON and for reflection. */
  readonly registry: FileRegistry;
  /**
   * Every service the edge exposes and the transport that reaches it. REST calls always go
   * through the transport; Connect / gRPC / gRPC-Web calls do too, unless `routes` serves the
   * service in this process.
   */
  readonly services: readonly TranscodedService[];
  /** In-process implementations, mounted on the edge router as they are (no extra hop). */
  readonly routes?: Routes;
  /** Run around every call in every protocol (REST included). */
  readonly interceptors?: readonly Interceptor[];
  readonly cors?: CorsOptions;
  /** Largest request body in any protocol; REST answers 413 past it. Default 4 MiB. */
  readonly bodyLimitBytes?: number;
  readonly logger?: EdgeLogger;
  /** Serve gRPC server reflection. Default true. */
  readonly reflection?: boolean;
  /** Serves paths that are neither RPCs nor REST routes (docs, health); default a 404 Status. */
  readonly fallback?: NodeHandler;
  /** Checks a REST caller's credentials before saying what is wrong with its request. */
  readonly checkCredentials?: (header: Headers) => Promise<void>;
}

export interface EdgeHandler extends NodeHandler {
  /** Every REST route the transcoder serves. */
  readonly restRoutes: readonly RestRoute[];
  /** Fully-qualified names of the services on the Connect / gRPC / gRPC-Web side. */
  readonly serviceNames: readonly string[];
}

/** `/package.Service/Method`: the calls of Connect, gRPC and gRPC-Web (REST paths start with /v1/). */
const RPC_PATH = /^\/[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+\/[A-Za-z_]\w*(?:\?|$)/;

// The headers by which a client offers to take a compressed response. The edge answers
// uncompressed whatever is offered (compressed requests are still accepted): gzip runs at a few
// tens of MB/s per core here, far below any link the API is used over, and the large responses
// (file contents, process output) are mostly incompressible or already compressed. A 64 MiB
// ReadFile took 4-5 times as long gzipped (docs/adr/0040-edge-http2-windows-and-no-compression.md).
const RESPONSE_COMPRESSION_HEADERS = ["accept-encoding", "connect-accept-encoding", "grpc-accept-encoding"] as const;

export function createEdgeHandler(options: EdgeHandlerOptions): EdgeHandler {
  const bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const transcoder = createTranscoder({
    services: options.services,
    registry: options.registry,
    interceptors: options.interceptors,
    bodyLimitBytes: bodyLimit,
    logger: options.logger,
    fallback: options.fallback,
    checkCredentials: options.checkCredentials,
  });

  const inProcess = new Set<string>();
  if (options.routes) {
    const probe = createConnectRouter();
    options.routes(probe);
    for (const h of probe.handlers) inProcess.add(h.service.typeName);
  }
  const served = new Map<string, DescService>();
  for (const s of options.services) served.set(s.service.typeName, s.service);
  const serviceNames = [...new Set([...inProcess, ...served.keys()])].sort();

  const connect = connectNodeAdapter({
    routes(router) {
      options.routes?.(router);
      for (const { service, transport } of options.services) {
        if (!inProcess.has(service.typeName)) registerForwardingService(router, service, transport);
      }
      if (options.reflection !== false) {
        registerReflection(router, { registry: options.registry, serviceNames: () => serviceNames });
      }
    },
    fallback: transcoder.handle,
    interceptors: options.interceptors ? [...options.interceptors] : undefined,
    readMaxBytes: bodyLimit,
  });

  const cors = createCors(options.cors);
  const handle: NodeHandler = (req, res) => {
    if (cors.handle(req, res)) return;
    if (RPC_PATH.test(req.url ?? "")) {
      for (const name of RESPONSE_COMPRESSION_HEADERS) delete req.headers[name];
    }
    connect(req, res);
  };
  return Object.assign(handle, { restRoutes: transcoder.routes, serviceNames });
}
