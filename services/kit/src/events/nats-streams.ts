// The JetStream streams and durable consumers of the NATS event bus: made when missing, brought to
// the wanted configuration when a replica starts with other settings.
import { nanos } from "@nats-io/nats-core";
import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamManager,
  type StreamConfig,
} from "@nats-io/jetstream";
import {
  CATALOGUE_DOMAIN,
  DEFAULT_DUPLICATE_WINDOW,
  DEFAULT_EVENTS_MAX_AGE,
  SUBJECT_ROOT,
  type EventStreamKind,
} from "./event-bus.js";

export interface EventStreamsOptions {
  readonly names: Record<EventStreamKind, string>;
  readonly domains: readonly string[];
  readonly toWire: (subject: string) => string;
  readonly duplicateWindow?: number;
  readonly eventsMaxAge?: number;
  readonly replicas?: number;
}

/**
 * The events stream (kept by age) and the catalogue stream (the last message of each subject).
 */
export async function ensureEventStreams(jsm: JetStreamManager, options: EventStreamsOptions): Promise<void> {
  const { names, toWire } = options;
  const duplicateWindow = nanos(options.duplicateWindow ?? DEFAULT_DUPLICATE_WINDOW);
  const replicas = options.replicas ?? 1;
  await ensureStream(jsm, {
    name: names.events,
    subjects: options.domains.map((d) => toWire(`${SUBJECT_ROOT}.${d}.>`)),
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: nanos(options.eventsMaxAge ?? DEFAULT_EVENTS_MAX_AGE),
    duplicate_window: duplicateWindow,
    num_replicas: replicas,
  });
  await ensureStream(jsm, {
    name: names.catalogue,
    subjects: [toWire(`${SUBJECT_ROOT}.${CATALOGUE_DOMAIN}.>`)],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_msgs_per_subject: 1,
    duplicate_window: duplicateWindow,
    num_replicas: replicas,
  });
}

export function isApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}

/** The sequence of the newest message stored on any of `filters` (wildcards allowed), 0 when none. */
export async function lastMatching(jsm: JetStreamManager, stream: string, filters: readonly string[]): Promise<number> {
  const last = await Promise.all(filters.map((f) => jsm.streams.getMessage(stream, { last_by_subj: f })));
  return Math.max(0, ...last.map((m) => m?.seq ?? 0));
}

type WantedStream = Partial<StreamConfig> & { name: string; subjects: string[] };

async function ensureStream(jsm: JetStreamManager, wanted: WantedStream): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      const info = await jsm.streams.info(wanted.name);
      const current = info.config as unknown as Record<string, unknown>;
      const differs = Object.entries(wanted).some(
        ([k, v]) =>
          JSON.stringify(k === "subjects" ? [...(v as string[])].sort() : v) !==
          JSON.stringify(k === "subjects" ? [...((current[k] as string[] | undefined) ?? [])].sort() : current[k]),
      );
      if (differs) await jsm.streams.update(wanted.name, { ...info.config, ...wanted });
      return;
    } catch (err) {
      if (!isApiError(err, JetStreamApiCodes.StreamNotFound) || attempt > 2) throw err;
    }
    try {
      await jsm.streams.add(wanted);
      return;
    } catch (err) {
      // Another replica created it first: loop round and compare.
      if (attempt > 2) throw err;
    }
  }
}

export async function ensureConsumer(
  jsm: JetStreamManager,
  stream: string,
  wanted: Partial<ConsumerConfig> & { durable_name: string },
): Promise<void> {
  let current: ConsumerConfig | undefined;
  try {
    current = (await jsm.consumers.info(stream, wanted.durable_name)).config;
  } catch (err) {
    if (!isApiError(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
  }
  if (!current) {
    await jsm.consumers.add(stream, wanted);
    return;
  }
  // The latest replica's settings win; the start position of an existing consumer is kept.
  const update: Partial<ConsumerConfig> = {};
  if (current.ack_wait !== wanted.ack_wait) update.ack_wait = wanted.ack_wait!;
  if (current.max_deliver !== wanted.max_deliver) update.max_deliver = wanted.max_deliver!;
  if ((current.filter_subject ?? "") !== (wanted.filter_subject ?? "")) update.filter_subject = wanted.filter_subject!;
  if (JSON.stringify(current.filter_subjects ?? []) !== JSON.stringify(wanted.filter_subjects ?? []))
    update.filter_subjects = wanted.filter_subjects!;
  if (Object.keys(update).length > 0) await jsm.consumers.update(stream, wanted.durable_name, update);
}
