// A program outside the product that follows engine state changes on NATS JetStream, with the
// `nats` package (npm install nats @bufbuild/protobuf) and the TypeScript generated from
// proto/enginemanager/events/v1 with protoc-gen-es (here the repository's own, @aiem/proto).
// [START consumer]
import { fromBinary } from "@bufbuild/protobuf";
import { AckPolicy, connect, DeliverPolicy } from "nats";
import { EventSchema, type Event } from "@aiem/proto/enginemanager/events/v1/event_pb.js";

export interface FollowOptions {
  /** The NATS server, e.g. nats://127.0.0.1:4222. */
  servers: string;
  /** A durable consumer of your own: it remembers where you got to across restarts. */
  durable: string;
  /** What to follow, e.g. every engine of workspace team-a. */
  subject: string;
  /** The events stream; a deployment with AIEM_EVENTS_PREFIX=p names it P_ENGINEMANAGER_EVENTS. */
  stream?: string;
  onEvent: (event: Event, traceparent: string | undefined) => Promise<void>;
  signal: AbortSignal;
}

export async function followEvents(options: FollowOptions): Promise<void> {
  const stream = options.stream ?? "ENGINEMANAGER_EVENTS";
  const nc = await connect({ servers: options.servers });
  try {
    // Created once; later runs resume where the last acknowledged message left off.
    await (await nc.jetstreamManager()).consumers.add(stream, {
      durable_name: options.durable,
      filter_subject: options.subject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
    });
    const consumer = await nc.jetstream().consumers.get(stream, options.durable);
    const messages = await consumer.consume();
    options.signal.addEventListener("abort", () => void messages.close(), { once: true });
    // Delivery is at least once: skip an event id already handled. (Keep this set where your
    // effects are kept, e.g. in the same database transaction, to survive a restart.)
    const handled = new Set<string>();
    for await (const m of messages) {
      const event = fromBinary(EventSchema, m.data);
      if (!handled.has(event.id)) {
        // The trace of the request that caused the event, to continue in your own spans.
        await options.onEvent(event, m.headers?.get("traceparent") || undefined);
        handled.add(event.id);
      }
      m.ack();
    }
  } finally {
    await nc.close();
  }
}
// [END consumer]
