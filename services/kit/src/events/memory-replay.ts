// A replay of the in-process event bus: reads a stream from its start, ready once it has reached
// the stream's end, then following what is appended.
import {
  DEFAULT_BACKOFF,
  createReadyLatch,
  handleUntilDone,
  toArray,
  type ConsumerLag,
  type EventBusLogger,
  type EventHandler,
  type EventStreamKind,
  type Replay,
  type ReplayOptions,
} from "./event-bus.js";
import { type MemoryStream, toEventMessage } from "./memory-stream.js";

export function startMemoryReplay(
  stream: MemoryStream,
  kind: EventStreamKind,
  replayOptions: ReplayOptions,
  handler: EventHandler,
  logger: EventBusLogger,
): { replay: Replay; lag: () => ConsumerLag } {
  const filters = toArray(replayOptions.subjects);
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
      const event = toEventMessage(msg, 1);
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
    },
  };
  const lag = (): ConsumerLag => ({
    consumer: replayOptions.name ?? "replay",
    stream: kind,
    pending: stream.countFrom(cursor, filters),
  });
  return { replay, lag };
}
