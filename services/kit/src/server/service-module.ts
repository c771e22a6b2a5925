import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { Duplex } from "node:stream";
import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import type { Policy } from "../authz/policy.js";
import type { CommonConfig } from "../config/common.js";
import type { Database } from "../db/database.js";
import type { EventBus } from "../events/event-bus.js";
import type { Authenticator } from "../identity/authenticator.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../observability/metrics.js";

/** A node:http / node:http2 request handler (the host passes either). */
export type HttpHandler = (
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
) => void;

/**
 * Plain HTTP served by a module beside its RPCs, under a path prefix such as `/engines/`
 * (an engine's own web UI through the edge). The module authenticates these requests itself.
 */
export interface HttpRoute {
  readonly prefix: string;
  readonly handler: HttpHandler;
  /** Takes over an HTTP/1.1 `Upgrade` request under the prefix (WebSockets to a notebook). */
  readonly upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Takes Upgrade requests only: plain HTTP under the prefix goes on to the next route. */
  readonly upgradeOnly?: boolean;
}

/**
 * What the catalogue, engine and sandbox services share with whoever hosts them: the
 * all-in-one launcher (every module in one process behind the edge) or a process of its own.
 * The host owns the network, authentication (createAuthInterceptor) and the shared event bus;
 * a module owns its database schema, its handlers and its background work.
 */
export interface ServiceModule {
  readonly name: string;
  /** The public services this module implements (for routing, reflection and the docs). */
  readonly services: readonly DescService[];
  /** Registers the handlers. The host adds the interceptors. */
  register(router: ConnectRouter): void;
  /** Migrates, starts background work (relays, reconcilers, read models). */
  start(): Promise<void>;
  /** Stops background work and closes the database; in-flight calls have drained. */
  stop(): Promise<void>;
  /** True once started and able to answer (database migrated, read models caught up). */
  isReady(): boolean;
  /** Plain HTTP routes beside the RPCs; the host mounts them (and proxies them when remote). */
  readonly httpRoutes?: readonly HttpRoute[];
}

/** What a host hands every module. */
export interface ServiceDeps {
  readonly config: CommonConfig;
  readonly bus: EventBus;
  readonly policy: Policy;
  readonly logger: Logger;
  /** Verifies bearer tokens, for httpRoutes (RPCs are authenticated by the host). */
  readonly authenticator: Authenticator;
  /**
   * Opens the module's database in a schema of its own, named after `schema` (the host may
   * add a suffix so that several deployments or test suites share one PostgreSQL).
   */
  openDatabase(schema: string): Promise<Database>;
  /** The process's metrics, when it serves them: a module adds its gauges here. */
  readonly metrics?: Metrics;
}
