import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  catalogueSubject,
  engineStateSubject,
  type EventBus,
  type EventMessage,
  type Subscription,
} from "./event-bus.js";
import { createMemoryIdempotentHandler } from "./idempotency.js";
import { createTestEventBus, waitFor, type TestEventBus } from "./testing.js";

const targets: Array<{ name: string; kind: "memory" | "nats" }> = [{ name: "in-process", kind: "memory" }];
if (process.env.NATS_URL) targets.push({ name: "NATS JetStream", kind: "nats" });

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(targets)("event bus contract: $name", ({ kind }) => {
  let bus: TestEventBus;
  const subs: Subscription[] = [];

  beforeEach(async () => {
    bus = await createTestEventBus("contract", { kind });
  });
  afterEach(async () => {
    await Promise.all(subs.splice(0).map((s) => s.stop()));
    await bus.destroy();
  });

  async function consume(
    name: string,
    options: Parameters<EventBus["consume"]>[1],
    handler: (m: EventMessage) => Promise<void>,
  ) {
    const sub = await bus.consume(name, options, handler);
    subs.push(sub);
    return sub;
  }

  it("publishes and delivers in order with id, subject, data and headers", async () => {
    const seen: EventMessage[] = [];
    await consume("reader", { subjects: "enginemanager.engines.>" }, async (m) => void seen.push(m));
    const subject = engineStateSubject("team-a", "e1");
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const [i, id] of ids.entries()) {
      const r = await bus.publish(subject, bytes(`state ${i}`), {
        id,
        headers: { "Content-Type": "application/x-protobuf" },
      });
      expect(r.duplicate).toBe(false);
      expect(r.stream).toBe(bus.streams.events);
    }
    await waitFor(() => seen.length === 3);
    expect(seen.map((m) => m.id)).toEqual(ids);
    expect(seen.map((m) => text(m.data))).toEqual(["state 0", "state 1", "state 2"]);
    expect(seen[0]!.subject).toBe("enginemanager.engines.team-a.e1.state");
    expect(seen[0]!.headers).toEqual({ "Content-Type": "application/x-protobuf" });
    expect(seen[0]!.deliveryCount).toBe(1);
    expect(seen[0]!.tombstone).toBe(false);
    expect(seen[1]!.seq).toBeGreaterThan(seen[0]!.seq);
  });

  it("filters by subject and starts new consumers at the start or at new messages", async () => {
    await bus.publish(engineStateSubject("ws", "old"), bytes("old"), { id: randomUUID() });
    const all: string[] = [];
    const fresh: string[] = [];
    const other: string[] = [];
    await consume(
      "all",
      { subjects: "enginemanager.engines.ws.*.state", deliver: "all" },
      async (m) => void all.push(text(m.data)),
    );
    await consume(
      "fresh",
      { subjects: "enginemanager.engines.ws.*.state", deliver: "new" },
      async (m) => void fresh.push(text(m.data)),
    );
    await consume(
      "other",
      { subjects: "enginemanager.engines.elsewhere.>" },
      async (m) => void other.push(text(m.data)),
    );
    await bus.publish(engineStateSubject("ws", "new"), bytes("new"), { id: randomUUID() });
    await waitFor(() => all.length === 2 && fresh.length === 1);
    await pause(100);
    expect(all).toEqual(["old", "new"]);
    expect(fresh).toEqual(["new"]);
    expect(other).toEqual([]);
  });

  it("rejects subjects outside the streams and wildcard publishes", async () => {
    await expect(bus.publish("enginemanager.unknown.x", bytes(""), { id: randomUUID() })).rejects.toThrow(
      /not captured/,
    );
    await expect(bus.publish("other.engines.x", bytes(""), { id: randomUUID() })).rejects.toThrow(/must start/);
    await expect(bus.publish("enginemanager.engines.*", bytes(""), { id: randomUUID() })).rejects.toThrow(/wildcard/);
    await expect(
      bus.consume("mixed", { subjects: ["enginemanager.engines.>", "enginemanager.catalogue.>"] }, async () => {}),
    ).rejects.toThrow(/span/);
  });

  it("redelivers after a failing handler, with backoff, and keeps going with other messages", async () => {
    const attempts = new Map<string, number>();
    const done: string[] = [];
    await consume("flaky", { subjects: "enginemanager.engines.>", backoff: [50] }, async (m) => {
      const n = (attempts.get(m.id) ?? 0) + 1;
      attempts.set(m.id, n);
      expect(m.deliveryCount).toBe(n);
      if (text(m.data) === "bad" && n < 3) throw new Error("transient");
      done.push(text(m.data));
    });
    const bad = randomUUID();
    await bus.publish(engineStateSubject("ws", "a"), bytes("bad"), { id: bad });
    await bus.publish(engineStateSubject("ws", "b"), bytes("good"), { id: randomUUID() });
    await waitFor(() => done.length === 2);
    expect(done).toContain("good");
    expect(attempts.get(bad)).toBe(3);
    await pause(200);
    expect(attempts.get(bad)).toBe(3);
  });

  it("redelivers when the handler does not finish within ackWait", async () => {
    const deliveries: number[] = [];
    let releaseFirst!: () => void;
    const firstBlocked = new Promise<void>((r) => (releaseFirst = r));
    await consume("slow", { subjects: "enginemanager.engines.>", ackWait: 500, concurrency: 2 }, async (m) => {
      deliveries.push(m.deliveryCount);
      if (m.deliveryCount === 1) await firstBlocked;
    });
    await bus.publish(engineStateSubject("ws", "slow"), bytes("x"), { id: randomUUID() });
    await waitFor(() => deliveries.length === 2, 5_000, "redelivery after ackWait");
    expect(deliveries).toEqual([1, 2]);
    releaseFirst();
  });

  it("gives up after maxDeliver attempts", async () => {
    let calls = 0;
    await consume("poison", { subjects: "enginemanager.engines.>", maxDeliver: 2, backoff: [20] }, async () => {
      calls++;
      throw new Error("always");
    });
    await bus.publish(engineStateSubject("ws", "p"), bytes("x"), { id: randomUUID() });
    await waitFor(() => calls === 2);
    await pause(300);
    expect(calls).toBe(2);
  });

  it("keeps a durable consumer's position across replicas stopping and starting", async () => {
    const first: string[] = [];
    const sub = await bus.consume(
      "durable",
      { subjects: "enginemanager.engines.>" },
      async (m) => void first.push(text(m.data)),
    );
    await bus.publish(engineStateSubject("ws", "1"), bytes("one"), { id: randomUUID() });
    await waitFor(() => first.length === 1);
    await sub.stop();
    await bus.publish(engineStateSubject("ws", "2"), bytes("two"), { id: randomUUID() });
    await bus.publish(engineStateSubject("ws", "3"), bytes("three"), { id: randomUUID() });
    const second: string[] = [];
    await consume(
      "durable",
      { subjects: "enginemanager.engines.>", deliver: "all" },
      async (m) => void second.push(text(m.data)),
    );
    await waitFor(() => second.length === 2);
    await pause(100);
    expect(first).toEqual(["one"]);
    expect(second).toEqual(["two", "three"]);
  });

  it("shares a durable consumer between replicas: each message is handled once", async () => {
    const handledBy = new Map<string, string[]>();
    const handler = (replica: string) => async (m: EventMessage) => {
      handledBy.set(m.id, [...(handledBy.get(m.id) ?? []), replica]);
      await pause(15);
    };
    await consume("shared", { subjects: "enginemanager.engines.>" }, handler("a"));
    await consume("shared", { subjects: "enginemanager.engines.>" }, handler("b"));
    const ids = Array.from({ length: 20 }, () => randomUUID());
    for (const id of ids) await bus.publish(engineStateSubject("ws", "shared"), bytes(id), { id });
    await waitFor(() => handledBy.size === 20, 10_000);
    await pause(200);
    for (const id of ids) expect(handledBy.get(id)).toHaveLength(1);
    const replicas = new Set([...handledBy.values()].flat());
    expect(replicas).toEqual(new Set(["a", "b"]));
  });

  it("replication keeps the last message per subject; a late reader replays from the start and then follows", async () => {
    const a = catalogueSubject("daiEngineVersions", "global", "1.11.0");
    const b = catalogueSubject("daiEngineVersions", "global", "1.10.7");
    const c = catalogueSubject("daiEngineProfiles", "global", "default");
    expect(a).toBe("enginemanager.catalogue.daiEngineVersions.global.1%2E11%2E0");
    await bus.publish(a, bytes("a1"), { id: randomUUID() });
    await bus.publish(b, bytes("b1"), { id: randomUUID() });
    await bus.publish(a, bytes("a2"), { id: randomUUID() });
    await bus.publish(c, bytes("c1"), { id: randomUUID() });
    const del = await bus.publish(b, bytes(""), { id: randomUUID(), tombstone: true });
    expect(del.stream).toBe(bus.streams.catalogue);

    const model = new Map<string, string>();
    const seen: string[] = [];
    const replay = bus.replay({ subjects: "enginemanager.catalogue.>" }, async (m) => {
      seen.push(m.tombstone ? `-${m.subject}` : text(m.data));
      if (m.tombstone) model.delete(m.subject);
      else model.set(m.subject, text(m.data));
    });
    await replay.ready;
    expect(seen).toEqual(["a2", "c1", `-${b}`]);
    expect([...model.entries()]).toEqual([
      [a, "a2"],
      [c, "c1"],
    ]);

    await bus.publish(a, bytes("a3"), { id: randomUUID() });
    await waitFor(() => model.get(a) === "a3");
    await replay.stop();

    // A filtered reader sees only its kind.
    const profiles: string[] = [];
    const filtered = bus.replay(
      { subjects: "enginemanager.catalogue.daiEngineProfiles.>" },
      async (m) => void profiles.push(text(m.data)),
    );
    await filtered.ready;
    expect(profiles).toEqual(["c1"]);
    await filtered.stop();
  });

  it("tells each stream's last sequence: 0 when empty, the newest publish's after it, duplicates not counted", async () => {
    expect(await bus.lastSequence("catalogue")).toBe(0);
    expect(await bus.lastSequence("events")).toBe(0);
    const subject = catalogueSubject("daiEngineVersions", "global", "1.11.0");
    await bus.publish(subject, bytes("a"), { id: "first" });
    const second = await bus.publish(subject, bytes("b"), { id: randomUUID() });
    await bus.publish(subject, bytes("b"), { id: "first" });
    // The first message left the stream (one per subject); the newest is the last sequence.
    expect(await bus.lastSequence("catalogue")).toBe(second.seq);
    const event = await bus.publish(engineStateSubject("ws", "e1"), bytes("x"), { id: randomUUID() });
    expect(await bus.lastSequence("events")).toBe(event.seq);
    expect(await bus.lastSequence("catalogue")).toBe(second.seq);
  });

  it("replay becomes ready when messages it counted at the start are superseded before it reads them", async () => {
    // A service starting while an administrator edits the catalogue. More messages than one pull
    // fetches, so that some are replaced after the replay began but before they reach it.
    const subjects = Array.from({ length: 400 }, (_, i) => catalogueSubject("daiEngineProfiles", "global", `p${i}`));
    await Promise.all(subjects.map((s) => bus.publish(s, bytes("1"), { id: randomUUID() })));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const model = new Map<string, string>();
    const replay = bus.replay({ subjects: "enginemanager.catalogue.>" }, async (m) => {
      await gate;
      if (m.tombstone) model.delete(m.subject);
      else model.set(m.subject, text(m.data));
    });
    await pause(200);
    await Promise.all(subjects.slice(350).map((s) => bus.publish(s, bytes(""), { id: randomUUID(), tombstone: true })));
    release();
    await Promise.race([
      replay.ready,
      pause(5000).then(() => Promise.reject(new Error("the replay never became ready"))),
    ]);
    await waitFor(() => model.size === 350);
    await replay.stop();
  });

  it("replay is ready at once on an empty stream, retries a failing handler and never skips", async () => {
    const empty = bus.replay({ subjects: "enginemanager.catalogue.>" }, async () => {});
    await empty.ready;
    await empty.stop();

    await bus.publish(catalogueSubject("images", "global", "x"), bytes("x"), { id: randomUUID() });
    let calls = 0;
    const retrying = bus.replay({ subjects: "enginemanager.catalogue.>", backoff: [20] }, async () => {
      calls++;
      if (calls < 3) throw new Error("not yet");
    });
    await retrying.ready;
    expect(calls).toBe(3);
    await retrying.stop();

    const stopped = bus.replay({ subjects: "enginemanager.engines.nothing.>" }, async () => {});
    await stopped.stop();
  });

  it("drops duplicate publishes of the same event id", async () => {
    const seen: string[] = [];
    await consume("dedup", { subjects: "enginemanager.engines.>" }, async (m) => void seen.push(m.id));
    const id = randomUUID();
    const first = await bus.publish(engineStateSubject("ws", "d"), bytes("x"), { id });
    const again = await bus.publish(engineStateSubject("ws", "d"), bytes("x"), { id });
    expect(again.duplicate).toBe(true);
    expect(again.seq).toBe(first.seq);
    await bus.publish(engineStateSubject("ws", "d"), bytes("y"), { id: randomUUID() });
    await waitFor(() => seen.length === 2);
    await pause(100);
    expect(seen.filter((s) => s === id)).toHaveLength(1);
  });

  it("handles an event once by id even when it is redelivered (idempotent handler)", async () => {
    const effects: string[] = [];
    const idempotent = createMemoryIdempotentHandler(async (m) => void effects.push(text(m.data)));
    let calls = 0;
    await consume("idem", { subjects: "enginemanager.engines.>", backoff: [20] }, async (m) => {
      calls++;
      await idempotent(m);
      // The effect happened but the acknowledgement is "lost": the bus redelivers.
      if (calls === 1) throw new Error("lost ack");
    });
    await bus.publish(engineStateSubject("ws", "i"), bytes("effect"), { id: randomUUID() });
    await waitFor(() => calls === 2);
    await pause(100);
    expect(calls).toBe(2);
    expect(effects).toEqual(["effect"]);
  });
});
