// A durable consumer of the in-process bus: its position in a stream, the messages delivered and
// not yet acknowledged, redelivery with backoff up to its most deliveries, and its subscribers
// (the replicas consuming under its name), served round robin within their concurrency.
import { backoffDelay, errorFields, type EventBusLogger, type EventHandler } from "./event-bus.js";
import { type MemoryStream, type StoredMessage, toEventMessage } from "./memory-stream.js";

interface Pending {
  deliveries: number;
  /** Identifies the current delivery, so a stale failure or timeout cannot schedule a second redelivery. */
  token: object | undefined;
  timer: NodeJS.Timeout | undefined;
}

export interface MemorySubscriber {
  readonly concurrency: number;
  inFlight: number;
  readonly handler: EventHandler;
  readonly running: Map<object, Promise<void>>;
}

export class MemoryConsumer {
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
    const fields = {
      consumer: this.name,
      subject: msg?.subject,
      id: msg?.id,
      deliveries: p.deliveries,
      ...errorFields(err),
    };
    if (maxDeliver > 0 && p.deliveries >= maxDeliver) {
      this.pending.delete(seq);
      this.logger.error("giving up on event after max deliveries", fields);
      return;
    }
    this.logger.warn("event handler failed; will redeliver", fields);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      const at = this.ready.findIndex((s) => s > seq);
      this.ready.splice(at < 0 ? this.ready.length : at, 0, seq);
      this.pump();
    }, delay);
    this.timers.add(timer);
  }
}
