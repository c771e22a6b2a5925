// The storage half of every service's start(): its page-token key, its schema migrated, and the
// outbox relay that publishes what its transactions enqueue.
import { sql, type Migration } from "kysely";
import { createPageTokenCodec, type PageTokenCodec } from "../aip/page-token.js";
import { loadSecretKey } from "../config/secret-key.js";
import { migrateToLatest, type Database } from "../db/database.js";
import { createOutboxRelay, outboxBacklog, type OutboxRelay } from "../events/outbox.js";
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
  deps: Pick<ServiceDeps, "config" | "bus" | "openDatabase" | "metrics">;
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
  // What waits in the outbox: a relay that cannot publish (NATS away) shows as a growing age.
  const removeGauges = [
    deps.metrics?.gauge({
      name: "aiem_outbox_pending",
      help: "Events written to a service's outbox and not yet published",
      labelNames: ["schema"] as const,
      async collect(set) {
        set({ schema: options.schema }, await outboxBacklog(database));
      },
    }),
    deps.metrics?.gauge({
      name: "aiem_outbox_oldest_age_seconds",
      help: "Age of the oldest event in a service's outbox not yet published (0 when none waits)",
      labelNames: ["schema"] as const,
      async collect(set) {
        const r = await sql<{ age: number | string | null }>`
          select extract(epoch from (now() - min(created_at))) as age
            from outbox where published_at is null and failed_at is null`.execute(database.db);
        set({ schema: options.schema }, Number(r.rows[0]?.age ?? 0));
      },
    }),
  ];
  return {
    database,
    tokens: createPageTokenCodec({ key: pageKey }),
    relay,
    async close() {
      for (const remove of removeGauges) remove?.();
      await relay.stop();
      await database.destroy();
    },
  };
}
