// A durable consumer of the NATS event bus: a pull consumer that replicas using the same name share,
// handling up to `concurrency` messages at once, redelivering failures with backoff until
// `maxDeliver`.
import { nanos } from "@nats-io/nats-core";
import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from "@nats-io/jetstream";
import {
  DEFAULT_ACK_WAIT,
  DEFAULT_BACKOFF,
  DEFAULT_MAX_DELIVER,
  backoffDelay,
  errorFields,
  streamKindOfAll,
  toArray,
  validateConsumerName,
  type ConsumeOptions,
  type EventHandler,
  type Subscription,
} from "./event-bus.js";
import { toEvent, type NatsBusCore } from "./nats-core.js";
import { ensureConsumer } from "./nats-streams.js";

export async function startNatsConsumer(
  core: NatsBusCore,
  name: string,
  consumeOptions: ConsumeOptions,
  handler: EventHandler,
): Promise<Subscription> {
  const { js, jsm, names, domains, logger } = core;
  validateConsumerName(name);
  const filters = toArray(consumeOptions.subjects);
  const stream = names[streamKindOfAll(filters, domains)];
  const maxDeliver = consumeOptions.maxDeliver ?? DEFAULT_MAX_DELIVER;
  const backoff = consumeOptions.backoff ?? DEFAULT_BACKOFF;
  const concurrency = Math.max(1, consumeOptions.concurrency ?? 1);
  const wireFilters = filters.map(core.toWire);
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
      await handler(toEvent(core, m, deliveries));
    } catch (err) {
      if (maxDeliver > 0 && deliveries >= maxDeliver) {
        logger.error("giving up on event after max deliveries", {
          consumer: name,
          subject: core.fromWire(m.subject),
          deliveries,
          ...errorFields(err),
        });
        m.term(`failed ${deliveries} times`);
      } else {
        logger.warn("event handler failed; will redeliver", {
          consumer: name,
          subject: core.fromWire(m.subject),
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
        core.subscriptions.delete(subscription);
        core.lagSources.delete(subscription);
      })();
      return stopped;
    },
  };
  core.subscriptions.add(subscription);
  const kind = streamKindOfAll(filters, domains);
  core.lagSources.set(subscription, async () => {
    const info = await consumer.info(false);
    return { consumer: name, stream: kind, pending: info.num_pending + info.num_ack_pending };
  });
  return subscription;
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
