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
  type PublishOptions,
  type PublishResult,
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
  const { core, nc, publishTimeout } = await openNatsCore(options);
  const { names, jsm } = core;
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new Error("event bus is closed");
  };
  const bus: NatsEventBus = {
    kind: "nats",
    streams: names,
    connection: nc,
    async publish(subject, data, publishOptions) {
      assertOpen();
      return publish(core, publishTimeout, subject, data, publishOptions);
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
    lag: () => lagOf(core),
    async deleteConsumer(kind: EventStreamKind, name) {
      validateConsumerName(name);
      try {
        await jsm.consumers.delete(names[kind], name);
      } catch (err) {
        if (!isApiError(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
      }
    },
    async destroy() {
      await stopAll(core);
      await deleteStreams(core);
      await bus.close();
    },
    async close() {
      if (closed) return;
      await stopAll(core);
      closed = true;
      await nc.drain().catch(() => nc.close());
    },
  };
  return bus;
}

/** Connects, then makes sure both streams exist with the wanted configuration. */
async function openNatsCore(
  options: NatsEventBusOptions,
): Promise<{ core: NatsBusCore; nc: NatsConnection; publishTimeout: number }> {
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
  return { core, nc, publishTimeout };
}

async function publish(
  core: NatsBusCore,
  publishTimeout: number,
  subject: string,
  data: Uint8Array,
  publishOptions: PublishOptions,
): Promise<PublishResult> {
  checkPublish(subject, publishOptions, core.domains);
  const h: MsgHdrs = natsHeaders();
  for (const [k, v] of Object.entries(publishOptions.headers ?? {})) h.set(k, v);
  if (publishOptions.tombstone) h.set(TOMBSTONE_HEADER, "true");
  const ack = await core.js.publish(core.toWire(subject), data, {
    msgID: publishOptions.id,
    headers: h,
    timeout: publishTimeout,
  });
  return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
}

/** Each consumer's and replay's lag; one that takes over 2 s to answer is left out. */
async function lagOf(core: NatsBusCore): Promise<ConsumerLag[]> {
  const found = await Promise.all(
    [...core.lagSources.values()].map((source) =>
      Promise.race([
        source().catch(() => undefined),
        new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2_000).unref()),
      ]),
    ),
  );
  return found.filter((x): x is ConsumerLag => x !== undefined);
}

async function stopAll(core: NatsBusCore): Promise<void> {
  await Promise.allSettled([...core.subscriptions].map((s) => s.stop()));
  await Promise.allSettled([...core.replays].map((r) => r.stop()));
}

async function deleteStreams(core: NatsBusCore): Promise<void> {
  for (const name of Object.values(core.names)) {
    try {
      await core.jsm.streams.delete(name);
    } catch (err) {
      if (!isApiError(err, JetStreamApiCodes.StreamNotFound)) throw err;
    }
  }
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
