// Replicas of one service that run work on their own host (engine processes, sandbox agents) pin
// that work to themselves; the others must know where to send calls for it and whether its owner
// is alive. Each replica keeps a row in its service's `replicas` table: its id (the placement its
// work is pinned to), the URL its API answers at, and a lease it renews. A row whose lease ran out
// is a replica that died (or stopped); it is the same replica again when it comes back with the
// same id (same host and data directory), and finds its work where it left it.
import { sql, type Kysely, type Migration } from "kysely";
import type { AnyDatabase } from "../db/index.js";
import type { Database } from "../db/database.js";
import type { Logger } from "../logger.js";

export const REPLICAS_TABLE = "replicas";

/** Creates `replicas`; add it to the service's migrations under a name of its own sequence. */
export const replicasMigration: Migration = {
  async up(db: Kysely<AnyDatabase>) {
    await sql`
      create table replicas (
        id text collate "C" primary key,
        url text not null,
        lease_until timestamptz not null
      )`.execute(db);
  },
  async down(db: Kysely<AnyDatabase>) {
    await db.schema.dropTable(REPLICAS_TABLE).execute();
  },
};

export interface ReplicaRegistryOptions {
  readonly database: () => Database | undefined;
  /** This replica's id: the placement its work is pinned to. */
  readonly id: string;
  /** Where other replicas reach this one's API; read at each renewal (known once listening). */
  readonly url: () => string | undefined;
  /** How long a renewal keeps the replica alive (ms). Default 10 000. */
  readonly leaseMs?: number;
  readonly logger: Logger;
}

export interface ReplicaRegistry {
  readonly id: string;
  /** Records this replica now and renews it until stop(). */
  start(): Promise<void>;
  /** Ends the lease at once, so the others answer for this replica's work as down, not slow. */
  stop(): Promise<void>;
  /** The URL of a live replica, or undefined when its lease ran out (or it never registered). */
  urlOf(id: string): Promise<string | undefined>;
}

export function createReplicaRegistry(options: ReplicaRegistryOptions): ReplicaRegistry {
  const leaseMs = options.leaseMs ?? 10_000;
  let timer: NodeJS.Timeout | undefined;
  let renewing: Promise<void> | undefined;

  async function renew(): Promise<void> {
    const database = options.database();
    const url = options.url();
    if (!database || !url) return;
    await sql`
      insert into replicas (id, url, lease_until)
      values (${options.id}, ${url}, now() + make_interval(secs => ${leaseMs / 1000}))
      on conflict (id) do update set url = excluded.url, lease_until = excluded.lease_until`.execute(database.db);
  }

  function schedule(): void {
    // A third of the lease: two renewals may fail (a database restart) before the others see it gone.
    timer = setTimeout(() => {
      renewing = renew()
        .catch((err: unknown) =>
          options.logger.warn("could not renew this replica's lease", {
            error: err instanceof Error ? err.message : String(err),
          }),
        )
        .finally(() => {
          renewing = undefined;
          if (timer) schedule();
        });
    }, leaseMs / 3);
    timer.unref();
  }

  return {
    id: options.id,
    async start() {
      await renew();
      schedule();
    },
    async stop() {
      clearTimeout(timer);
      timer = undefined;
      await renewing;
      const database = options.database();
      if (!database) return;
      await sql`update replicas set lease_until = now() where id = ${options.id}`
        .execute(database.db)
        .catch(() => undefined);
    },
    async urlOf(id) {
      const database = options.database();
      if (!database) return undefined;
      const r = await sql<{ url: string }>`select url from replicas where id = ${id} and lease_until > now()`.execute(
        database.db,
      );
      return r.rows[0]?.url;
    },
  };
}
