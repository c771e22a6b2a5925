// Activity through engine URLs resets their idle time. A proxied page can make dozens of requests
// a second, so activity is kept in memory and written at most once per flush interval per engine,
// never moving an engine's last activity backwards.
import { sql } from "kysely";
import type { Database } from "@aiem/kit/db";
import type { Logger } from "@aiem/kit/logger";

export interface ActivityTracker {
  /** Records activity on an engine now. */
  touch(uid: string): void;
  /** The latest activity recorded in this process lately, written or not. */
  latest(uid: string): Date | undefined;
  /** Writes what is pending. */
  flush(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

export function createActivityTracker(options: {
  database: () => Database | undefined;
  flushMs: number;
  logger: Logger;
}): ActivityTracker {
  let pending = new Map<string, Date>();
  // Recent activity, written or not, so that reads racing a write still see it; pruned once it is
  // surely in the database.
  const recent = new Map<string, Date>();
  const keepMs = Math.max(10_000, 5 * options.flushMs);
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  async function write(batch: Map<string, Date>): Promise<void> {
    const database = options.database();
    if (!database || batch.size === 0) return;
    const rows = [...batch].map(([uid, at]) => sql`(${uid}, ${at.toISOString()})`);
    await sql`
      update engines as e
         set last_activity_time = greatest(coalesce(e.last_activity_time, v.at::timestamptz), v.at::timestamptz)
        from (values ${sql.join(rows)}) as v(uid, at)
       where e.uid = v.uid`.execute(database.db);
  }

  function flush(): Promise<void> {
    flushing = flushing.then(async () => {
      const batch = pending;
      pending = new Map();
      try {
        await write(batch);
      } catch (err) {
        options.logger.warn("could not record engine activity", {
          error: err instanceof Error ? err.message : String(err),
        });
        for (const [uid, at] of batch) if (!pending.has(uid)) pending.set(uid, at);
      }
      const old = Date.now() - keepMs;
      for (const [uid, at] of recent) if (at.getTime() < old && !pending.has(uid)) recent.delete(uid);
    });
    return flushing;
  }

  return {
    touch(uid) {
      const now = new Date();
      pending.set(uid, now);
      recent.set(uid, now);
    },
    latest: (uid) => recent.get(uid),
    flush,
    start() {
      timer ??= setInterval(() => void flush(), options.flushMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await flush();
    },
  };
}
