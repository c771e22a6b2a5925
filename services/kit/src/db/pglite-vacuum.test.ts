// The embedded database's stand-in for autovacuum, on a real PGlite instance.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "./database.js";
import { acquireSharedPglite, releaseSharedPglite, type SharedPglite } from "./pglite-dialect.js";

const key = "memory://vacuum-test";

describe("PGlite vacuum", () => {
  let database: Database;
  let shared: SharedPglite;

  beforeAll(async () => {
    database = await openDatabase({ kind: "pglite", key }, { schema: "vacuum_test", dropSchemaOnDestroy: true });
    shared = await acquireSharedPglite(key);
    await sql`create table hot (id int primary key, n int not null)`.execute(database.db);
    // An index on the changing column makes every update a new index entry (no HOT update), the
    // case where dead versions pile up.
    await sql`create index hot_n on hot (n)`.execute(database.db);
    await sql`insert into hot values (1, 0)`.execute(database.db);
  });

  afterAll(async () => {
    await releaseSharedPglite(key, shared);
    await database.destroy();
  });

  it("runs after enough statements, between them, and keeps a row updated again and again small", async () => {
    const size = async () =>
      Number((await sql<{ n: string }>`select pg_relation_size('hot') as n`.execute(database.db)).rows[0]!.n);
    const before = shared.vacuumer.runs;
    // Inside a transaction (where VACUUM cannot run) and outside it.
    await database.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 1100; i++) await sql`update hot set n = n + 1 where id = 1`.execute(trx);
    });
    for (let i = 0; i < 1100; i++) await sql`update hot set n = n + 1 where id = 1`.execute(database.db);
    await shared.vacuumer.idle();
    expect(shared.vacuumer.runs).toBeGreaterThan(before);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 2000; i++) await sql`update hot set n = n + 1 where id = 1`.execute(database.db);
      await shared.vacuumer.idle();
    }
    expect((await sql<{ n: number }>`select n from hot where id = 1`.execute(database.db)).rows[0]!.n).toBe(8200);
    // One live row: with the dead versions vacuumed away the table stays ten pages at most (without
    // the VACUUMs these updates leave it at about 30 pages).
    expect(await size()).toBeLessThanOrEqual(10 * 8192);
  });
});
