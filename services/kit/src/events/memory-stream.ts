// A stream of the in-process event bus: messages in sequence order, the last per subject where the
// stream keeps only that, de-duplication by event id within a window, and limits by age and count.
import { type EventMessage, type PublishOptions, type PublishResult, subjectMatches } from "./event-bus.js";

export interface StoredMessage {
  seq: number;
  subject: string;
  id: string;
  data: Uint8Array;
  headers: Record<string, string>;
  time: Date;
  tombstone: boolean;
}

/** A stored message as a handler gets it: copies, so that no handler can change the stream. */
export function toEventMessage(msg: StoredMessage, deliveryCount: number): EventMessage {
  return {
    id: msg.id,
    subject: msg.subject,
    data: new Uint8Array(msg.data),
    headers: { ...msg.headers },
    seq: msg.seq,
    time: msg.time,
    deliveryCount,
    tombstone: msg.tombstone,
  };
}

export class MemoryStream {
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
