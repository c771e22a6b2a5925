/**
 * Test helpers: a bus in its own namespace (unique prefix, so parallel suites never share streams
 * or subjects) that removes its streams on destroy().
 */
import { randomBytes } from "node:crypto";
import net from "node:net";
import { silentLogger, type EventBus, type EventBusCommonOptions } from "./event-bus.js";
import { createMemoryEventBus } from "./memory-bus.js";
import { createNatsEventBus, type NatsEventBusOptions } from "./nats-bus.js";

export interface TestEventBus extends EventBus {
  /** Closes the bus and deletes its streams (NATS). */
  destroy(): Promise<void>;
}

export interface TestEventBusOptions extends EventBusCommonOptions {
  /** "nats" needs a URL (option or NATS_URL). Default: NATS when NATS_URL is set, else memory. */
  kind?: "nats" | "memory";
  natsUrl?: string;
  nats?: Omit<NatsEventBusOptions, "url" | keyof EventBusCommonOptions>;
}

export function uniqueTestPrefix(suite: string): string {
  const clean = suite
    .toLowerCase()
    .replace(/[^a-z0-9]+/gu, "_")
    .slice(0, 24);
  return `t_${clean}_${randomBytes(4).toString("hex")}`;
}

export async function createTestEventBus(suite: string, options: TestEventBusOptions = {}): Promise<TestEventBus> {
  const { kind, natsUrl, nats, ...common } = options;
  const url = natsUrl ?? process.env.NATS_URL;
  const useNats = kind === "nats" || (kind === undefined && !!url);
  const settings = { logger: silentLogger, ...common, prefix: common.prefix ?? uniqueTestPrefix(suite) };
  if (!useNats) {
    const bus = createMemoryEventBus(settings);
    return Object.assign(bus, { destroy: () => bus.close() });
  }
  if (!url) throw new Error("a NATS test bus needs NATS_URL");
  return createNatsEventBus({ ...settings, ...nats, url });
}
export { waitFor } from "../testing/wait-for.js";

export interface TcpProxy {
  /** `nats://127.0.0.1:<port>`: where clients connect instead of the real server. */
  readonly url: string;
  readonly port: number;
  /** Cuts every connection and refuses new ones, as a server that went down. */
  stop(): Promise<void>;
  /** Accepts connections again on the same port. */
  start(): Promise<void>;
}

/**
 * A TCP relay in front of a server, to simulate an outage of a server the test does not own
 * (the shared NATS): stop() looks to clients like the server dying, start() like it coming back.
 */
export async function createTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port: targetPort } = new URL(target.includes("://") ? target : `nats://${target}`);
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => s.destroy());
  };
  const start = async () => {
    if (server) return;
    const srv = net.createServer((client) => {
      const upstream = net.connect(Number(targetPort || 4222), hostname);
      track(client);
      track(upstream);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      srv.once("error", reject);
      srv.listen(port, "127.0.0.1", () => resolve());
    });
    port = (srv.address() as net.AddressInfo).port;
    server = srv;
  };
  await start();
  return {
    get url() {
      return `nats://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    async stop() {
      const srv = server;
      server = undefined;
      for (const s of sockets) s.destroy();
      if (srv) await new Promise<void>((resolve) => srv.close(() => resolve()));
    },
    start,
  };
}
