import { randomUUID } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { describe, expect, it } from "vitest";
import { createEventBus } from "./create-event-bus.js";
import { engineStateSubject, silentLogger, type EventMessage } from "./event-bus.js";
import { createNatsEventBus } from "./nats-bus.js";
import { uniqueTestPrefix, waitFor } from "./testing.js";

const NATS_URL = process.env.NATS_URL;

describe.skipIf(!NATS_URL)("NATS event bus specifics", () => {
  it("creates its streams once, updates them when domains change, and keeps header names as given", async () => {
    const prefix = uniqueTestPrefix("nats");
    const first = await createEventBus({ natsUrl: NATS_URL!, prefix, logger: silentLogger });
    expect(first.kind).toBe("nats");
    const second = await createNatsEventBus({
      url: NATS_URL!,
      prefix,
      logger: silentLogger,
      eventDomains: ["engines", "extra"],
    });
    try {
      const jsm = await jetstreamManager(second.connection);
      const info = await jsm.streams.info(second.streams.events);
      expect(info.config.subjects.sort()).toEqual([
        `${prefix}.enginemanager.engines.>`,
        `${prefix}.enginemanager.extra.>`,
      ]);
      const catalogue = await jsm.streams.info(second.streams.catalogue);
      expect(catalogue.config.max_msgs_per_subject).toBe(1);

      const seen: EventMessage[] = [];
      await second.consume("hdr", { subjects: "enginemanager.extra.>" }, async (m) => void seen.push(m));
      await second.publish("enginemanager.extra.thing", new Uint8Array([1]), {
        id: randomUUID(),
        headers: { "x-lower": "v", "Mixed-Case": "w" },
      });
      await waitFor(() => seen.length === 1);
      expect(seen[0]!.headers).toEqual({ "x-lower": "v", "Mixed-Case": "w" });

      // A later replica with other settings updates the durable consumer instead of failing.
      const again = await second.consume("hdr", { subjects: "enginemanager.extra.>", ackWait: 5_000 }, async () => {});
      const ci = await jsm.consumers.info(second.streams.events, "hdr");
      expect(ci.config.ack_wait).toBe(5_000 * 1_000_000);
      await again.stop();
      await second.deleteConsumer("events", "hdr");
      await expect(jsm.consumers.info(second.streams.events, "hdr")).rejects.toThrow();
    } finally {
      await first.close();
      await second.destroy();
    }
  });

  it("keeps subjects of differently prefixed buses apart", async () => {
    const a = await createNatsEventBus({ url: NATS_URL!, prefix: uniqueTestPrefix("a"), logger: silentLogger });
    const b = await createNatsEventBus({ url: NATS_URL!, prefix: uniqueTestPrefix("b"), logger: silentLogger });
    try {
      const seenByB: string[] = [];
      await b.consume("r", { subjects: "enginemanager.engines.>" }, async (m) => void seenByB.push(m.id));
      await a.publish(engineStateSubject("ws", "e"), new Uint8Array(), { id: randomUUID() });
      const mine = randomUUID();
      await b.publish(engineStateSubject("ws", "e"), new Uint8Array(), { id: mine });
      await waitFor(() => seenByB.length >= 1);
      await new Promise((r) => setTimeout(r, 100));
      expect(seenByB).toEqual([mine]);
    } finally {
      await a.destroy();
      await b.destroy();
    }
  });
});
