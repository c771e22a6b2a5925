// A replay (the catalogue's read models follow the catalogue stream with one) keeps following its
// stream through a restart of NATS. The client library recreates the consumer the server lost,
// but then pulled one message per 30 s request expiry: the fault suite saw a replica's catalogue
// copy keep a deleted version. Needs nats-server (Debian's), run privately so it can be restarted.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNatsEventBus, type NatsEventBus } from "@aiem/kit/events";
import { startPrivateNats, type PrivateServer } from "./private-servers.js";

const haveNats = spawnSync("nats-server", ["--version"]).status === 0;

describe.skipIf(!haveNats)("a replay through a NATS restart", () => {
  const dir = mkdtempSync(join(tmpdir(), "aiem-nats-restart-"));
  let nats: PrivateServer;
  let bus: NatsEventBus;

  beforeAll(async () => {
    nats = await startPrivateNats(dir);
    bus = await createNatsEventBus({ url: nats.url, prefix: "restart", reconnectTimeWait: 100 });
  });

  afterAll(async () => {
    await bus?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("gets every message published after the restart, in order, within seconds", async () => {
    const subject = (i: number) => `enginemanager.catalogue.daiEngineVersions.global.v${i}`;
    const seen: number[] = [];
    const replay = bus.replay({ subjects: "enginemanager.catalogue.>" }, async (e) => {
      seen.push(Number(new TextDecoder().decode(e.data)));
    });
    await replay.ready;
    const publish = async (i: number) => {
      for (const deadline = Date.now() + 15_000; ; ) {
        try {
          await bus.publish(subject(i), new TextEncoder().encode(String(i)), { id: `m${i}` });
          return;
        } catch (err) {
          // Until the connection is back.
          if (Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    const until = async (n: number, timeoutMs: number) => {
      for (const deadline = Date.now() + timeoutMs; seen.length < n; await new Promise((r) => setTimeout(r, 50))) {
        if (Date.now() > deadline)
          throw new Error(`saw ${JSON.stringify(seen)} after ${timeoutMs} ms, wanted ${n} messages`);
      }
    };
    await publish(1);
    await until(1, 10_000);
    await nats.restart();
    for (let i = 2; i <= 6; i++) await publish(i);
    // Well under the library's 30 s request expiry, which is what a stalled consumer waits for.
    await until(6, 10_000);
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
    await replay.stop();
  }, 60_000);
});
