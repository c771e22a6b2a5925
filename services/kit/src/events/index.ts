export * from "./event-bus.js";
export { createEventBus, type CreateEventBusOptions } from "./create-event-bus.js";
export { createMemoryEventBus, type MemoryEventBusOptions } from "./memory-bus.js";
export { createNatsEventBus, type NatsEventBus, type NatsEventBusOptions } from "./nats-bus.js";
export {
  OUTBOX_TABLE,
  createOutboxRelay,
  enqueue,
  enqueueWhen,
  outboxBacklog,
  outboxMigration,
  type OutboxMessage,
  type OutboxRelay,
  type OutboxRelayOptions,
  type OutboxTable,
} from "./outbox.js";
export {
  PROCESSED_EVENTS_TABLE,
  createIdempotentHandler,
  createMemoryIdempotentHandler,
  processedEventsMigration,
  pruneProcessedEvents,
  type IdempotentHandlerOptions,
  type MemoryIdempotentOptions,
  type ProcessedEventsTable,
  type TransactionalEventHandler,
} from "./idempotency.js";
export { eventMigrations } from "./migrations.js";
