// The storage half of every service's start(): its page-token key, its schema migrated, and the
// outbox relay that publishes what its transactions enqueue.
import type { Migration } from "kysely";
import { createPageTokenCodec, type PageTokenCodec } from "../aip/page-token.js";
import { loadSecretKey } from "../config/secret-key.js";
import { migrateToLatest, type Database } from "../db/database.js";
import { createOutboxRelay, type OutboxRelay } from "../events/outbox.js";
import type { Logger } from "../logger.js";
import type { ServiceDeps } from "./service-module.js";

export interface ServiceStore {
  readonly database: Database;
  readonly tokens: PageTokenCodec;
  /** Started; wake() it after a commit, flush() it in tests. */
  readonly relay: OutboxRelay;
  /** Stops the relay and closes the database. */
  close(): Promise<void>;
}

export async function openServiceStore(options: {
  deps: Pick<ServiceDeps, "config" | "bus" | "openDatabase">;
  schema: string;
  migrations: Record<string, Migration>;
  /** AIEM_PAGE_TOKEN_KEY's value, if set; otherwise the key kept in the data directory. */
  pageTokenKey: string | undefined;
  logger: Logger;
  outboxPollInterval?: number;
  /** More work on the migrated database before it is used (seeding); a failure closes it. */
  prepare?: (database: Database) => Promise<void>;
}): Promise<ServiceStore> {
  const { deps } = options;
  const pageKey = await loadSecretKey({
    variable: "AIEM_PAGE_TOKEN_KEY",
    value: options.pageTokenKey,
    dataDir: deps.config.dataDir,
    name: "page-token",
  });
  const database = await deps.openDatabase(options.schema);
  try {
    await migrateToLatest(database, options.migrations);
    await options.prepare?.(database);
  } catch (err) {
    await database.destroy();
    throw err;
  }
  const relay = createOutboxRelay({
    database,
    bus: deps.bus,
    logger: options.logger,
    pollInterval: options.outboxPollInterval,
  });
  relay.start();
  return {
    database,
    tokens: createPageTokenCodec({ key: pageKey }),
    relay,
    async close() {
      await relay.stop();
      await database.destroy();
    },
  };
}
