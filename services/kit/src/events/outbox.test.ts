import { sql, type Kysely, type KyselyPlugin } from "kysely";
import type { AnyDatabase } from "../db/index.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { migrateToLatest, type Database } from "../db/database.js";
import { createTestDatabase } from "../testing/test-database.js";
import { engineStateSubject, silentLogger, type EventBus, type EventMessage, type Subscription } from "./event-bus.js";
import { eventMigrations } from "./migrations.js";
import { createNatsEventBus, type NatsEventBus } from "./nats-bus.js";
import { createOutboxRelay, enqueue, enqueueWhen, outboxBacklog, type OutboxRelay } from "./outbox.js";
import { createTcpProxy, createTestEventBus, uniqueTestPrefix, waitFor, type TestEventBus } from "./testing.js";

const NATS_URL = process.env.NATS_URL;
const kinds: Array<"memory" | "nats"> = NATS_URL ? ["memory", "nats"] : ["memory"];
const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const migrations = {
  ...eventMigrations,
  "0001_engines": {
    async up(db: Kysely<AnyDatabase>) {
      await db.schema
        .createTable("engines")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("state", "text", (c) => c.notNull())
        .execute();
    },
  },
};

/** The service-side pattern: change a row and enqueue its event in one transaction. */
async function setState(database: Database, id: string, state: string): Promise<string> {
  return database.db.transaction().execute(async (trx) => {
    await sql`insert into engines (id, state) values (${id}, ${state}) on conflict (id) do update set state = excluded.state`.execute(
      trx,
    );
    return enqueue(trx, {
      subject: engineStateSubject("ws", id),
      data: bytes(`${id}:${state}`),
      headers: { "Content-Type": "text/plain" },
    });
  });
}

/** Counts deliveries per event id on a durable consumer. */
async function watch(bus: EventBus, name: string) {
  const deliveries = new Map<string, number>();
  const order: string[] = [];
  const sub: Subscription = await bus.consume(
    name,
    { subjects: "enginemanager.engines.>" },
    async (m: EventMessage) => {
      deliveries.set(m.id, (deliveries.get(m.id) ?? 0) + 1);
      order.push(text(m.data));
    },
  );
  return { deliveries, order, sub };
}

/** A bus whose publishes each take 30 ms; `started` settles when the first one begins. */
function slowPublisher(bus: EventBus): { slow: Pick<EventBus, "publish">; started: Promise<void> } {
  let publishing!: () => void;
  const started = new Promise<void>((r) => (publishing = r));
  const slow: Pick<EventBus, "publish"> = {
    publish: async (subject, data, options) => {
      publishing();
      await pause(30);
      return bus.publish(subject, data, options);
    },
  };
  return { slow, started };
}

describe("transactional outbox", () => {
  let database: Database;
  const cleanups: Array<() => Promise<unknown>> = [];

  // One database for the file (starting PGlite costs seconds); each test starts from empty tables.
  beforeAll(async () => {
    database = await createTestDatabase("outbox");
    await migrateToLatest(database, migrations);
  });
  afterAll(() => database.destroy());
  beforeEach(async () => {
    await sql`truncate outbox, engines`.execute(database.db);
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  });

  it("writes the event in the change's transaction: a rollback leaves neither", async () => {
    const id = await setState(database, "e1", "STARTING");
    await expect(
      database.db.transaction().execute(async (trx) => {
        await sql`update engines set state = 'RUNNING' where id = 'e1'`.execute(trx);
        await enqueue(trx, { subject: engineStateSubject("ws", "e1"), data: bytes("e1:RUNNING") });
        throw new Error("change failed");
      }),
    ).rejects.toThrow("change failed");
    const rows = await sql<{
      id: string;
      subject: string;
      payload: Uint8Array;
      headers: Record<string, string>;
    }>`select id, subject, payload, headers from outbox`.execute(database.db);
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0]!.id).toBe(id);
    expect(rows.rows[0]!.headers).toEqual({ "Content-Type": "text/plain" });
    expect(text(rows.rows[0]!.payload)).toBe("e1:STARTING");
    await expect(enqueue(database.db, { subject: "enginemanager.engines.*", data: bytes("") })).rejects.toThrow(
      /literal/,
    );
  });

  it("enqueueWhen writes the event in the change's own statement, only when the change matched a row", async () => {
    await setState(database, "e2", "STARTING");
    await sql`truncate outbox`.execute(database.db);
    const change = (from: string, to: string) => {
      const event = { subject: engineStateSubject("ws", "e2"), data: bytes(`e2:${to}`) };
      return sql<{ id: string; state: string }>`
        with changed as (update engines set state = ${to} where id = 'e2' and state = ${from} returning id, state),
        event as (${enqueueWhen("changed", event)})
        select * from changed`.execute(database.db);
    };
    expect((await change("STARTING", "RUNNING")).rows).toEqual([{ id: "e2", state: "RUNNING" }]);
    // A second change from STARTING matches nothing: no row changes and no event is written.
    expect((await change("STARTING", "FAILED")).rows).toEqual([]);
    const rows = await sql<{ payload: Uint8Array }>`select payload from outbox`.execute(database.db);
    expect(rows.rows.map((r) => text(r.payload))).toEqual(["e2:RUNNING"]);
    expect(() => enqueueWhen("changed", { subject: "enginemanager.engines.>", data: bytes("") })).toThrow(/literal/);
    // Several events of one change keep the order given.
    await sql`truncate outbox`.execute(database.db);
    const steps = ["A", "B", "C", "D"].map((s) => ({ subject: engineStateSubject("ws", "e2"), data: bytes(s) }));
    await sql`with changed as (select id from engines where id = 'e2'), events as (${enqueueWhen("changed", ...steps)}) select 1`.execute(
      database.db,
    );
    const ordered = await sql<{ payload: Uint8Array }>`select payload from outbox order by seq`.execute(database.db);
    expect(ordered.rows.map((r) => text(r.payload))).toEqual(["A", "B", "C", "D"]);
  });

  describe.each(kinds)("with the %s bus", (kind) => {
    let bus: TestEventBus;
    beforeEach(async () => {
      bus = await createTestEventBus("outbox", { kind });
      cleanups.push(() => bus.destroy());
    });

    function relay(options: Partial<Parameters<typeof createOutboxRelay>[0]> = {}): OutboxRelay {
      const r = createOutboxRelay({
        database,
        bus,
        pollInterval: 20,
        backoff: [20, 50],
        logger: silentLogger,
        ...options,
      });
      cleanups.push(() => r.stop());
      return r;
    }

    it("publishes every event once, in order, while the bus fails and recovers", async () => {
      const { deliveries, order } = await watch(bus, "watcher");
      let down = false;
      let refused = 0;
      const flaky: Pick<EventBus, "publish"> = {
        publish: (subject, data, options) => {
          if (down) {
            refused++;
            return Promise.reject(new Error("bus down"));
          }
          return bus.publish(subject, data, options);
        },
      };
      const r = relay({ bus: flaky });
      r.start();
      const first = await setState(database, "a", "STARTING");
      r.wake();
      await waitFor(() => deliveries.has(first));

      down = true;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(await setState(database, `e${i}`, "STARTING"), await setState(database, `e${i}`, "RUNNING"));
      await waitFor(() => refused >= 3, 5_000, "relay retries");
      expect(await outboxBacklog(database)).toBe(10);
      const failed = await sql<{
        last_error: string | null;
      }>`select last_error from outbox where published_at is null order by seq limit 1`.execute(database.db);
      expect(failed.rows[0]!.last_error).toBe("bus down");

      down = false;
      await waitFor(() => ids.every((id) => deliveries.has(id)), 5_000, "all events");
      await pause(150);
      for (const id of [first, ...ids]) expect(deliveries.get(id)).toBe(1);
      expect(order).toEqual(["a:STARTING", ...[0, 1, 2, 3, 4].flatMap((i) => [`e${i}:STARTING`, `e${i}:RUNNING`])]);
      await waitFor(async () => (await outboxBacklog(database)) === 0);
    });

    it("de-duplicates a re-publish after a crash between publish and mark", async () => {
      const { deliveries } = await watch(bus, "watcher");
      const r = relay();
      const id = await setState(database, "x", "RUNNING");
      expect(await r.flush()).toBe(1);
      // The relay "crashed" before recording the publish: the row comes round again.
      await sql`update outbox set published_at = null`.execute(database.db);
      expect(await r.flush()).toBe(1);
      await waitFor(() => deliveries.has(id));
      await pause(150);
      expect(deliveries.get(id)).toBe(1);
    });

    it("flush returns only once what was pending has been published, even while a round is in flight", async () => {
      const { deliveries } = await watch(bus, "watcher");
      const { slow, started } = slowPublisher(bus);
      const running = relay({ bus: slow });
      const other = relay({ bus: slow });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await setState(database, `f${i}`, "RUNNING"));
      running.start();
      await started;
      // Another relay holds the batch: this flush waits for it instead of returning at once.
      await other.flush();
      expect(await outboxBacklog(database)).toBe(0);
      // The relay whose own loop is mid-round waits for that round instead of publishing it twice.
      const more: string[] = [];
      for (let i = 0; i < 5; i++) more.push(await setState(database, `g${i}`, "RUNNING"));
      running.wake();
      await waitFor(async () => (await outboxBacklog(database)) < 5);
      expect(await running.flush()).toBeLessThan(5);
      expect(await outboxBacklog(database)).toBe(0);
      await waitFor(() => [...ids, ...more].every((id) => deliveries.has(id)));
    });

    it("publishCommitted returns once the caller's rows are published, also while another relay holds the claim", async () => {
      const { deliveries } = await watch(bus, "watcher");
      const own = relay();
      const mine = await setState(database, "p0", "RUNNING");
      await own.publishCommitted();
      expect(await outboxBacklog(database)).toBe(0);
      // The bus holds it at once: the watcher gets it without any further round.
      await waitFor(() => deliveries.has(mine));
      const { slow, started } = slowPublisher(bus);
      const other = relay({ bus: slow });
      const theirs: string[] = [];
      for (let i = 0; i < 3; i++) theirs.push(await setState(database, `p${i + 1}`, "RUNNING"));
      const flushing = other.flush();
      await started;
      const late = await setState(database, "p9", "RUNNING");
      // The other relay's claim holds the earlier rows; this call still returns only once its own is out.
      await own.publishCommitted();
      const left = await sql<{ x: number }>`
        select 1 as x from outbox where id = ${late} and published_at is null`.execute(database.db);
      expect(left.rows).toEqual([]);
      await flushing;
      await waitFor(() => [...theirs, late].every((id) => deliveries.has(id)));
    });

    it("answers each wake with one round: a wake that ended the idle wait is not answered twice", async () => {
      // Counts the claims the relay makes (the statement that leases rows), on either dialect.
      let claims = 0;
      const counter: KyselyPlugin = {
        transformQuery(args) {
          if (JSON.stringify(args.node).includes("update outbox set locked_until = now() +")) claims++;
          return args.node;
        },
        transformResult: async (args) => args.result,
      };
      const counted: Database = { ...database, db: database.db.withPlugin(counter) };
      const { deliveries } = await watch(bus, "watcher");
      const before = await setState(database, "w0", "STARTING");
      // No poll in the test's time: after its first round (which finds w0), only wakes start rounds.
      const r = relay({ database: counted, pollInterval: 60_000 });
      r.start();
      await waitFor(() => deliveries.has(before));
      // A second round for one wake would come right after the first, before the relay waits
      // again, so before the next wake's round: each wake waits for its event.
      for (const id of ["w1", "w2", "w3"]) {
        const event = await setState(database, id, "STARTING");
        r.wake();
        r.wake();
        await waitFor(() => deliveries.has(event));
      }
      await r.stop();
      expect(claims).toBe(4);
      expect(await outboxBacklog(database)).toBe(0);
    });

    it("sets aside an event that can never be published and carries on", async () => {
      const { deliveries } = await watch(bus, "watcher");
      const r = relay();
      const bad = await database.db
        .transaction()
        .execute((trx) => enqueue(trx, { subject: "enginemanager.nowhere.x", data: bytes("?") }));
      const good = await setState(database, "g", "RUNNING");
      expect(await r.flush()).toBe(1);
      await waitFor(() => deliveries.has(good));
      const row = await sql<{
        failed_at: Date | null;
        last_error: string;
      }>`select failed_at, last_error from outbox where id = ${bad}`.execute(database.db);
      expect(row.rows[0]!.failed_at).not.toBeNull();
      expect(row.rows[0]!.last_error).toMatch(/not captured/);
      expect(await outboxBacklog(database)).toBe(0);
    });

    it("keeps order with two relays on one schema and deletes old published rows", async () => {
      const { deliveries, order } = await watch(bus, "watcher");
      const a = relay({ batchSize: 3 });
      const b = relay({ batchSize: 3 });
      a.start();
      b.start();
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push(await setState(database, "o", `S${i}`));
      await waitFor(() => ids.every((id) => deliveries.has(id)), 10_000, "all events");
      expect(order).toEqual(ids.map((_, i) => `o:S${i}`));
      await a.stop();
      await b.stop();

      await sql`update outbox set published_at = now() - interval '2 days'`.execute(database.db);
      const cleaner = relay({ retention: 3600_000, cleanupInterval: 0 });
      await setState(database, "o", "LATEST");
      cleaner.start();
      await waitFor(
        async () =>
          (await sql<{ n: number }>`select count(*)::int as n from outbox`.execute(database.db)).rows[0]!.n === 1,
        5_000,
        "clean-up",
      );
    });
  });

  describe.skipIf(!NATS_URL)("with NATS going away", () => {
    it("stops NATS, writes changes, brings it back and sees every event arrive once", async () => {
      const prefix = uniqueTestPrefix("outbox_outage");
      const proxy = await createTcpProxy(NATS_URL!);
      cleanups.push(() => proxy.stop());
      // The relay reaches NATS through the proxy (which the test cuts); the watcher connects directly.
      const viaProxy: NatsEventBus = await createNatsEventBus({
        url: proxy.url,
        prefix,
        logger: silentLogger,
        reconnectTimeWait: 100,
        publishTimeout: 500,
      });
      cleanups.push(() => viaProxy.close());
      const direct: NatsEventBus = await createNatsEventBus({ url: NATS_URL!, prefix, logger: silentLogger });
      cleanups.push(() => direct.destroy());
      const { deliveries } = await watch(direct, "watcher");
      const r = createOutboxRelay({
        database,
        bus: viaProxy,
        pollInterval: 20,
        backoff: [50, 100, 200],
        logger: silentLogger,
      });
      cleanups.push(() => r.stop());
      r.start();

      const before = await setState(database, "n", "STARTING");
      await waitFor(() => deliveries.has(before));
      // Delivered is not yet marked: the relay's ack could still be on its way through the proxy,
      // and a cut then leaves the row to be published again after NATS is back.
      await waitFor(async () => (await outboxBacklog(database)) === 0);

      await proxy.stop();
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push(await setState(database, `n${i}`, "RUNNING"));
      // The relay keeps trying while NATS is away: a second claim of the oldest row, its error kept.
      const oldest = async () =>
        (
          await sql<{
            attempts: number;
            last_error: string | null;
          }>`select attempts, last_error from outbox where published_at is null order by seq limit 1`.execute(
            database.db,
          )
        ).rows[0];
      await waitFor(async () => ((await oldest())?.attempts ?? 0) > 1, 15_000, "a second attempt while NATS was away");
      expect((await oldest())!.last_error).toBeTruthy();
      expect(await outboxBacklog(database)).toBe(6);
      expect([...deliveries.keys()]).toEqual([before]);

      await proxy.start();
      await waitFor(() => ids.every((id) => deliveries.has(id)), 15_000, "events after NATS came back");
      await pause(300);
      for (const id of [before, ...ids]) expect(deliveries.get(id)).toBe(1);
      await waitFor(async () => (await outboxBacklog(database)) === 0);
    });
  });
});
