// What a message of the catalogue stream says: a resource's new state, or its deletion.
import { fromBinary } from "@bufbuild/protobuf";
import type { CatalogueKind } from "../authz/index.js";
import type { EventMessage } from "../events/index.js";
import { type Event, EventSchema } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import { KIND_BY_EVENT_CASE, kindOfName, type CatalogueEventCase, type CatalogueResource } from "./resources.js";

/** One change of the catalogue: the new state, or `resource` undefined for a deletion. */
export interface CatalogueChange {
  readonly kind: CatalogueKind;
  readonly name: string;
  readonly resource: CatalogueResource | undefined;
}

/** The change `msg` carries, or undefined for a message of another kind or one that cannot be read. */
export function catalogueChangeOf(
  msg: EventMessage,
  logger: { warn(message: string, fields?: Record<string, unknown>): void } | undefined,
): CatalogueChange | undefined {
  let event: Event;
  try {
    event = fromBinary(EventSchema, msg.data);
  } catch (err) {
    // A message nobody can read would stop the replay forever; skip it loudly instead.
    logger?.warn("skipping an undecodable catalogue event", {
      subject: msg.subject,
      error: (err as Error).message,
    });
    return undefined;
  }
  const payload = event.payload;
  if (payload.case === "catalogueResourceChanged") {
    const inner = payload.value.resource;
    const kind = inner.case ? KIND_BY_EVENT_CASE[inner.case as CatalogueEventCase] : undefined;
    if (!kind || !inner.value) return undefined;
    return { kind, name: inner.value.name, resource: inner.value as CatalogueResource };
  }
  if (payload.case === "catalogueResourceDeleted") {
    const kind = kindOfName(payload.value.name);
    if (kind) return { kind, name: payload.value.name, resource: undefined };
  }
  // Other payloads, or none (a type added after this reader was built), are skipped.
  return undefined;
}
