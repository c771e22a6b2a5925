import type { Readable } from "node:stream";

/**
 * The bytes of `stream` in pieces of `size` (the last one may be shorter), taken with
 * `read(size)`. A `for await` over a byte stream calls `read()`, which joins everything buffered
 * into one new buffer: when the reader is slower than the sender, that is a copy of up to the
 * whole HTTP/2 window at each turn, and allocations large enough to keep the server's garbage
 * collector busy (8 ReadFileStreams of 64 MiB spent ~4 s of CPU in it). `read(size)` hands out a
 * slice of a chunk that holds the piece, and copies only pieces that span chunks.
 */
export async function* streamPieces(stream: Readable, size: number): AsyncGenerator<Buffer> {
  // One listener for the whole read: adding a 'readable' listener while bytes wait emits it at
  // once, so adding one per wait would spin on the tick queue until `size` bytes arrive, which
  // they never do while I/O cannot run.
  let wake: (() => void) | undefined;
  const onEvent = () => {
    const resume = wake;
    wake = undefined;
    resume?.();
  };
  const events = ["readable", "end", "close", "error"] as const;
  for (const event of events) stream.on(event, onEvent);
  try {
    for (;;) {
      const piece = stream.read(size) as Buffer | null;
      if (piece !== null) {
        yield piece;
        continue;
      }
      if (stream.errored) throw stream.errored;
      if (stream.readableEnded) return;
      if (stream.destroyed) throw new Error("the stream was closed before its end");
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    for (const event of events) stream.off(event, onEvent);
  }
}

/**
 * Copies the bytes of `stream` into `target` as they arrive, each chunk once (no joined pieces on
 * the way), and resolves with how many there were. Fails with the stream's error, when it closes
 * before its end, or when it has more bytes than `target` holds.
 */
export function readInto(stream: Readable, target: Uint8Array): Promise<number> {
  return new Promise((resolve, reject) => {
    let offset = 0;
    const done = (error?: Error) => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
      stream.off("close", onClose);
      if (error) reject(error);
      else resolve(offset);
    };
    const onData = (chunk: Buffer) => {
      if (offset + chunk.length > target.length) {
        stream.destroy();
        return done(new Error(`the stream has more than the ${target.length} bytes expected`));
      }
      target.set(chunk, offset);
      offset += chunk.length;
    };
    const onEnd = () => done();
    const onError = (error: Error) => done(error);
    const onClose = () => done(stream.errored ?? new Error("the stream was closed before its end"));
    stream.on("data", onData);
    stream.once("end", onEnd);
    stream.once("error", onError);
    stream.once("close", onClose);
  });
}

/**
 * The bytes of `stream` as lists of its own chunks of `size` bytes in all (the last list may hold
 * fewer; a chunk that crosses the boundary is cut with subarray, never copied). For a caller that
 * can send a list as it is (detached bytes): the 1 MiB pieces of `streamPieces` join chunks that
 * span them, which for a file read is a copy of the file in buffers short-lived enough to keep the
 * garbage collector busy. Chunks are taken as they arrive, the stream paused while two lists wait.
 */
export async function* streamChunks(stream: Readable, size: number): AsyncGenerator<Buffer[]> {
  const queue: Buffer[] = [];
  let queued = 0;
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const poke = () => {
    const resume = wake;
    wake = undefined;
    resume?.();
  };
  const onData = (chunk: Buffer) => {
    queue.push(chunk);
    queued += chunk.length;
    if (queued >= 2 * size) stream.pause();
    poke();
  };
  const onEnd = () => {
    ended = true;
    poke();
  };
  const onError = (error: Error) => {
    failure ??= error;
    poke();
  };
  const onClose = () => {
    if (!ended) failure ??= stream.errored ?? new Error("the stream was closed before its end");
    poke();
  };
  stream.on("data", onData);
  stream.on("end", onEnd);
  stream.on("error", onError);
  stream.on("close", onClose);
  try {
    for (;;) {
      if (failure) throw failure;
      if (queued >= size || (ended && queued > 0)) {
        const list: Buffer[] = [];
        let room = size;
        while (room > 0 && queue.length > 0) {
          const chunk = queue[0]!;
          if (chunk.length <= room) {
            list.push(chunk);
            queue.shift();
            room -= chunk.length;
          } else {
            list.push(chunk.subarray(0, room));
            queue[0] = chunk.subarray(room);
            room = 0;
          }
        }
        queued -= size - room;
        if (queued < 2 * size && stream.isPaused() && !ended) stream.resume();
        yield list;
        continue;
      }
      if (ended) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    stream.off("data", onData);
    stream.off("end", onEnd);
    stream.off("error", onError);
    stream.off("close", onClose);
  }
}
