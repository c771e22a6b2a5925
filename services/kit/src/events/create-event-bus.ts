import type { EventBus, EventBusCommonOptions } from "./event-bus.js";
import { createMemoryEventBus, type MemoryEventBusOptions } from "./memory-bus.js";
import { createNatsEventBus, type NatsEventBusOptions } from "./nats-bus.js";

export interface CreateEventBusOptions extends EventBusCommonOptions {
  /** NATS server URL (`NATS_URL`); without it the in-process bus is used. */
  natsUrl?: string;
  nats?: Omit<NatsEventBusOptions, "url" | keyof EventBusCommonOptions>;
  memory?: Omit<MemoryEventBusOptions, keyof EventBusCommonOptions>;
}

/** NATS JetStream when a URL is given, otherwise the in-process bus (embedded default). */
export async function createEventBus(options: CreateEventBusOptions = {}): Promise<EventBus> {
  const { natsUrl, nats, memory, ...common } = options;
  if (natsUrl) return createNatsEventBus({ ...common, ...nats, url: natsUrl });
  return createMemoryEventBus({ ...common, ...memory });
}
