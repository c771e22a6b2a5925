/**
 * In-process event bus (embedded default): the JetStream semantics the product relies on, kept in
 * memory for the life of the process. Durable consumer positions survive a replica stopping and a
 * new one starting under the same name, but not a process restart. Streams are in memory-stream.ts,
 * replays in memory-replay.ts.
 */
import {
  DEFAULT_ACK_WAIT,
  DEFAULT_BACKOFF,
  DEFAULT_DUPLICATE_WINDOW,
  DEFAULT_EVENT_DOMAINS,
  DEFAULT_EVENTS_MAX_AGE,
  DEFAULT_MAX_DELIVER,
  backoffDelay,
  checkPublish,
  consoleLogger,
  errorFields,
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
import { startMemoryReplay } from "./memory-replay.js";
import { MemoryStream, type StoredMessage, toEventMessage } from "./memory-stream.js";

export interface MemoryEventBusOptions extends EventBusCommonOptions {
  /** Cap on messages kept in the events stream (oldest dropped first). Default 100 000. */
  eventsMaxMessages?: number;
}

interface Pending {
  deliveries: number;
  /** Identifies the current delivery, so a stale failure or timeout cannot schedule a second redelivery. */
  token: object | undefined;
  timer: NodeJS.Timeout | undefined;
}

interface MemorySubscriber {
  readonly concurrency: number;
  inFlight: number;
  readonly handler: EventHandler;
  readonly running: Map<object, Promise<void>>;
}

class MemoryConsumer {
  private cursor: number;
  private readonly pending = new Map<number, Pending>();
  private readonly ready: number[] = [];
  private readonly subscribers: MemorySubscriber[] = [];
  private rr = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly detach: () => void;
  private closed = false;

  constructor(
    readonly name: string,
    private readonly stream: MemoryStream,
    public filters: readonly string[],
    deliver: "all" | "new",
    readonly settings: { ackWait: number; maxDeliver: number; backoff: readonly number[] },
    private readonly logger: EventBusLogger,
  ) {
    this.cursor = deliver === "new" ? stream.lastSeq + 1 : 1;
    // Deferred so handlers never run inside the publisher's call stack.
    this.detach = stream.onAppend(() => queueMicrotask(() => this.pump()));
  }

  /** Messages not yet handled: after the cursor, and delivered but not acknowledged. */
  pendingCount(): number {
    return this.stream.countFrom(this.cursor, this.filters) + this.pending.size;
  }

  subscribe(handler: EventHandler, concurrency: number): MemorySubscriber {
    const sub: MemorySubscriber = { concurrency, inFlight: 0, handler, running: new Map() };
    this.subscribers.push(sub);
    this.pump();
    return sub;
  }

  async unsubscribe(sub: MemorySubscriber): Promise<void> {
    const i = this.subscribers.indexOf(sub);
    if (i >= 0) this.subscribers.splice(i, 1);
    await Promise.allSettled([...sub.running.values()]);
  }

  close(): void {
    this.closed = true;
    this.detach();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const p of this.pending.values()) clearTimeout(p.timer);
  }

  private pump(): void {
    while (!this.closed) {
      const sub = this.freeSubscriber();
      if (!sub) return;
      const msg = this.nextMessage();
      if (!msg) return;
      this.deliver(sub, msg);
    }
  }

  private freeSubscriber(): MemorySubscriber | undefined {
    const n = this.subscribers.length;
    for (let k = 0; k < n; k++) {
      const sub = this.subscribers[(this.rr + k) % n]!;
      if (sub.inFlight < sub.concurrency) {
        this.rr = (this.rr + k + 1) % n;
        return sub;
      }
    }
    return undefined;
  }

  private nextMessage(): StoredMessage | undefined {
    while (this.ready.length > 0) {
      const seq = this.ready.shift()!;
      const msg = this.stream.get(seq);
      if (msg) return msg;
      // Aged out of the stream while waiting for redelivery.
      this.pending.delete(seq);
    }
    const msg = this.stream.next(this.cursor, this.filters);
    if (!msg) return undefined;
    this.cursor = msg.seq + 1;
    this.pending.set(msg.seq, { deliveries: 0, token: undefined, timer: undefined });
    return msg;
  }

  private deliver(sub: MemorySubscriber, msg: StoredMessage): void {
    const p = this.pending.get(msg.seq)!;
    p.deliveries++;
    const token = {};
    p.token = token;
    p.timer = setTimeout(
      () => this.failed(msg.seq, token, new Error(`not acknowledged within ${this.settings.ackWait} ms`), 0),
      this.settings.ackWait,
    );
    const event = toEventMessage(msg, p.deliveries);
    sub.inFlight++;
    const key = {};
    const run = (async () => {
      try {
        await sub.handler(event);
        this.acked(msg.seq);
      } catch (err) {
        this.failed(msg.seq, token, err, backoffDelay(this.settings.backoff, p.deliveries));
      } finally {
        sub.inFlight--;
        sub.running.delete(key);
        this.pump();
      }
    })();
    sub.running.set(key, run);
  }

  private acked(seq: number): void {
    // Like JetStream, a late acknowledgement of an earlier delivery still counts.
    const p = this.pending.get(seq);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(seq);
  }

  private failed(seq: number, token: object, err: unknown, delay: number): void {
    const p = this.pending.get(seq);
    if (!p || p.token !== token) return;
    clearTimeout(p.timer);
    p.token = undefined;
    const msg = this.stream.get(seq);
    const { maxDeliver } = this.settings;
    if (maxDeliver > 0 && p.deliveries >= maxDeliver) {
      this.pending.delete(seq);
      this.logger.error("giving up on event after max deliveries", {
        consumer: this.name,
        subject: msg?.subject,
        id: msg?.id,
        deliveries: p.deliveries,
        ...errorFields(err),
      });
      return;
    }
    this.logger.warn("event handler failed; will redeliver", {
      consumer: this.name,
      subject: msg?.subject,
      id: msg?.id,
      deliveries: p.deliveries,
      ...errorFields(err),
    });
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const at = this.ready.findIndex((s) => s > seq);
      this.ready.splice(at < 0 ? this.ready.length : at, 0, seq);
      this.pump();
    }, delay);
    this.timers.add(timer);
  }
}

export function createMemoryEventBus(options: MemoryEventBusOptions = {}): EventBus {
  const prefix = validatePrefix(options.prefix);
  const names = streamNames(prefix);
  const domains = options.eventDomains ?? DEFAULT_EVENT_DOMAINS;
  const logger = options.logger ?? consoleLogger;
  const window = options.duplicateWindow ?? DEFAULT_DUPLICATE_WINDOW;
  const streams: Record<EventStreamKind, MemoryStream> = {
    events: new MemoryStream(
      names.events,
      false,
      options.eventsMaxAge ?? DEFAULT_EVENTS_MAX_AGE,
      options.eventsMaxMessages ?? 100_000,
      window,
    ),
    catalogue: new MemoryStream(names.catalogue, true, Infinity, Infinity, window),
  };
  const consumers = new Map<string, MemoryConsumer>();
  const subscriptions = new Set<Subscription>();
  const replays = new Set<Replay>();
  const replayLag = new Map<Replay, () => ConsumerLag>();
  let closed = false;

  const assertOpen = () => {
    if (closed) throw new Error("event bus is closed");
  };

  return {
    kind: "memory",
    streams: names,

    async publish(subject, data, publishOptions) {
      assertOpen();
      return streams[checkPublish(subject, publishOptions, domains)].append(subject, data, publishOptions);
    },

    async consume(name, consumeOptions: ConsumeOptions, handler) {
      assertOpen();
      validateConsumerName(name);
      const filters = toArray(consumeOptions.subjects);
      const kind = streamKindOfAll(filters, domains);
      const key = `${kind}/${name}`;
      let consumer = consumers.get(key);
      if (!consumer) {
        consumer = new MemoryConsumer(
          name,
          streams[kind],
          [...filters],
          consumeOptions.deliver ?? "all",
          { ackWait: DEFAULT_ACK_WAIT, maxDeliver: DEFAULT_MAX_DELIVER, backoff: DEFAULT_BACKOFF },
          logger,
        );
        consumers.set(key, consumer);
      }
      // Like a JetStream consumer update: the latest replica's settings win.
      consumer.filters = [...filters];
      if (consumeOptions.ackWait !== undefined) consumer.settings.ackWait = consumeOptions.ackWait;
      if (consumeOptions.maxDeliver !== undefined) consumer.settings.maxDeliver = consumeOptions.maxDeliver;
      if (consumeOptions.backoff !== undefined) consumer.settings.backoff = consumeOptions.backoff;
      const owner = consumer;
      const sub = owner.subscribe(handler, Math.max(1, consumeOptions.concurrency ?? 1));
      let stopped: Promise<void> | undefined;
      const subscription: Subscription = {
        name,
        stop() {
          stopped ??= owner.unsubscribe(sub).finally(() => subscriptions.delete(subscription));
          return stopped;
        },
      };
      subscriptions.add(subscription);
      return subscription;
    },

    replay(replayOptions: ReplayOptions, handler) {
      assertOpen();
      const filters = toArray(replayOptions.subjects);
      const kind = streamKindOfAll(filters, domains);
      const { replay, lag } = startMemoryReplay(streams[kind], kind, replayOptions, handler, logger);
      const stop = replay.stop;
      const tracked: Replay = {
        ready: replay.ready,
        async stop() {
          await stop();
          replays.delete(tracked);
          replayLag.delete(tracked);
        },
      };
      replays.add(tracked);
      replayLag.set(tracked, lag);
      return tracked;
    },

    async lag() {
      const out: ConsumerLag[] = [...replayLag.values()].map((f) => f());
      for (const [key, consumer] of consumers) {
        out.push({
          consumer: consumer.name,
          stream: key.split("/")[0] as EventStreamKind,
          pending: consumer.pendingCount(),
        });
      }
      return out;
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
      await Promise.allSettled([...replays].map((r) => r.stop()));
      for (const c of consumers.values()) c.close();
      consumers.clear();
    },
  };
}
