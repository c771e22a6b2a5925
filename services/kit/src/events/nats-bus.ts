/**
 * NATS JetStream event bus. Two streams: an events stream (limits retention by age) and a
 * catalogue replication stream that keeps the last message per subject. Durable consumers are pull
 * consumers, so replicas using the same name share the work.
 */
import { headers as natsHeaders, nanos, type MsgHdrs, type NatsConnection } from "@nats-io/nats-core";
import { connect } from "@nats-io/transport-node";
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
  type ConsumerConfig,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StreamConfig,
} from "@nats-io/jetstream";
import {
  CATALOGUE_DOMAIN,
  DEFAULT_ACK_WAIT,
  DEFAULT_BACKOFF,
  DEFAULT_DUPLICATE_WINDOW,
  DEFAULT_EVENT_DOMAINS,
  DEFAULT_EVENTS_MAX_AGE,
  DEFAULT_MAX_DELIVER,
  EVENT_ID_HEADER,
  SUBJECT_ROOT,
  TOMBSTONE_HEADER,
  backoffDelay,
  checkPublish,
  consoleLogger,
  errorFields,
  createReadyLatch,
  handleUntilDone,
  streamKindOfAll,
  streamNames,
  toArray,
  validateConsumerName,
  validatePrefix,
  type EventBus,
  type EventBusCommonOptions,
  type EventHandler,
  type EventMessage,
  type ConsumerLag,
  type EventStreamKind,
  type Replay,
  type Subscription,
} from "./event-bus.js";

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

  let jsm: JetStreamManager;
  let js: JetStreamClient;
  try {
    jsm = await jetstreamManager(nc);
    js = jetstream(nc, { timeout: publishTimeout });
    const duplicateWindow = nanos(options.duplicateWindow ?? DEFAULT_DUPLICATE_WINDOW);
    const replicas = options.replicas ?? 1;
    await ensureStream(jsm, {
      name: names.events,
      subjects: domains.map((d) => toWire(`${SUBJECT_ROOT}.${d}.>`)),
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: nanos(options.eventsMaxAge ?? DEFAULT_EVENTS_MAX_AGE),
      duplicate_window: duplicateWindow,
      num_replicas: replicas,
    });
    await ensureStream(jsm, {
      name: names.catalogue,
      subjects: [toWire(`${SUBJECT_ROOT}.${CATALOGUE_DOMAIN}.>`)],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_msgs_per_subject: 1,
      duplicate_window: duplicateWindow,
      num_replicas: replicas,
    });
  } catch (err) {
    await nc.close().catch(() => {});
    throw err;
  }

  const subscriptions = new Set<Subscription>();
  const replays = new Set<Replay>();
  /** What lag() asks the server about: each durable consumer's and replay's current consumer. */
  const lagSources = new Map<object, () => Promise<ConsumerLag | undefined>>();
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new Error("event bus is closed");
  };

  const stopAll = async () => {
    await Promise.allSettled([...subscriptions].map((s) => s.stop()));
    await Promise.allSettled([...replays].map((r) => r.stop()));
  };

  /** The sequence of the newest message stored on any of `filters` (wildcards allowed), 0 when none. */
  const lastMatching = async (stream: string, filters: readonly string[]): Promise<number> => {
    const last = await Promise.all(filters.map((f) => jsm.streams.getMessage(stream, { last_by_subj: f })));
    return Math.max(0, ...last.map((m) => m?.seq ?? 0));
  };

  const toEvent = (m: JsMsg, deliveryCount: number): EventMessage => {
    const user: Record<string, string> = {};
    let id = "";
    let tombstone = false;
    for (const key of m.headers?.keys() ?? []) {
      const value = m.headers!.get(key);
      if (key === EVENT_ID_HEADER) id = value;
      else if (key === TOMBSTONE_HEADER) tombstone = value === "true";
      else if (!/^nats-/iu.test(key)) user[key] = value;
    }
    return {
      id,
      subject: fromWire(m.subject),
      data: m.data,
      headers: user,
      seq: m.seq,
      time: m.time,
      deliveryCount,
      tombstone,
    };
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
      validateConsumerName(name);
      const filters = toArray(consumeOptions.subjects);
      const stream = names[streamKindOfAll(filters, domains)];
      const maxDeliver = consumeOptions.maxDeliver ?? DEFAULT_MAX_DELIVER;
      const backoff = consumeOptions.backoff ?? DEFAULT_BACKOFF;
      const concurrency = Math.max(1, consumeOptions.concurrency ?? 1);
      const wireFilters = filters.map(toWire);
      await ensureConsumer(jsm, stream, {
        durable_name: name,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: consumeOptions.deliver === "new" ? DeliverPolicy.New : DeliverPolicy.All,
        ack_wait: nanos(consumeOptions.ackWait ?? DEFAULT_ACK_WAIT),
        max_deliver: maxDeliver,
        ...(wireFilters.length === 1 ? { filter_subject: wireFilters[0]! } : { filter_subjects: wireFilters }),
      });
      const consumer = await js.consumers.get(stream, name);
      // A small pull batch: buffered messages are already "delivered" and their ack timers run, and
      // a big batch would let one replica hoard the work.
      const messages: ConsumerMessages = await consumer.consume({ max_messages: concurrency * 2 });
      void watchStatus(messages, (note) => logger.warn("consumer status", { consumer: name, ...note }));

      let stopping = false;
      const running = new Set<Promise<void>>();
      const handle = async (m: JsMsg): Promise<void> => {
        const deliveries = m.info.deliveryCount;
        try {
          await handler(toEvent(m, deliveries));
        } catch (err) {
          if (maxDeliver > 0 && deliveries >= maxDeliver) {
            logger.error("giving up on event after max deliveries", {
              consumer: name,
              subject: fromWire(m.subject),
              deliveries,
              ...errorFields(err),
            });
            m.term(`failed ${deliveries} times`);
          } else {
            logger.warn("event handler failed; will redeliver", {
              consumer: name,
              subject: fromWire(m.subject),
              deliveries,
              ...errorFields(err),
            });
            m.nak(backoffDelay(backoff, deliveries));
          }
          return;
        }
        // Waiting for the server to confirm keeps redeliveries rare; a lost ack is still harmless
        // because handlers are idempotent.
        await m.ackAck().catch(() => false);
      };
      const loop = (async () => {
        for await (const m of messages) {
          if (stopping) {
            // Hand buffered messages back at once instead of letting them wait out ackWait.
            m.nak();
            continue;
          }
          while (running.size >= concurrency) await Promise.race(running);
          const p: Promise<void> = handle(m).finally(() => running.delete(p));
          running.add(p);
        }
      })();

      let stopped: Promise<void> | undefined;
      const subscription: Subscription = {
        name,
        stop() {
          stopped ??= (async () => {
            stopping = true;
            // close() settles only once the loop has drained the iterator, so wait for the loop.
            void messages.close().catch(() => {});
            await loop.catch(() => {});
            await Promise.allSettled([...running]);
            subscriptions.delete(subscription);
            lagSources.delete(subscription);
          })();
          return stopped;
        },
      };
      subscriptions.add(subscription);
      const kind = streamKindOfAll(filters, domains);
      lagSources.set(subscription, async () => {
        const info = await consumer.info(false);
        return { consumer: name, stream: kind, pending: info.num_pending + info.num_ack_pending };
      });
      return subscription;
    },

    replay(replayOptions, handler: EventHandler) {
      assertOpen();
      const filters = toArray(replayOptions.subjects);
      const kind = streamKindOfAll(filters, domains);
      const stream = names[kind];
      const backoff = replayOptions.backoff ?? DEFAULT_BACKOFF;
      const wireFilters = filters.map(toWire);
      const abort = new AbortController();
      const ready = createReadyLatch();
      let messages: ConsumerMessages | undefined;
      let following: { info(cached?: boolean): Promise<{ num_pending: number }> } | undefined;
      const handling = { now: false };

      const loop = (async () => {
        // Caught up once the newest message matching the filters when we began has been handled (or
        // a later one on its subject, if it was superseded meanwhile). The server's pending count is
        // not used: it keeps counting messages removed before delivery, and then never reaches 0.
        const target = await lastMatching(stream, wireFilters);
        if (target === 0) ready.resolve();
        // The sequence after the last message handled, where a new consumer takes over.
        let next = 0;
        while (!abort.signal.aborted) {
          const consumer = await js.consumers.get(stream, {
            filter_subjects: wireFilters.length === 1 ? wireFilters[0]! : [...wireFilters],
            ...(next === 0
              ? { deliver_policy: DeliverPolicy.All }
              : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: next }),
          });
          if (abort.signal.aborted) return;
          following = consumer;
          const current = await consumer.consume({ max_messages: 256 });
          messages = current;
          // close() settles only once the iterator has been drained, which the loop below does.
          if (abort.signal.aborted) void current.close().catch(() => {});
          // When the server loses the consumer (a restart), the client recreates it but then pulls
          // one message per request expiry (30 s): a stall. Start a consumer of our own instead.
          let reset = false;
          void (async () => {
            for await (const s of current.status()) {
              if (s.type === "reset" || s.type === "ordered_consumer_recreated") {
                reset = true;
                void current.close().catch(() => {});
                return;
              }
            }
          })().catch(() => {});
          for await (const m of current) {
            if (abort.signal.aborted || reset) break;
            const event = toEvent(m, 1);
            handling.now = true;
            await handleUntilDone(handler, event, { backoff, signal: abort.signal, logger });
            handling.now = false;
            next = m.seq + 1;
            if (m.seq >= target) ready.resolve();
          }
          if (!reset) return;
          logger.warn("replay consumer lost by the server; resuming", { stream, from: next });
        }
      })()
        .catch((err: unknown) => {
          if (!ready.isReady) ready.reject(err);
          else if (!abort.signal.aborted) logger.error("replay failed", errorFields(err));
        })
        .finally(() => {
          ready.reject(new Error("replay stopped before it caught up"));
        });

      const replay: Replay = {
        ready: ready.promise,
        async stop() {
          abort.abort();
          void messages?.close().catch(() => {});
          await loop;
          replays.delete(replay);
          lagSources.delete(replay);
        },
      };
      replays.add(replay);
      lagSources.set(replay, async () => {
        if (!following) return undefined;
        // Pending counts what the server has not yet sent; the message in hand is not yet handled.
        const info = await following.info(false);
        return {
          consumer: replayOptions.name ?? "replay",
          stream: kind,
          pending: info.num_pending + (handling.now ? 1 : 0),
        };
      });
      return replay;
    },

    async lastSequence(kind) {
      assertOpen();
      return (await jsm.streams.info(names[kind])).state.last_seq;
    },

    async lag() {
      const found = await Promise.all(
        [...lagSources.values()].map((source) =>
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

function isApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}

async function watchStatus(messages: ConsumerMessages, report: (note: Record<string, unknown>) => void): Promise<void> {
  try {
    for await (const s of messages.status()) {
      if (s.type === "consumer_deleted" || s.type === "consumer_not_found" || s.type === "stream_not_found")
        report({ ...s });
    }
  } catch {
    // The status iterator ends with the consumer; nothing to report.
  }
}

type WantedStream = Partial<StreamConfig> & { name: string; subjects: string[] };

async function ensureStream(jsm: JetStreamManager, wanted: WantedStream): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const info = await jsm.streams.info(wanted.name);
      const current = info.config as unknown as Record<string, unknown>;
      const differs = Object.entries(wanted).some(
        ([k, v]) =>
          JSON.stringify(k === "subjects" ? [...(v as string[])].sort() : v) !==
          JSON.stringify(k === "subjects" ? [...((current[k] as string[] | undefined) ?? [])].sort() : current[k]),
      );
      if (differs) await jsm.streams.update(wanted.name, { ...info.config, ...wanted });
      return;
    } catch (err) {
      if (!isApiError(err, JetStreamApiCodes.StreamNotFound) || attempt > 2) throw err;
    }
    try {
      await jsm.streams.add(wanted);
      return;
    } catch (err) {
      // Another replica created it first: loop round and compare.
      if (attempt > 2) throw err;
    }
  }
}

async function ensureConsumer(
  jsm: JetStreamManager,
  stream: string,
  wanted: Partial<ConsumerConfig> & { durable_name: string },
): Promise<void> {
  let current: ConsumerConfig | undefined;
  try {
    current = (await jsm.consumers.info(stream, wanted.durable_name)).config;
  } catch (err) {
    if (!isApiError(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
  }
  if (!current) {
    await jsm.consumers.add(stream, wanted);
    return;
  }
  // The latest replica's settings win; the start position of an existing consumer is kept.
  const update: Partial<ConsumerConfig> = {};
  if (current.ack_wait !== wanted.ack_wait) update.ack_wait = wanted.ack_wait!;
  if (current.max_deliver !== wanted.max_deliver) update.max_deliver = wanted.max_deliver!;
  if ((current.filter_subject ?? "") !== (wanted.filter_subject ?? "")) update.filter_subject = wanted.filter_subject!;
  if (JSON.stringify(current.filter_subjects ?? []) !== JSON.stringify(wanted.filter_subjects ?? []))
    update.filter_subjects = wanted.filter_subjects!;
  if (Object.keys(update).length > 0) await jsm.consumers.update(stream, wanted.durable_name, update);
}
