import { PGlite, type Results } from "@electric-sql/pglite";
import type { AnyDatabase } from "./database.js";
import { acquireDirectoryLock, type DirectoryLock } from "./directory-lock.js";
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from "kysely";
import { quoteIdent } from "./identifiers.js";
import { type PreparedStatements, createPreparedStatements, runPrepared, wireValues } from "./pglite-statements.js";
import { createVacuumer, type Vacuumer } from "./pglite-vacuum.js";

/**
 * One embedded PostgreSQL instance with the lock that stands in for a pool.
 *
 * PGlite is a single session: whatever runs while a transaction is open runs inside it.
 * So a kysely "connection" on PGlite is the exclusive right to use the instance, taken
 * on acquire and given back on release; concurrent transactions (and single queries) queue.
 * Several services in one process share one instance per data directory, each with its
 * own schema: the holder of the lock sets `search_path` to its schema when it takes over.
 */
export interface SharedPglite {
  readonly pglite: PGlite;
  readonly lock: Mutex;
  /** The search_path last set on the session; changed only by lock holders. */
  searchPath: string | undefined;
  refs: number;
  /** Keeps other processes out of the data directory; none for in-memory instances. */
  readonly directoryLock: DirectoryLock | undefined;
  /** Vacuums the instance now and then, as autovacuum would (pglite-vacuum.ts). */
  readonly vacuumer: Vacuumer;
  /** The session's prepared statements (pglite-statements.ts). */
  readonly statements: PreparedStatements;
}

const INT8 = 20;
const INT8_ARRAY = 1016;

const instances = new Map<string, Promise<SharedPglite>>();
/** Instances being closed: a directory must not be opened again before its last close ends. */
const closing = new Map<string, Promise<void>>();

/**
 * Opens (or joins) the shared instance for `key`: a directory path, or a `memory://` name
 * for an in-memory instance. Call `releaseSharedPglite` once per successful call.
 */
export async function acquireSharedPglite(key: string): Promise<SharedPglite> {
  let pending = instances.get(key);
  if (!pending) {
    pending = openPglite(key);
    instances.set(key, pending);
    pending.catch(() => instances.delete(key));
  }
  const shared = await pending;
  shared.refs++;
  return shared;
}

export async function releaseSharedPglite(key: string, shared: SharedPglite): Promise<void> {
  shared.refs--;
  if (shared.refs > 0) return;
  instances.delete(key);
  const done = (async () => {
    // Wait for whoever still holds the session (e.g. a relay finishing a query).
    await shared.lock.lock();
    try {
      await shared.pglite.close();
    } finally {
      shared.directoryLock?.release();
      shared.lock.unlock();
    }
  })();
  closing.set(key, done);
  try {
    await done;
  } finally {
    if (closing.get(key) === done) closing.delete(key);
  }
}

async function openPglite(key: string): Promise<SharedPglite> {
  await closing.get(key)?.catch(() => {});
  const inMemory = key.startsWith("memory://");
  const directoryLock = inMemory ? undefined : acquireDirectoryLock(key);
  try {
    const pglite = await PGlite.create({
      ...(inMemory ? {} : { dataDir: key }),
      // int8 is always a bigint, on both dialects (see database.ts).
      parsers: {
        [INT8]: (value: string) => BigInt(value),
        [INT8_ARRAY]: parseInt8Array,
      },
    });
    const lock = new Mutex();
    const vacuumer = createVacuumer(
      (statement) => pglite.exec(statement),
      lock,
      () => pglite.closed,
    );
    return {
      pglite,
      lock,
      searchPath: undefined,
      refs: 0,
      directoryLock,
      vacuumer,
      statements: createPreparedStatements(),
    };
  } catch (err) {
    directoryLock?.release();
    throw err;
  }
}

/** Parses the text form of a one-dimensional int8[] (`{1,NULL,3}`). */
export function parseInt8Array(value: string): (bigint | null)[] {
  const inner = value.slice(1, -1);
  if (inner === "") return [];
  return inner.split(",").map((item) => (item === "NULL" ? null : BigInt(item)));
}

export interface PgliteDialectConfig {
  readonly shared: SharedPglite;
  /** Schema every query of this dialect runs in (set as search_path). */
  readonly schema: string;
}

export class PgliteDialect implements Dialect {
  readonly #config: PgliteDialectConfig;

  constructor(config: PgliteDialectConfig) {
    this.#config = config;
  }

  createDriver(): Driver {
    return new PgliteDriver(this.#config);
  }

  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }

  createIntrospector(db: Kysely<AnyDatabase>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}

class PgliteDriver implements Driver {
  readonly #config: PgliteDialectConfig;
  readonly #connection: PgliteConnection;
  #destroyed = false;

  constructor(config: PgliteDialectConfig) {
    this.#config = config;
    this.#connection = new PgliteConnection(config.shared);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#destroyed) throw new Error("database has already been destroyed");
    const { shared, schema } = this.#config;
    await shared.lock.lock();
    try {
      if (shared.pglite.closed) throw new Error("database has already been destroyed");
      if (shared.searchPath !== schema) {
        await shared.pglite.exec(`set search_path to ${quoteIdent(schema)}`);
        shared.searchPath = schema;
      }
    } catch (err) {
      shared.lock.unlock();
      throw err;
    }
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let statement = "begin";
    if (settings.isolationLevel || settings.accessMode) {
      statement = "start transaction";
      if (settings.isolationLevel) statement += ` isolation level ${settings.isolationLevel}`;
      if (settings.accessMode) statement += ` ${settings.accessMode}`;
    }
    await connection.executeQuery(CompiledQuery.raw(statement));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("commit"));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("rollback"));
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${quoteIdent(name)}`));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to savepoint ${quoteIdent(name)}`));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release savepoint ${quoteIdent(name)}`));
  }

  async releaseConnection(): Promise<void> {
    this.#config.shared.lock.unlock();
  }

  async destroy(): Promise<void> {
    // The instance itself is closed by its last user (releaseSharedPglite).
    this.#destroyed = true;
  }
}

const COUNTED_COMMANDS = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

class PgliteConnection implements DatabaseConnection {
  readonly #pglite: PGlite;
  readonly #vacuumer: Vacuumer;
  readonly #shared: SharedPglite;

  constructor(shared: SharedPglite) {
    this.#pglite = shared.pglite;
    this.#vacuumer = shared.vacuumer;
    this.#shared = shared;
  }

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    let result: Results<R>;
    if (compiledQuery.parameters.length === 0) {
      // Simple protocol, like node-postgres without parameters: several statements in
      // one raw query (common in migrations) work on both dialects.
      const results = await this.#pglite.exec(compiledQuery.sql);
      result = (results.at(-1) ?? { rows: [], fields: [] }) as Results<R>;
    } else {
      const values = wireValues(compiledQuery.parameters);
      result = values
        ? await runPrepared<R>(
            this.#pglite,
            this.#shared.statements,
            this.#shared.searchPath,
            compiledQuery.sql,
            values,
          )
        : await this.#pglite.query<R>(compiledQuery.sql, [...compiledQuery.parameters]);
    }
    const command = (result as { command?: string }).command;
    this.#vacuumer.ran(command !== undefined && COUNTED_COMMANDS.has(command) ? (result.affectedRows ?? 0) : 1);
    return {
      rows: result.rows ?? [],
      ...(command !== undefined && COUNTED_COMMANDS.has(command)
        ? { numAffectedRows: BigInt(result.affectedRows ?? 0) }
        : {}),
    };
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery, chunkSize = 100): AsyncIterableIterator<QueryResult<R>> {
    if (!Number.isInteger(chunkSize) || chunkSize <= 0) throw new Error("chunkSize must be a positive integer");
    // PGlite has no cursors over its API; the rows are already in memory.
    const { rows } = await this.executeQuery<R>(compiledQuery);
    for (let i = 0; i < rows.length; i += chunkSize) {
      yield { rows: rows.slice(i, i + chunkSize) };
    }
  }
}

/** A FIFO async lock. */
export class Mutex {
  #locked = false;
  readonly #waiters: (() => void)[] = [];

  async lock(): Promise<void> {
    if (!this.#locked) {
      this.#locked = true;
      return;
    }
    await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  unlock(): void {
    const next = this.#waiters.shift();
    // Ownership passes straight to the next waiter so nobody can barge in between.
    if (next) next();
    else this.#locked = false;
  }
}
