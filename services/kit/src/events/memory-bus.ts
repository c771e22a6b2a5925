/**
 * In-process event bus (embedded default): the JetStream semantics the product relies on, kept in
 * memory for the life of the process. Durable consumer positions survive a replica stopping and a
 * new one starting under the same name, but not a process restart.
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
  createReadyLatch,
  handleUntilDone,
  streamKindOfAll,
  streamNames,
  subjectMatches,
  toArray,
  validateConsumerName,
  validatePrefix,
  type ConsumeOptions,
  type ConsumerLag,
  type EventBus,
  type EventBusCommonOptions,
  type EventBusLogger,
  type EventHandler,
  type EventMessage,
  type EventStreamKind,
  type PublishOptions,
  type PublishResult,
  type Replay,
  type ReplayOptions,
  type Subscription,
} from "./event-bus.js";

export interface MemoryEventBusOptions extends EventBusCommonOptions {
  /** Cap on messages kept in the events stream (oldest dropped first). Default 100 000. */
  eventsMaxMessages?: number;
}

interface StoredMessage {
  seq: number;
  subject: string;
  id: string;
  data: Uint8Array;
  headers: Record<string, string>;
  time: Date;
  tombstone: boolean;
}

class MemoryStream {
  readonly messages: StoredMessage[] = [];
  lastSeq = 0;
  private readonly lastBySubject = new Map<string, number>();
  private readonly recentIds = new Map<string, { seq: number; at: number }>();
  private readonly listeners = new Set<() => void>();

  constructor(
    readonly name: string,
    private readonly lastPerSubject: boolean,
    private readonly maxAge: number,
    private readonly maxMessages: number,
    private readonly duplicateWindow: number,
  ) {}

  append(subject: string, data: Uint8Array, options: PublishOptions): PublishResult {
    const now = Date.now();
    this.prune(now);
    const seen = this.recentIds.get(options.id);
    if (seen) return { stream: this.name, seq: seen.seq, duplicate: true };
    const msg: StoredMessage = {
      seq: ++this.lastSeq,
      subject,
      id: options.id,
      // Copy so a caller reusing its buffer cannot change what was "sent".
      data: new Uint8Array(data),
      headers: { ...options.headers },
      time: new Date(now),
      tombstone: options.tombstone === true,
    };
    if (this.lastPerSubject) {
      const previous = this.lastBySubject.get(subject);
      if (previous !== undefined) this.removeSeq(previous);
      this.lastBySubject.set(subject, msg.seq);
    }
    this.messages.push(msg);
    this.recentIds.set(options.id, { seq: msg.seq, at: now });
    for (const listener of [...this.listeners]) listener();
    return { stream: this.name, seq: msg.seq, duplicate: false };
  }

  /** First stored message with seq >= from matching one of the filters. */
  next(from: number, filters: readonly string[]): StoredMessage | undefined {
    for (let i = this.indexAtOrAfter(from); i < this.messages.length; i++) {
      const m = this.messages[i]!;
      if (filters.some((f) => subjectMatches(f, m.subject))) return m;
    }
    return undefined;
  }

  /** Stored messages with seq >= from matching one of the filters. */
  countFrom(from: number, filters: readonly string[]): number {
    let n = 0;
    for (let i = this.indexAtOrAfter(from); i < this.messages.length; i++) {
      if (filters.some((f) => subjectMatches(f, this.messages[i]!.subject))) n++;
    }
    return n;
  }

  get(seq: number): StoredMessage | undefined {
    const m = this.messages[this.indexAtOrAfter(seq)];
    return m?.seq === seq ? m : undefined;
  }

  /** Resolves on the next append (or when the signal aborts). */
  waitForAppend(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        this.listeners.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.listeners.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  onAppend(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private prune(now: number): void {
    for (const [id, seen] of this.recentIds) {
      if (now - seen.at < this.duplicateWindow) break;
      this.recentIds.delete(id);
    }
    if (this.lastPerSubject) return;
    let drop = 0;
    while (drop < this.messages.length && now - this.messages[drop]!.time.getTime() > this.maxAge) drop++;
    drop = Math.max(drop, this.messages.length + 1 - this.maxMessages);
    if (drop > 0) this.messages.splice(0, drop);
  }

  private removeSeq(seq: number): void {
    const i = this.indexAtOrAfter(seq);
    if (this.messages[i]?.seq === seq) this.messages.splice(i, 1);
  }

  private indexAtOrAfter(seq: number): number {
    let lo = 0;
    let hi = this.messages.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.messages[mid]!.seq < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
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
    const event: EventMessage = {
      id: msg.id,
      subject: msg.subject,
      data: new Uint8Array(msg.data),
      headers: { ...msg.headers },
      seq: msg.seq,
      time: msg.time,
      deliveryCount: p.deliveries,
      tombstone: msg.tombstone,
    };
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
      const stream = streams[kind];
      const backoff = replayOptions.backoff ?? DEFAULT_BACKOFF;
      const abort = new AbortController();
      const ready = createReadyLatch();
      let cursor = 1;

      const loop = (async () => {
        while (!abort.signal.aborted) {
          const msg = stream.next(cursor, filters);
          // Like JetStream's "nothing pending": caught up with the stream's end, including
          // whatever arrived while replaying (a replaced catalogue entry reappears at the end).
          if (!msg) ready.resolve();
          if (!msg) {
            await stream.waitForAppend(abort.signal);
            continue;
          }
          const event: EventMessage = {
            id: msg.id,
            subject: msg.subject,
            data: new Uint8Array(msg.data),
            headers: { ...msg.headers },
            seq: msg.seq,
            time: msg.time,
            deliveryCount: 1,
            tombstone: msg.tombstone,
          };
          await handleUntilDone(handler, event, { backoff, signal: abort.signal, logger });
          cursor = msg.seq + 1;
        }
        ready.reject(new Error("replay stopped before it caught up"));
      })();

      const replay: Replay = {
        ready: ready.promise,
        async stop() {
          abort.abort();
          await loop;
          replays.delete(replay);
          replayLag.delete(replay);
        },
      };
      replays.add(replay);
      replayLag.set(replay, () => ({
        consumer: replayOptions.name ?? "replay",
        stream: kind,
        pending: stream.countFrom(cursor, filters),
      }));
      return replay;
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
