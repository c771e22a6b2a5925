import http2 from "node:http2";
import type { AddressInfo, Socket } from "node:net";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { EngineService } from "@aiem/proto/enginemanager/v1/engine_service_pb.js";
import { afterEach, describe, expect, it } from "vitest";
import { createReplicaPool } from "./replica-pool.js";

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A replica whose ListEngines never answers: the test ends its connections while a call waits. */
async function startHangingReplica(): Promise<{ url: string; killConnections(): void; arrived: Promise<void> }> {
  let arrive!: () => void;
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  const sockets = new Set<Socket>();
  const server = http2.createServer(
    connectNodeAdapter({
      routes: (router) =>
        router.service(EngineService, {
          listEngines: () => {
            arrive();
            return new Promise(() => {});
          },
        }),
    }),
  );
  server.on("connection", (socket: Socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    killConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
    arrived,
  };
}

describe("a replica pool", () => {
  it("answers UNAVAILABLE, not CANCELED, when a replica's connection ends under a call", async () => {
    const replica = await startHangingReplica();
    const pool = createReplicaPool(replica.url);
    closers.push(() => pool.close());
    const call = createClient(EngineService, pool.transport).listEngines({ parent: "workspaces/a" });
    await replica.arrived;
    replica.killConnections();
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unavailable);
    expect((err as ConnectError).rawMessage).toMatch(/may or may not have taken effect/);
  });

  it("keeps CANCELED when the caller gave up", async () => {
    const replica = await startHangingReplica();
    const pool = createReplicaPool(replica.url);
    closers.push(() => pool.close());
    const abort = new AbortController();
    const call = createClient(EngineService, pool.transport).listEngines(
      { parent: "workspaces/a" },
      { signal: abort.signal },
    );
    await replica.arrived;
    abort.abort();
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as ConnectError).code).toBe(Code.Canceled);
  });
});
