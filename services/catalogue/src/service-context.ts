// What every handler of the catalogue shares: the kit's service core (database once started,
// policy, page tokens, clock, a writer that wakes the outbox relay).
import { create, type DescMessage, type Message } from "@bufbuild/protobuf";
import type { ServiceCore } from "@aiem/kit/server";

export type ServiceContext = ServiceCore;

/** An empty message of `schema` when a request leaves a message field unset. */
export function orEmpty<T extends Message>(schema: DescMessage, value: T | undefined): T {
  return value ?? (create(schema) as T);
}
