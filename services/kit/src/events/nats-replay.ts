// A replay of the NATS event bus: an ordered, ephemeral read of a stream from its start, ready once
// it has handled what the stream held when it began, then following live.
import { DeliverPolicy, type ConsumerMessages } from "@nats-io/jetstream";
import {
  DEFAULT_BACKOFF,
  createReadyLatch,
  errorFields,
  handleUntilDone,
  streamKindOfAll,
  toArray,
  type EventHandler,
  type Replay,
  type ReplayOptions,
} from "./event-bus.js";
import { toEvent, type NatsBusCore } from "./nats-core.js";
import { lastMatching } from "./nats-streams.js";

export function startNatsReplay(core: NatsBusCore, replayOptions: ReplayOptions, handler: EventHandler): Replay {
  const { js, jsm, names, domains, logger } = core;
  const filters = toArray(replayOptions.subjects);
  const kind = streamKindOfAll(filters, domains);
  const stream = names[kind];
  const backoff = replayOptions.backoff ?? DEFAULT_BACKOFF;
  const wireFilters = filters.map(core.toWire);
  const abort = new AbortController();
  const ready = createReadyLatch();
  let messages: ConsumerMessages | undefined;
  let following: { info(cached?: boolean): Promise<{ num_pending: number }> } | undefined;
  const handling = { now: false };

  const loop = (async () => {
    // Caught up once the newest message matching the filters when we began has been handled (or
    // a later one on its subject, if it was superseded meanwhile). The server's pending count is
    // not used: it keeps counting messages removed before delivery, and then never reaches 0.
    const target = await lastMatching(jsm, stream, wireFilters);
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
        const event = toEvent(core, m, 1);
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
      core.replays.delete(replay);
      core.lagSources.delete(replay);
    },
  };
  core.replays.add(replay);
  core.lagSources.set(replay, async () => {
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
}
