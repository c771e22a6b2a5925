import type { DescService } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import type { Policy } from "../authz/policy.js";
import type { CommonConfig } from "../config/common.js";
import type { Database } from "../db/database.js";
import type { EventBus } from "../events/event-bus.js";
import type { Logger } from "../logger.js";

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
}

/** What a host hands every module. */
export interface ServiceDeps {
  readonly config: CommonConfig;
  readonly bus: EventBus;
  readonly policy: Policy;
  readonly logger: Logger;
  /**
   * Opens the module's database in a schema of its own, named after `schema` (the host may
   * add a suffix so that several deployments or test suites share one PostgreSQL).
   */
  openDatabase(schema: string): Promise<Database>;
}
