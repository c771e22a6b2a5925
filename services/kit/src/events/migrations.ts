import type { Migration } from "kysely";
import { processedEventsMigration } from "./idempotency.js";
import { outboxMigration } from "./outbox.js";

/**
 * Both event tables, named to sort before a service's own migrations (`0001_...`). Kysely's
 * migrator refuses a new migration that sorts before one already applied, so a service that
 * adopts these later, or picks only one, should instead register `outboxMigration` /
 * `processedEventsMigration` under names from its own sequence.
 */
export const eventMigrations: Record<string, Migration> = {
  "0000_kit_events_01_outbox": outboxMigration,
  "0000_kit_events_02_processed_events": processedEventsMigration,
};
