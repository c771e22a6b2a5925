import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateToLatest, type Database } from "../db/database.js";
import { silentLogger } from "../logger.js";
import { createTestDatabase } from "../testing/test-database.js";
import { createReplicaRegistry, replicasMigration } from "./replica-registry.js";

describe("replica registry", () => {
  let database: Database;

  beforeAll(async () => {
    database = await createTestDatabase("replicas");
    await migrateToLatest(database, { "0001_replicas": replicasMigration });
  });
  afterAll(() => database.destroy());

  const registry = (id: string, url: string | undefined, leaseMs = 10_000) =>
    createReplicaRegistry({ database: () => database, id, url: () => url, leaseMs, logger: silentLogger });

  it("tells where a live replica answers, and nothing for one that stopped or never came", async () => {
    const a = registry("host-a:/data/a", "http://10.0.0.1:8083");
    const b = registry("host-b:/data/b", "http://10.0.0.2:8083");
    await a.start();
    await b.start();
    expect(await b.urlOf(a.id)).toBe("http://10.0.0.1:8083");
    expect(await a.urlOf(b.id)).toBe("http://10.0.0.2:8083");
    await a.stop();
    expect(await b.urlOf(a.id)).toBeUndefined();
    expect(await b.urlOf("host-c:/data/c")).toBeUndefined();
    await b.stop();
  });

  it("counts a replica that stops renewing as down once its lease ends, and as itself when it comes back", async () => {
    // A replica that cannot renew (here: its database handle is gone, as in a crash) keeps its
    // row, and the lease alone ends it.
    let reachable: Database | undefined = database;
    const crashed = createReplicaRegistry({
      database: () => reachable,
      id: "host-d:/data/d",
      url: () => "http://10.0.0.4:8083",
      leaseMs: 300,
      logger: silentLogger,
    });
    await crashed.start();
    const observer = registry("host-e:/data/e", "http://10.0.0.5:8083");
    expect(await observer.urlOf(crashed.id)).toBe("http://10.0.0.4:8083");
    reachable = undefined;
    await expect.poll(() => observer.urlOf(crashed.id), { timeout: 5_000 }).toBeUndefined();
    await crashed.stop();
    const back = registry("host-d:/data/d", "http://10.0.0.9:8083");
    await back.start();
    expect(await observer.urlOf("host-d:/data/d")).toBe("http://10.0.0.9:8083");
    await back.stop();
  });

  it("waits for its address before it registers (a replica listening on port 0)", async () => {
    let url: string | undefined;
    const late = createReplicaRegistry({
      database: () => database,
      id: "host-f:/data/f",
      url: () => url,
      leaseMs: 300,
      logger: silentLogger,
    });
    await late.start();
    expect(await late.urlOf(late.id)).toBeUndefined();
    url = "http://10.0.0.6:8083";
    await expect.poll(() => late.urlOf(late.id), { timeout: 5_000 }).toBe("http://10.0.0.6:8083");
    await late.stop();
  });
});
