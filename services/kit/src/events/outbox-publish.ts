// Publishing a claimed batch: in order, stopping at the first failure of the bus, and recording
// each row's outcome (published, set aside as unpublishable, or handed back with its error).
import { sql } from "kysely";
import type { Database } from "../db/database.js";
import { InvalidEventError, errorFields, type EventBus, type EventBusLogger } from "./event-bus.js";
import type { ClaimedRow } from "./outbox-claim.js";

export interface PublishClaimedOptions {
  readonly database: Database;
  readonly bus: Pick<EventBus, "publish">;
  readonly logger: EventBusLogger;
  /** The relay holding the claim. */
  readonly owner: string;
}

/** Publishes `rows` (claimed, in `seq` order). Returns how many were published; throws when the bus fails. */
export async function publishClaimed(options: PublishClaimedOptions, rows: readonly ClaimedRow[]): Promise<number> {
  const { database, bus, logger, owner } = options;
  const published: string[] = [];
  const invalid: Array<{ id: string; error: string }> = [];
  let failure: unknown;
  for (const row of rows) {
    try {
      const headers =
        typeof row.headers === "string" ? (JSON.parse(row.headers) as Record<string, string>) : row.headers;
      await bus.publish(row.subject, row.payload, { id: row.id, headers, tombstone: row.tombstone });
      published.push(row.id);
    } catch (err) {
      if (err instanceof InvalidEventError) {
        // Can never be published: set aside (kept for inspection) instead of blocking the outbox.
        logger.error("outbox event cannot be published; marked failed", {
          id: row.id,
          subject: row.subject,
          ...errorFields(err),
        });
        invalid.push({ id: row.id, error: err.message });
        continue;
      }
      failure = err;
      break;
    }
  }
  if (published.length > 0) {
    await sql`update outbox set published_at = now(), locked_until = null, locked_by = null, last_error = null where id in (${sql.join(published)})`.execute(
      database.db,
    );
  }
  for (const { id, error } of invalid) {
    await sql`update outbox set failed_at = now(), locked_until = null, locked_by = null, last_error = ${error} where id = ${id}`.execute(
      database.db,
    );
  }
  const done = new Set([...published, ...invalid.map((r) => r.id)]);
  const left = rows.filter((r) => !done.has(r.id)).map((r) => r.id);
  if (left.length > 0) {
    const message = failure instanceof Error ? failure.message : String(failure);
    await sql`update outbox set locked_until = null, locked_by = null, last_error = ${message} where locked_by = ${owner} and id in (${sql.join(left)})`.execute(
      database.db,
    );
  }
  if (failure !== undefined) throw failure;
  return published.length;
}
