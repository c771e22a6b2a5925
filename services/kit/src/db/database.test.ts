import { existsSync } from "node:fs";
import type { AnyDatabase } from "./database.js";
import path from "node:path";
import { sql, type Kysely, type Migration } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTempDirs } from "../testing/temp-dirs.js";
import { testSchemaName } from "../testing/test-database.js";
import { createDatabase, migrateToLatest, openDatabase, type Database, type DatabaseTarget } from "./database.js";

// Every suite runs on PGlite, and on PostgreSQL too when DATABASE_URL is set.
const targets: [string, DatabaseTarget][] = [["pglite", { kind: "pglite", key: "memory://db-test" }]];
const url = process.env.DATABASE_URL;
if (url) targets.push(["pg", { kind: "pg", url }]);

const counters: Record<string, Migration> = {
  "2026-11-01T00:00:00_counters": {
    async up(db: Kysely<AnyDatabase>) {
      await db.schema
        .createTable("counter")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("value", "int8", (c) => c.notNull())
        .execute();
    },
  },
  "2026-11-02T00:00:00_seed": {
    async up(db: Kysely<AnyDatabase>) {
      // Several statements in one raw query: must work on both dialects.
      await sql`insert into counter values ('a', 0); insert into counter values ('b', 0);`.execute(db);
    },
  },
};

describe.each(targets)("database on %s", (_kind, target) => {
  const open: Database[] = [];
  const openTest = async (schema = testSchemaName("db")) => {
    const database = await openDatabase(target, { schema, dropSchemaOnDestroy: true });
    open.push(database);
    return database;
  };
  let database: Database;

  beforeAll(async () => {
    database = await openTest();
    await migrateToLatest(database, counters);
  });

  afterAll(async () => {
    for (const d of open.reverse()) await d.destroy();
  });

  it("reports its kind and schema", () => {
    expect(database.kind).toBe(target.kind);
    expect(database.schema).toMatch(/^t_db_/);
  });

  it("applies migrations once, with the migration table inside the schema", async () => {
    await migrateToLatest(database, counters);
    const rows = await database.db.selectFrom("counter").select(["id"]).orderBy("id").execute();
    expect(rows.map((r) => r.id)).toEqual(["a", "b"]);
    const { rows: tables } = await sql<{ table_name: string }>`
      select table_name from information_schema.tables where table_schema = ${database.schema} order by table_name`.execute(
      database.db,
    );
    expect(tables.map((t) => t.table_name)).toEqual(["counter", "kysely_migration"]);
  });

  it("keeps each schema to itself", async () => {
    const other = await openTest();
    await migrateToLatest(other, counters);
    await other.db.updateTable("counter").set({ value: 42n }).where("id", "=", "a").execute();
    const mine = await database.db
      .selectFrom("counter")
      .select("value")
      .where("id", "=", "a")
      .executeTakeFirstOrThrow();
    const theirs = await other.db.selectFrom("counter").select("value").where("id", "=", "a").executeTakeFirstOrThrow();
    expect(mine.value).toBe(0n);
    expect(theirs.value).toBe(42n);
  });

  it("round-trips int8 beyond 2^53 as bigint", async () => {
    const values = [2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n), 0n];
    await database.db.schema.createTable("big").addColumn("v", "int8").addColumn("a", sql`int8[]`).execute();
    for (const v of values) {
      await database.db
        .insertInto("big")
        .values({ v, a: sql`${`{${v},NULL}`}::int8[]` })
        .execute();
    }
    const rows = await database.db.selectFrom("big").select(["v", "a"]).execute();
    expect(rows.map((r) => r.v)).toEqual(values);
    expect(rows[0]?.a).toEqual([values[0], null]);
    const { count } = await database.db
      .selectFrom("big")
      .select((eb) => eb.fn.countAll().as("count"))
      .executeTakeFirstOrThrow();
    expect(count).toBe(4n);
    const found = await database.db
      .selectFrom("big")
      .select("v")
      .where("v", "=", 2n ** 63n - 1n)
      .execute();
    expect(found).toHaveLength(1);
  });

  it("takes parameters of every kind a service passes, and answers them back alike", async () => {
    await database.db.schema
      .createTable("kinds")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("n", "integer")
      .addColumn("f", "float8")
      .addColumn("b", "boolean")
      .addColumn("t", "timestamptz")
      .addColumn("bytes", "bytea")
      .addColumn("doc", "jsonb")
      .addColumn("note", "text")
      .execute();
    const when = new Date("2026-11-29T10:11:12.345Z");
    const bytes = new Uint8Array([0, 1, 127, 128, 255, 92, 120]);
    await database.db
      .insertInto("kinds")
      .values({ id: "k", n: 7, f: 1.5, b: true, t: when, bytes, doc: '{"a":[1,"x"]}', note: null })
      .execute();
    const row = await database.db
      .selectFrom("kinds")
      .selectAll()
      .where("t", "=", when)
      .where("b", "=", true)
      .where("bytes", "=", bytes)
      .where("n", "=", 7n as unknown as number)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ id: "k", n: 7, f: 1.5, b: true, doc: { a: [1, "x"] }, note: null });
    expect(row.t).toEqual(when);
    expect(new Uint8Array(row.bytes)).toEqual(bytes);
    // A parameter whose type the statement leaves open is text, and one without a value is null.
    const echoed = await sql<{ s: string; u: string | null }>`select ${"it's"} as s, ${undefined} as u`.execute(
      database.db,
    );
    expect(echoed.rows[0]).toEqual({ s: "it's", u: null });
    // A failed statement is the database's error, with its code, and the session goes on.
    const dup = await database.db
      .insertInto("kinds")
      .values({ id: "k", n: 1 })
      .execute()
      .catch((err: unknown) => err);
    expect((dup as { code?: string }).code).toBe("23505");
    expect(await database.db.selectFrom("kinds").select("id").execute()).toEqual([{ id: "k" }]);
  });

  it("runs a statement again after its table changed, after it failed, and among hundreds of others", async () => {
    await database.db.schema
      .createTable("shape")
      .addColumn("id", "text", (c) => c.primaryKey())
      .execute();
    await database.db.insertInto("shape").values({ id: "a" }).execute();
    const read = () => database.db.selectFrom("shape").selectAll().where("id", "=", "a").executeTakeFirstOrThrow();
    expect(await read()).toEqual({ id: "a" });
    expect(await read()).toEqual({ id: "a" });
    // A column added under a `select *` the session has run: the next run answers it.
    await sql`alter table shape add column size int not null default 3`.execute(database.db);
    expect(await read()).toEqual({ id: "a", size: 3 });
    // A statement that failed runs again.
    const insert = (id: string) => database.db.insertInto("shape").values({ id, size: 1 }).execute();
    await expect(insert("a")).rejects.toMatchObject({ code: "23505" });
    await insert("b");
    // More distinct statements than the session keeps prepared, then the first ones again.
    for (let i = 0; i < 300; i++) {
      const row = await sql<{ n: number }>`select ${i}::int + ${String(i)}::int as ${sql.id(`n${i}`)}`.execute(
        database.db,
      );
      expect(Object.values(row.rows[0]!)).toEqual([2 * i]);
    }
    expect(await read()).toEqual({ id: "a", size: 3 });
    expect(await database.db.selectFrom("shape").select("id").orderBy("id").execute()).toEqual([
      { id: "a" },
      { id: "b" },
    ]);
  });

  it("reports affected rows", async () => {
    const result = await database.db
      .updateTable("counter")
      .set({ value: 0n })
      .where("id", "in", ["a", "b"])
      .executeTakeFirst();
    expect(result.numUpdatedRows).toBe(2n);
  });

  it("serialises concurrent read-modify-write transactions", async () => {
    await database.db.updateTable("counter").set({ value: 0n }).where("id", "=", "b").execute();
    const n = 25;
    await Promise.all(
      Array.from({ length: n }, () =>
        database.db.transaction().execute(async (trx) => {
          const row = await trx
            .selectFrom("counter")
            .select("value")
            .where("id", "=", "b")
            .forUpdate()
            .executeTakeFirstOrThrow();
          await new Promise((r) => setTimeout(r, 1));
          await trx
            .updateTable("counter")
            .set({ value: row.value + 1n })
            .where("id", "=", "b")
            .execute();
        }),
      ),
    );
    const row = await database.db.selectFrom("counter").select("value").where("id", "=", "b").executeTakeFirstOrThrow();
    expect(row.value).toBe(BigInt(n));
  });

  it("rolls back a failed transaction and hides uncommitted rows from others", async () => {
    let release!: () => void;
    const inside = new Promise<void>((r) => (release = r));
    const trx = database.db.transaction().execute(async (t) => {
      await t.insertInto("counter").values({ id: "uncommitted", value: 1n }).execute();
      release();
      await new Promise((r) => setTimeout(r, 20));
      throw new Error("boom");
    });
    await inside;
    const seenOutside = await database.db.selectFrom("counter").select("id").where("id", "=", "uncommitted").execute();
    await expect(trx).rejects.toThrow("boom");
    expect(seenOutside).toEqual([]);
    const after = await database.db.selectFrom("counter").select("id").where("id", "=", "uncommitted").execute();
    expect(after).toEqual([]);
  });

  it("supports nested savepoints", async () => {
    const trx = await database.db.startTransaction().execute();
    const sp = await trx.savepoint("inner").execute();
    await sp.insertInto("counter").values({ id: "sp", value: 1n }).execute();
    const back = await sp.rollbackToSavepoint("inner").execute();
    await back.insertInto("counter").values({ id: "kept", value: 1n }).execute();
    await back.commit().execute();
    const kept = await database.db.deleteFrom("counter").where("id", "=", "kept").executeTakeFirst();
    expect(kept.numDeletedRows).toBe(1n);
    const rows = await database.db.selectFrom("counter").select("id").where("id", "=", "sp").execute();
    expect(rows).toEqual([]);
  });

  it("migrates safely when two instances start at once", async () => {
    const schema = testSchemaName("race");
    const replicas = await Promise.all(Array.from({ length: 4 }, () => openTest(schema)));
    await Promise.all(replicas.map((r) => migrateToLatest(r, counters)));
    // The seed migration inserts rows without "if not exists": run twice, it would fail or duplicate.
    const rows = await replicas[0]!.db.selectFrom("counter").select("id").execute();
    expect(rows).toHaveLength(2);
    const applied = await replicas[1]!.db.selectFrom("kysely_migration").select("name").execute();
    expect(applied).toHaveLength(2);
  });

  it.skipIf(target.kind !== "pg")("migrates while other schemas come and go", async () => {
    // Other suites create and drop their schemas all the time. kysely's migrator read every
    // schema's tables and looked each one up again by name, failing with "schema ... does not
    // exist" when a drop committed in between.
    const churn = await openTest();
    let churning = true;
    const churner = (async () => {
      for (let i = 0; churning; i++) {
        const schema = sql.id(`${churn.schema}_${i}`);
        await sql`create schema ${schema}`.execute(churn.db);
        await sql`create table ${schema}.t (id serial primary key, a text, b text, c text, d text)`.execute(churn.db);
        await sql`drop schema ${schema} cascade`.execute(churn.db);
      }
    })();
    try {
      for (let i = 0; i < 20; i++) await migrateToLatest(await openTest(), counters);
    } finally {
      churning = false;
      await churner;
    }
  });

  it("names the failing migration", async () => {
    const other = await openTest();
    const broken = {
      ...counters,
      "2026-11-03T00:00:00_broken": {
        up: (db: Kysely<AnyDatabase>) => sql`select * from missing`.execute(db).then(() => {}),
      },
    };
    await expect(migrateToLatest(other, broken)).rejects.toThrow(
      /migration 2026-11-03T00:00:00_broken failed in schema t_db_/,
    );
  });

  it("refuses a schema a newer version migrated, and a new migration that sorts before applied ones", async () => {
    const other = await openTest();
    const newer = { ...counters, "2026-11-09T00:00:00_newer": { up: async () => {} } };
    await migrateToLatest(other, newer);
    await expect(migrateToLatest(other, counters)).rejects.toThrow(
      /holds migrations this version does not know \(2026-11-09T00:00:00_newer\)/,
    );
    const late = { ...newer, "2026-11-05T00:00:00_late": { up: async () => {} } };
    await expect(migrateToLatest(other, late)).rejects.toThrow(
      /2026-11-05T00:00:00_late sort before 2026-11-09T00:00:00_newer/,
    );
  });

  it("rejects unsafe schema names", async () => {
    await expect(openDatabase(target, { schema: 'x"; drop' })).rejects.toThrow(/invalid schema name/);
  });
});

describe("createDatabase with PGlite in the data directory", () => {
  const tempDir = useTempDirs("aiem-db-");

  it("stores data in <dataDir>/pglite, shares one instance between services and survives a restart", async () => {
    const dataDir = await tempDir();
    const a = await createDatabase({ dataDir, schema: "svc_a" });
    const b = await createDatabase({ dataDir, schema: "svc_b" });
    expect(existsSync(path.join(dataDir, "pglite"))).toBe(true);
    await migrateToLatest(a, counters);
    await b.db.schema.createTable("counter").addColumn("id", "text").execute();
    await Promise.all([
      a.db.transaction().execute((t) => t.updateTable("counter").set({ value: 7n }).where("id", "=", "a").execute()),
      b.db.insertInto("counter").values({ id: "from-b" }).execute(),
    ]);
    await a.destroy();
    await b.destroy();

    const again = await createDatabase({ dataDir, schema: "svc_a" });
    const row = await again.db.selectFrom("counter").select("value").where("id", "=", "a").executeTakeFirstOrThrow();
    expect(row.value).toBe(7n);
    // Reopening while the last user is still closing must neither fail nor open the directory twice.
    const closing = again.destroy();
    const reopened = await createDatabase({ dataDir, schema: "svc_b" });
    await closing;
    expect(await reopened.db.selectFrom("counter").select("id").execute()).toEqual([{ id: "from-b" }]);
    await reopened.destroy();
  });
});
