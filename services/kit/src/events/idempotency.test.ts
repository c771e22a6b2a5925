import { randomUUID } from "node:crypto";
import type { AnyDatabase } from "../db/index.js";
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { migrateToLatest, type Database } from "../db/database.js";
import { createTestDatabase } from "../testing/test-database.js";
import { engineStateSubject, type EventMessage } from "./event-bus.js";
import { createIdempotentHandler, createMemoryIdempotentHandler, pruneProcessedEvents } from "./idempotency.js";
import { eventMigrations } from "./migrations.js";
import { createTestEventBus, waitFor } from "./testing.js";

const bytes = (s: string) => new TextEncoder().encode(s);

function event(id: string, value: string): EventMessage {
  return {
    id,
    subject: engineStateSubject("ws", "e"),
    data: bytes(value),
    headers: {},
    seq: 1,
    time: new Date(),
    deliveryCount: 1,
    tombstone: false,
  };
}

describe("idempotent handling by event id", () => {
  let database: Database;
  const effects = async () =>
    (await sql<{ value: string }>`select value from effects order by n`.execute(database.db)).rows.map((r) => r.value);

  beforeAll(async () => {
    database = await createTestDatabase("idempotency");
    await migrateToLatest(database, {
      ...eventMigrations,
      "0001_effects": {
        async up(db: Kysely<AnyDatabase>) {
          await sql`create table effects (n serial primary key, value text not null)`.execute(db);
        },
      },
    });
  });
  afterAll(() => database.destroy());
  beforeEach(async () => {
    await sql`truncate effects, processed_events`.execute(database.db);
  });

  it("makes the effect once per consumer, together with the processed record", async () => {
    const handler = (consumer: string) =>
      createIdempotentHandler({ database, consumer }, async (msg, trx) => {
        await sql`insert into effects (value) values (${`${consumer}:${new TextDecoder().decode(msg.data)}`})`.execute(
          trx,
        );
      });
    const a = handler("a");
    const id = randomUUID();
    await a(event(id, "one"));
    await a(event(id, "one"));
    await handler("b")(event(id, "one"));
    await a(event(randomUUID(), "two"));
    expect(await effects()).toEqual(["a:one", "b:one", "a:two"]);
  });

  it("records nothing when the handler fails, so the redelivery runs it again", async () => {
    let fail = true;
    const h = createIdempotentHandler({ database, consumer: "c" }, async (_msg, trx) => {
      await sql`insert into effects (value) values ('attempt')`.execute(trx);
      if (fail) throw new Error("boom");
    });
    const id = randomUUID();
    await expect(h(event(id, "x"))).rejects.toThrow("boom");
    expect(await effects()).toEqual([]);
    fail = false;
    await h(event(id, "x"));
    await h(event(id, "x"));
    expect(await effects()).toEqual(["attempt"]);
  });

  it("lets one of two concurrent deliveries of the same event through", async () => {
    const h = createIdempotentHandler({ database, consumer: "c" }, async (_msg, trx) => {
      await sql`insert into effects (value) values ('once')`.execute(trx);
      await new Promise((r) => setTimeout(r, 30));
    });
    const id = randomUUID();
    await Promise.all([h(event(id, "x")), h(event(id, "x")), h(event(id, "x"))]);
    expect(await effects()).toEqual(["once"]);
  });

  it("prunes old records", async () => {
    const h = createIdempotentHandler({ database, consumer: "c" }, async () => {});
    await h(event(randomUUID(), "old"));
    await sql`update processed_events set processed_at = now() - interval '10 days'`.execute(database.db);
    await h(event(randomUUID(), "new"));
    expect(await pruneProcessedEvents(database, { olderThan: 24 * 3600_000 })).toBe(1);
    const left = await sql<{ n: number }>`select count(*)::int as n from processed_events`.execute(database.db);
    expect(left.rows[0]!.n).toBe(1);
  });

  it("survives redelivery through the bus (the database kind and the memory kind)", async () => {
    const bus = await createTestEventBus("idempotency");
    try {
      const memoryEffects: string[] = [];
      const dbHandler = createIdempotentHandler({ database, consumer: "db" }, async (msg, trx) => {
        await sql`insert into effects (value) values (${msg.id})`.execute(trx);
      });
      const memHandler = createMemoryIdempotentHandler(async (msg) => void memoryEffects.push(msg.id));
      const calls = new Map<string, number>();
      const lossy = (name: string, inner: (m: EventMessage) => Promise<void>) => async (m: EventMessage) => {
        const n = (calls.get(name) ?? 0) + 1;
        calls.set(name, n);
        await inner(m);
        // Effect made, acknowledgement "lost" the first time: the bus delivers again.
        if (n === 1) throw new Error("lost ack");
      };
      await bus.consume("db", { subjects: "enginemanager.engines.>", backoff: [20] }, lossy("db", dbHandler));
      await bus.consume("mem", { subjects: "enginemanager.engines.>", backoff: [20] }, lossy("mem", memHandler));
      const id = randomUUID();
      await bus.publish(engineStateSubject("ws", "e"), bytes("x"), { id });
      await waitFor(() => calls.get("db") === 2 && calls.get("mem") === 2);
      expect(await effects()).toEqual([id]);
      expect(memoryEffects).toEqual([id]);
    } finally {
      await bus.destroy();
    }
  });

  it("memory kind forgets the least recently seen ids beyond its capacity", async () => {
    const seen: string[] = [];
    const h = createMemoryIdempotentHandler(async (m) => void seen.push(m.id), { capacity: 2 });
    await h(event("a", ""));
    await h(event("b", ""));
    await h(event("a", ""));
    await h(event("c", ""));
    await h(event("a", ""));
    await h(event("b", ""));
    expect(seen).toEqual(["a", "b", "c", "b"]);
  });
});
