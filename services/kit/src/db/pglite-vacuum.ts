// PGlite is PostgreSQL without its background workers, so nothing ever vacuums it: every update
// and delete leaves a dead row version that later scans and index lookups step over. A row that
// is updated often (a sandbox's last activity, an outbox row claimed and marked) grows a chain
// of dead versions, and the statements that read it slow down with the database's age (measured
// in issue 15: a key lookup 0.2 ms on a fresh table, 1.1 ms after a few thousand calls, 0.6 ms
// again after a VACUUM). This stands in for autovacuum: after enough statements, a VACUUM of the
// whole database runs as soon as the session is free. Statements are counted, not written rows:
// a write inside a `with ... select` reports no rows written.

/** The session lock the statements take (see pglite-dialect.ts). */
export interface SessionLock {
  lock(): Promise<void>;
  unlock(): void;
}

export interface VacuumOptions {
  /** Statements after which a VACUUM is due (a statement that wrote N rows counts N). Default 2000. */
  readonly afterStatements?: number;
  /** Least time between two VACUUMs, in ms. Default 1000. */
  readonly minIntervalMs?: number;
}

export interface Vacuumer {
  /** Counts a statement (`rows`: the rows it reported written); schedules a VACUUM once enough ran. */
  ran(rows: number): void;
  /** VACUUMs that have run. */
  readonly runs: number;
  /** Resolves when no VACUUM is running or scheduled. */
  idle(): Promise<void>;
}

export function createVacuumer(
  exec: (statement: string) => Promise<unknown>,
  session: SessionLock,
  isClosed: () => boolean,
  options: VacuumOptions = {},
): Vacuumer {
  const afterStatements = options.afterStatements ?? 2000;
  const minInterval = options.minIntervalMs ?? 1000;
  let counted = 0;
  let last = 0;
  let runs = 0;
  let pending: Promise<void> | undefined;

  async function vacuum(): Promise<void> {
    const wait = last + minInterval - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait).unref());
    // Taken like a statement's connection: so never inside another caller's transaction, which
    // VACUUM cannot run in.
    await session.lock();
    try {
      if (isClosed()) return;
      counted = 0;
      await exec("vacuum");
      runs++;
    } finally {
      last = Date.now();
      session.unlock();
    }
  }

  return {
    ran(rows) {
      counted += Math.max(1, rows);
      if (counted < afterStatements || pending) return;
      // A VACUUM that fails (the instance closing under it) is tried again after the next statements.
      pending = vacuum()
        .catch(() => undefined)
        .finally(() => (pending = undefined));
    },
    get runs() {
      return runs;
    },
    async idle() {
      while (pending) await pending;
    },
  };
}
