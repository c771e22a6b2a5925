// The append-only output log of one process. Every chunk keeps the stream it was written to and
// its offset: the number of bytes of both streams written before it. The log keeps at most
// `limit` bytes; beyond that the oldest bytes are discarded and counted, so readers can say
// exactly what they missed. Readers address the log by offset, which is what makes resuming a
// stream after a disconnect exact.

export type StreamName = "stdout" | "stderr";

export interface LogChunk {
  readonly stream: StreamName;
  /** Offset of the first byte of `data` in the log, counting both streams. */
  readonly offset: number;
  readonly data: Buffer;
}

export interface OutputLog {
  /** Offset of the first byte still kept; everything before it was discarded. */
  readonly start: number;
  /** Offset the next byte will have: the number of bytes written so far. */
  readonly end: number;
  /** Whether the log is complete: the process ended and its output was read to the end. */
  readonly sealed: boolean;
  /** Bytes kept now (end - start). */
  readonly kept: number;
  append(stream: StreamName, data: Buffer): void;
  /** Marks the log complete; later appends are ignored. */
  seal(): void;
  /** The kept chunks from `offset` on, the first one cut to start exactly there; at most ~maxBytes. */
  read(offset: number, maxBytes: number): LogChunk[];
  /** The kept bytes of one stream, or of both in the order they were written, and how many were discarded. */
  collect(stream: StreamName | "combined"): { data: Buffer; dropped: number };
  /** Resolves on the next append or seal, or when `signal` aborts. */
  changed(signal?: AbortSignal): Promise<void>;
  /** Discards every byte kept, counted as dropped like bytes past the limit (frees the memory). */
  release(): void;
}

export function createOutputLog(limit: number): OutputLog {
  if (!(limit > 0)) throw new Error("output log limit must be positive");
  // A queue with a moving head, so discarding from the front is cheap.
  const chunks: { stream: StreamName; offset: number; data: Buffer }[] = [];
  let head = 0;
  let start = 0;
  let end = 0;
  let kept = 0;
  let sealed = false;
  const droppedBy: Record<StreamName, number> = { stdout: 0, stderr: 0 };
  const waiters = new Set<() => void>();

  function wake(): void {
    const current = [...waiters];
    waiters.clear();
    for (const w of current) w();
  }

  function discard(): void {
    while (kept > limit) {
      const first = chunks[head]!;
      const excess = kept - limit;
      if (first.data.length <= excess) {
        droppedBy[first.stream] += first.data.length;
        kept -= first.data.length;
        start += first.data.length;
        chunks[head] = undefined as never;
        head++;
      } else {
        droppedBy[first.stream] += excess;
        first.data = first.data.subarray(excess);
        first.offset += excess;
        kept -= excess;
        start += excess;
      }
    }
    if (head > 1024 && head * 2 > chunks.length) {
      chunks.splice(0, head);
      head = 0;
    }
  }

  /** Index of the chunk that holds `offset` (start <= offset < end). */
  function find(offset: number): number {
    let lo = head;
    let hi = chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (chunks[mid]!.offset <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  return {
    get start() {
      return start;
    },
    get end() {
      return end;
    },
    get sealed() {
      return sealed;
    },
    get kept() {
      return kept;
    },
    append(stream, data) {
      if (sealed || data.length === 0) return;
      chunks.push({ stream, offset: end, data });
      end += data.length;
      kept += data.length;
      discard();
      wake();
    },
    seal() {
      if (sealed) return;
      sealed = true;
      wake();
    },
    read(offset, maxBytes) {
      const from = Math.max(offset, start);
      if (from >= end) return [];
      const out: LogChunk[] = [];
      let size = 0;
      for (let i = find(from); i < chunks.length && size < maxBytes; i++) {
        const c = chunks[i]!;
        const skip = from > c.offset ? from - c.offset : 0;
        const data = skip > 0 ? c.data.subarray(skip) : c.data;
        out.push({ stream: c.stream, offset: c.offset + skip, data });
        size += data.length;
      }
      return out;
    },
    collect(stream) {
      const parts: Buffer[] = [];
      for (let i = head; i < chunks.length; i++) {
        const c = chunks[i]!;
        if (stream === "combined" || c.stream === stream) parts.push(c.data);
      }
      const dropped = stream === "combined" ? start : droppedBy[stream];
      return { data: Buffer.concat(parts), dropped };
    },
    release() {
      for (let i = head; i < chunks.length; i++) {
        const c = chunks[i]!;
        droppedBy[c.stream] += c.data.length;
      }
      chunks.length = 0;
      head = 0;
      kept = 0;
      start = end;
      wake();
    },
    changed(signal) {
      if (sealed) return Promise.resolve();
      return new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const done = () => {
          waiters.delete(done);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        waiters.add(done);
        signal?.addEventListener("abort", done, { once: true });
      });
    },
  };
}
