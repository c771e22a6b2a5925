import { mkdir } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { Kysely, PostgresDialect, sql, type Migration } from "kysely";
import { assertSchemaName } from "./identifiers.js";
import { acquireSharedPglite, parseInt8Array, PgliteDialect, releaseSharedPglite } from "./pglite-dialect.js";

/*
 * Decisions (also true for every service that uses this factory):
 *
 * - Dialect: `pg` when a DATABASE_URL is given, otherwise PGlite stored in <dataDir>/pglite.
 * - Schema: each Database lives in one schema and runs with `search_path` set to it, so
 *   services write plain table names, raw SQL included. On pg the pool sets it for every
 *   connection (`options: -c search_path=...`); on PGlite, where one instance per data
 *   directory is shared by all services of the process, the dialect sets it whenever a
 *   different Database takes the session (see pglite-dialect.ts).
 * - int8 (and int8[]) columns come back as JS `bigint` on both dialects, never as a lossy
 *   number nor as a string: protobuf-es int64 fields are bigint too. count(*) is int8, so
 *   it is a bigint as well; convert with Number() where a small count is expected.
 *   bigint parameters are accepted by both dialects.
 * - PGlite is one session: a transaction holds it, so every other query of the process
 *   waits until it ends. Never run a query through `database.db` from inside a transaction
 *   callback (use the transaction object): on PGlite that waits for itself forever.
 */

export interface DatabaseConfig {
  url?: string | undefined;
  dataDir: string;
  schema: string;
}

/**
 * The `DB` type of a Kysely handle whose tables the caller names at run time: the services read
 * rows through row types of their own, not through one schema type per database.
 */
// biome-ignore lint/suspicious/noExplicitAny: Kysely's spelling of a database it does not type
export type AnyDatabase = any;

export interface Database<DB = AnyDatabase> {
  readonly db: Kysely<DB>;
  readonly kind: "pg" | "pglite";
  readonly schema: string;
  destroy(): Promise<void>;
}

/** Where a database lives; `createDatabase` derives it from the config. */
export type DatabaseTarget =
  | { readonly kind: "pg"; readonly url: string }
  /** `key` is an absolute directory, or `memory://<name>` for an in-memory instance. */
  | { readonly kind: "pglite"; readonly key: string };

export interface OpenDatabaseOptions {
  readonly schema: string;
  /** Drop the schema and everything in it on destroy (test databases). */
  readonly dropSchemaOnDestroy?: boolean;
}

export async function createDatabase<DB = AnyDatabase>(cfg: DatabaseConfig): Promise<Database<DB>> {
  if (cfg.url) return openDatabase<DB>({ kind: "pg", url: cfg.url }, { schema: cfg.schema });
  const dir = path.resolve(cfg.dataDir, "pglite");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return openDatabase<DB>({ kind: "pglite", key: dir }, { schema: cfg.schema });
}

export async function openDatabase<DB = AnyDatabase>(
  target: DatabaseTarget,
  options: OpenDatabaseOptions,
): Promise<Database<DB>> {
  const { schema } = options;
  assertSchemaName(schema);
  return target.kind === "pg" ? openPostgres<DB>(target.url, options) : openPglite<DB>(target.key, options);
}

const INT8 = 20;
const INT8_ARRAY = 1016;

function getTypeParser(oid: number, format?: "text" | "binary"): (value: string) => unknown {
  if (oid === INT8) return (value) => BigInt(value);
  if (oid === INT8_ARRAY) return parseInt8Array;
  return pg.types.getTypeParser(oid, format ?? "text");
}

async function openPostgres<DB>(url: string, options: OpenDatabaseOptions): Promise<Database<DB>> {
  const { schema } = options;
  const pool = new pg.Pool({
    connectionString: url,
    options: `-c search_path=${schema}`,
    // Per pool, not pg.types.setTypeParser: the global would change every other pg user.
    types: { getTypeParser } as pg.CustomTypesConfig,
  });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on("error", () => {});
  // Nor a client checked out between two statements (a transaction awaiting other work) when the
  // server restarts: the pool listens only to idle clients, and an unheard 'error' ends the
  // process. The statement that uses it next fails, and the pool replaces it.
  pool.on("connect", (client) => client.on("error", () => {}));
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  try {
    await ensureSchema(db, schema);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  return {
    db,
    kind: "pg",
    schema,
    async destroy() {
      try {
        if (options.dropSchemaOnDestroy) await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
      } finally {
        await db.destroy();
      }
    },
  };
}

async function openPglite<DB>(key: string, options: OpenDatabaseOptions): Promise<Database<DB>> {
  const { schema } = options;
  const shared = await acquireSharedPglite(key);
  const db = new Kysely<DB>({ dialect: new PgliteDialect({ shared, schema }) });
  try {
    await ensureSchema(db, schema);
  } catch (err) {
    await db.destroy();
    await releaseSharedPglite(key, shared);
    throw err;
  }
  let destroyed = false;
  return {
    db,
    kind: "pglite",
    schema,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      try {
        if (options.dropSchemaOnDestroy) await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
      } finally {
        await db.destroy();
        await releaseSharedPglite(key, shared);
      }
    },
  };
}

const DUPLICATE_ERRORS = new Set(["23505", "42P06"]);

/** `create schema if not exists` still races between sessions; the loser sees a duplicate. */
async function ensureSchema(db: Kysely<AnyDatabase>, schema: string): Promise<void> {
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  } catch (err) {
    if (!DUPLICATE_ERRORS.has((err as { code?: string }).code ?? "")) throw err;
  }
}

/** First key of our advisory locks ("AIEM"); the second is the schema's hash. */
const ADVISORY_LOCK_CLASS = 0x4149454d;

/** kysely's table of applied migrations, kept so that databases migrated before carry on. */
const MIGRATION_TABLE = "kysely_migration";

/**
 * Applies every pending migration, in name order, in one transaction inside the service schema
 * (its table of applied migrations too). Several replicas may start at once: on pg a session
 * advisory lock per schema is held around the whole run, on one extra connection; on PGlite the
 * run holds the only session anyway.
 *
 * Our own runner rather than kysely's Migrator: that one decides whether its table exists by
 * reading the columns of every table in every schema, looking each table up again by name, so a
 * schema dropped meanwhile (another suite, another service's tenant) failed the start with
 * "schema ... does not exist"; and it reads more the more schemas there are.
 */
export async function migrateToLatest(database: Database, migrations: Record<string, Migration>): Promise<void> {
  const table = sql.id(database.schema, MIGRATION_TABLE);
  const run = () =>
    database.db.transaction().execute(async (trx) => {
      await sql`create table if not exists ${table} (name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(
        trx,
      );
      const { rows } = await sql<{ name: string }>`select name from ${table}`.execute(trx);
      // Ordered here, as the pending ones are: the database's collation may order names otherwise.
      const applied = rows.map((r) => r.name).sort();
      const unknown = applied.filter((name) => !Object.hasOwn(migrations, name));
      if (unknown.length > 0) {
        throw new Error(
          `schema ${database.schema} holds migrations this version does not know (${unknown.join(", ")}): a newer version ran on it`,
        );
      }
      const last = applied.at(-1) ?? "";
      const pending = Object.keys(migrations)
        .sort()
        .filter((name) => !applied.includes(name));
      const early = pending.filter((name) => name < last);
      if (early.length > 0) {
        throw new Error(
          `migrations ${early.join(", ")} sort before ${last}, which schema ${database.schema} already has: new migrations go last`,
        );
      }
      for (const name of pending) {
        try {
          await migrations[name]!.up(trx);
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          throw new Error(`migration ${name} failed in schema ${database.schema}: ${message}`, { cause: error });
        }
        await sql`insert into ${table} (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(trx);
      }
    });
  if (database.kind !== "pg") return run();
  await database.db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${ADVISORY_LOCK_CLASS}, hashtext(${database.schema}))`.execute(conn);
    try {
      await run();
    } finally {
      await sql`select pg_advisory_unlock(${ADVISORY_LOCK_CLASS}, hashtext(${database.schema}))`.execute(conn);
    }
  });
}
