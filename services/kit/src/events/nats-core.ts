// What the parts of the NATS event bus share: the JetStream handles, the stream names, subject
// prefixing, and the running consumers and replays that close() stops and lag() asks about.
import type { JetStreamClient, JetStreamManager, JsMsg } from "@nats-io/jetstream";
import {
  EVENT_ID_HEADER,
  TOMBSTONE_HEADER,
  type ConsumerLag,
  type EventBusLogger,
  type EventMessage,
  type EventStreamKind,
  type Replay,
  type Subscription,
} from "./event-bus.js";

export interface NatsBusCore {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly names: Record<EventStreamKind, string>;
  readonly domains: readonly string[];
  readonly logger: EventBusLogger;
  /** The subject on the wire, under the bus's prefix. */
  toWire(subject: string): string;
  /** The subject without the bus's prefix. */
  fromWire(subject: string): string;
  readonly subscriptions: Set<Subscription>;
  readonly replays: Set<Replay>;
  /** What lag() asks the server about: each durable consumer's and replay's current consumer. */
  readonly lagSources: Map<object, () => Promise<ConsumerLag | undefined>>;
}

/** A JetStream message as the bus hands it to handlers: our headers taken out, NATS's dropped. */
export function toEvent(core: NatsBusCore, m: JsMsg, deliveryCount: number): EventMessage {
  const user: Record<string, string> = {};
  let id = "";
  let tombstone = false;
  for (const key of m.headers?.keys() ?? []) {
    const value = m.headers!.get(key);
    if (key === EVENT_ID_HEADER) id = value;
    else if (key === TOMBSTONE_HEADER) tombstone = value === "true";
    else if (!/^nats-/iu.test(key)) user[key] = value;
  }
  return {
    id,
    subject: core.fromWire(m.subject),
    data: m.data,
    headers: user,
    seq: m.seq,
    time: m.time,
    deliveryCount,
    tombstone,
  };
}
