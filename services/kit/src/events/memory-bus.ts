/**
 * In-process event bus (embedded default): the JetStream semantics the product relies on, kept in
 * memory for the life of the process. Durable consumer positions survive a replica stopping and a
 * new one starting under the same name, but not a process restart. Streams are in memory-stream.ts,
 * durable consumers in memory-consumer.ts, replays in memory-replay.ts.
 */
import {
  DEFAULT_ACK_WAIT,
  DEFAULT_BACKOFF,
  DEFAULT_DUPLICATE_WINDOW,
  DEFAULT_EVENT_DOMAINS,
  DEFAULT_EVENTS_MAX_AGE,
  DEFAULT_MAX_DELIVER,
  checkPublish,
  consoleLogger,
  streamKindOfAll,
  streamNames,
  toArray,
  validateConsumerName,
  validatePrefix,
  type ConsumeOptions,
  type ConsumerLag,
  type EventBus,
  type EventBusCommonOptions,
  type EventBusLogger,
  type EventHandler,
  type EventStreamKind,
  type Replay,
  type ReplayOptions,
  type Subscription,
} from "./event-bus.js";
import { MemoryConsumer } from "./memory-consumer.js";
import { startMemoryReplay } from "./memory-replay.js";
import { MemoryStream } from "./memory-stream.js";

export interface MemoryEventBusOptions extends EventBusCommonOptions {
  /** Cap on messages kept in the events stream (oldest dropped first). Default 100 000. */
  eventsMaxMessages?: number;
}

interface MemoryBusState {
  readonly streams: Record<EventStreamKind, MemoryStream>;
  readonly domains: NonNullable<MemoryEventBusOptions["eventDomains"]>;
  readonly logger: EventBusLogger;
  readonly consumers: Map<string, MemoryConsumer>;
  readonly subscriptions: Set<Subscription>;
  readonly replayLag: Map<Replay, () => ConsumerLag>;
}

export function createMemoryEventBus(options: MemoryEventBusOptions = {}): EventBus {
  const prefix = validatePrefix(options.prefix);
  const names = streamNames(prefix);
  const state: MemoryBusState = {
    streams: createMemoryStreams(names, options),
    domains: options.eventDomains ?? DEFAULT_EVENT_DOMAINS,
    logger: options.logger ?? consoleLogger,
    consumers: new Map(),
    subscriptions: new Set(),
    replayLag: new Map(),
  };
  const { streams, consumers, subscriptions, replayLag } = state;
  let closed = false;
  const assertOpen = () => {
    if (closed) throw new Error("event bus is closed");
  };
  return {
    kind: "memory",
    streams: names,
    async publish(subject, data, publishOptions) {
      assertOpen();
      return streams[checkPublish(subject, publishOptions, state.domains)].append(subject, data, publishOptions);
    },
    async consume(name, consumeOptions: ConsumeOptions, handler) {
      assertOpen();
      return consume(state, name, consumeOptions, handler);
    },
    replay(replayOptions: ReplayOptions, handler) {
      assertOpen();
      return replay(state, replayOptions, handler);
    },
    async lag() {
      return lagOf(state);
    },
    async lastSequence(kind) {
      return streams[kind].lastSeq;
    },
    async deleteConsumer(kind, name) {
      const key = `${kind}/${name}`;
      consumers.get(key)?.close();
      consumers.delete(key);
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled([...subscriptions].map((s) => s.stop()));
      await Promise.allSettled([...replayLag.keys()].map((r) => r.stop()));
      for (const c of consumers.values()) c.close();
      consumers.clear();
    },
  };
}

function createMemoryStreams(
  names: ReturnType<typeof streamNames>,
  options: MemoryEventBusOptions,
): Record<EventStreamKind, MemoryStream> {
  const window = options.duplicateWindow ?? DEFAULT_DUPLICATE_WINDOW;
  return {
    events: new MemoryStream(
      names.events,
      false,
      options.eventsMaxAge ?? DEFAULT_EVENTS_MAX_AGE,
      options.eventsMaxMessages ?? 100_000,
      window,
    ),
    catalogue: new MemoryStream(names.catalogue, true, Infinity, Infinity, window),
  };
}

/** Subscribes `handler` to the durable consumer `name`, made on its first subscriber. */
function consume(state: MemoryBusState, name: string, options: ConsumeOptions, handler: EventHandler): Subscription {
  validateConsumerName(name);
  const filters = toArray(options.subjects);
  const kind = streamKindOfAll(filters, state.domains);
  const key = `${kind}/${name}`;
  let consumer = state.consumers.get(key);
  if (!consumer) {
    consumer = new MemoryConsumer(
      name,
      state.streams[kind],
      [...filters],
      options.deliver ?? "all",
      { ackWait: DEFAULT_ACK_WAIT, maxDeliver: DEFAULT_MAX_DELIVER, backoff: DEFAULT_BACKOFF },
      state.logger,
    );
    state.consumers.set(key, consumer);
  }
  // Like a JetStream consumer update: the latest replica's settings win.
  consumer.filters = [...filters];
  if (options.ackWait !== undefined) consumer.settings.ackWait = options.ackWait;
  if (options.maxDeliver !== undefined) consumer.settings.maxDeliver = options.maxDeliver;
  if (options.backoff !== undefined) consumer.settings.backoff = options.backoff;
  const owner = consumer;
  const sub = owner.subscribe(handler, Math.max(1, options.concurrency ?? 1));
  let stopped: Promise<void> | undefined;
  const subscription: Subscription = {
    name,
    stop() {
      stopped ??= owner.unsubscribe(sub).finally(() => state.subscriptions.delete(subscription));
      return stopped;
    },
  };
  state.subscriptions.add(subscription);
  return subscription;
}

/** A replay, tracked until it stops so the bus reports its lag and stops it on close. */
function replay(state: MemoryBusState, options: ReplayOptions, handler: EventHandler): Replay {
  const filters = toArray(options.subjects);
  const kind = streamKindOfAll(filters, state.domains);
  const { replay, lag } = startMemoryReplay(state.streams[kind], kind, options, handler, state.logger);
  const stop = replay.stop;
  const tracked: Replay = {
    ready: replay.ready,
    async stop() {
      await stop();
      state.replayLag.delete(tracked);
    },
  };
  state.replayLag.set(tracked, lag);
  return tracked;
}

function lagOf(state: MemoryBusState): ConsumerLag[] {
  const out: ConsumerLag[] = [...state.replayLag.values()].map((f) => f());
  for (const [key, consumer] of state.consumers) {
    out.push({
      consumer: consumer.name,
      stream: key.split("/")[0] as EventStreamKind,
      pending: consumer.pendingCount(),
    });
  }
  return out;
}
