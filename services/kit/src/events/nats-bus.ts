/**
 * NATS JetStream event bus. Two streams: an events stream (limits retention by age) and a
 * catalogue replication stream that keeps the last message per subject. Durable consumers are pull
 * consumers, so replicas using the same name share the work. The parts: nats-streams.ts (streams
 * and consumers on the server), nats-consumer.ts (durable consumers), nats-replay.ts (replays).
 */
import { headers as natsHeaders, type MsgHdrs, type NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import {
  JetStreamApiCodes,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
} from "@nats-io/jetstream";
import {
  DEFAULT_EVENT_DOMAINS,
  TOMBSTONE_HEADER,
  checkPublish,
  consoleLogger,
  streamNames,
  validateConsumerName,
  validatePrefix,
  type EventBus,
  type EventBusCommonOptions,
  type EventBusLogger,
  type ConsumerLag,
  type EventStreamKind,
} from "./event-bus.js";
import type { NatsBusCore } from "./nats-core.js";
import { startNatsConsumer } from "./nats-consumer.js";
import { startNatsReplay } from "./nats-replay.js";
import { ensureEventStreams, isApiError } from "./nats-streams.js";

export interface NatsEventBusOptions extends EventBusCommonOptions {
  /** Server URL(s), e.g. `nats://127.0.0.1:4222`. */
  url: string | string[];
  /** Connection name shown by the server's monitoring. */
  name?: string;
  /** Stream replicas in a clustered deployment. Default 1. */
  replicas?: number;
  /** Milliseconds between reconnection attempts. Default 1000. */
  reconnectTimeWait?: number;
  /** Milliseconds to wait for a publish acknowledgement. Default 5000. */
  publishTimeout?: number;
}

export interface NatsEventBus extends EventBus {
  readonly kind: "nats";
  readonly connection: NatsConnection;
  /** Closes the bus and deletes both streams with their consumers (test clean-up). */
  destroy(): Promise<void>;
}

/**
 * Connects and makes sure both streams exist with the wanted configuration. The connection retries
 * forever (also the first time), so a service can start before NATS is up and survives outages.
 */
export async function createNatsEventBus(options: NatsEventBusOptions): Promise<NatsEventBus> {
  const prefix = validatePrefix(options.prefix);
  const names = streamNames(prefix);
  const domains = options.eventDomains ?? DEFAULT_EVENT_DOMAINS;
  const logger = options.logger ?? consoleLogger;
  const publishTimeout = options.publishTimeout ?? 5_000;
  const toWire = (subject: string) => (prefix ? `${prefix}.${subject}` : subject);
  const fromWire = (subject: string) => (prefix ? subject.slice(prefix.length + 1) : subject);

  const nc = await connectNats(options, logger);
  let jsm: JetStreamManager;
  let js: JetStreamClient;
  try {
    jsm = await jetstreamManager(nc);
    js = jetstream(nc, { timeout: publishTimeout });
    await ensureEventStreams(jsm, { ...options, names, domains, toWire });
  } catch (err) {
    await nc.close().catch(() => {});
    throw err;
  }

  const core: NatsBusCore = {
    js,
    jsm,
    names,
    domains,
    logger,
    toWire,
    fromWire,
    subscriptions: new Set(),
    replays: new Set(),
    lagSources: new Map(),
  };
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new Error("event bus is closed");
  };

  const stopAll = async () => {
    await Promise.allSettled([...core.subscriptions].map((s) => s.stop()));
    await Promise.allSettled([...core.replays].map((r) => r.stop()));
  };

  const bus: NatsEventBus = {
    kind: "nats",
    streams: names,
    connection: nc,

    async publish(subject, data, publishOptions) {
      assertOpen();
      checkPublish(subject, publishOptions, domains);
      const h: MsgHdrs = natsHeaders();
      for (const [k, v] of Object.entries(publishOptions.headers ?? {})) h.set(k, v);
      if (publishOptions.tombstone) h.set(TOMBSTONE_HEADER, "true");
      const ack = await js.publish(toWire(subject), data, {
        msgID: publishOptions.id,
        headers: h,
        timeout: publishTimeout,
      });
      return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
    },

    async consume(name, consumeOptions, handler) {
      assertOpen();
      return startNatsConsumer(core, name, consumeOptions, handler);
    },

    replay(replayOptions, handler) {
      assertOpen();
      return startNatsReplay(core, replayOptions, handler);
    },

    async lastSequence(kind) {
      assertOpen();
      return (await jsm.streams.info(names[kind])).state.last_seq;
    },

    async lag() {
      const found = await Promise.all(
        [...core.lagSources.values()].map((source) =>
          Promise.race([
            source().catch(() => undefined),
            new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2_000).unref()),
          ]),
        ),
      );
      return found.filter((x): x is ConsumerLag => x !== undefined);
    },

    async deleteConsumer(kind: EventStreamKind, name) {
      validateConsumerName(name);
      try {
        await jsm.consumers.delete(names[kind], name);
      } catch (err) {
        if (!isApiError(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
      }
    },

    async destroy() {
      await stopAll();
      for (const name of Object.values(names)) {
        try {
          await jsm.streams.delete(name);
        } catch (err) {
          if (!isApiError(err, JetStreamApiCodes.StreamNotFound)) throw err;
        }
      }
      await bus.close();
    },

    async close() {
      if (closed) return;
      await stopAll();
      closed = true;
      await nc.drain().catch(() => nc.close());
    },
  };
  return bus;
}

/** A connection that retries forever, logging when it is lost and restored. */
async function connectNats(options: NatsEventBusOptions, logger: EventBusLogger): Promise<NatsConnection> {
  const nc = await connect({
    servers: options.url,
    name: options.name ?? "aiem",
    maxReconnectAttempts: -1,
    waitOnFirstConnect: true,
    reconnectTimeWait: options.reconnectTimeWait ?? 1_000,
  });
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === "disconnect") logger.warn("NATS connection lost; reconnecting", { server: s.server });
      else if (s.type === "reconnect") logger.warn("NATS connection restored", { server: s.server });
    }
  })().catch(() => {});
  return nc;
}
