/**
 * The event bus contract shared by the NATS JetStream and the in-process implementations.
 *
 * The bus is payload-agnostic: messages are bytes (in practice a protobuf-encoded
 * `enginemanager.events.v1` message) plus string headers. Every message carries an event id,
 * which is also the de-duplication id (`Nats-Msg-Id` on JetStream).
 */

/** Root token of every subject the product publishes. */
export const SUBJECT_ROOT = "enginemanager";

/** Second subject token of the catalogue replication stream (`enginemanager.catalogue.>`). */
export const CATALOGUE_DOMAIN = "catalogue";

/**
 * Second subject tokens captured by the events stream. JetStream streams may not overlap, so the
 * events stream cannot simply take `enginemanager.>` and leave out the catalogue; it lists its
 * domains instead. A service that needs a new domain adds it here (the bus updates the stream's
 * subjects on start-up).
 */
export const DEFAULT_EVENT_DOMAINS: readonly string[] = ["engines", "sandboxes", "secrets", "workspaces", "system"];

/** Header carrying the event id on every delivered message (JetStream's de-duplication header). */
export const EVENT_ID_HEADER = "Nats-Msg-Id";

/** Header marking a catalogue deletion: the last message on the subject says "gone". */
export const TOMBSTONE_HEADER = "Aiem-Tombstone";

export type EventStreamKind = "events" | "catalogue";

/** A publish or subscription that can never succeed (bad subject, header or id); retrying is pointless. */
export class InvalidEventError extends Error {
  override readonly name = "InvalidEventError";
}

export interface PublishOptions {
  /** Event id; doubles as the de-duplication id, so re-publishing the same event is harmless. */
  id: string;
  /** Extra headers. Names starting with `Nats-` are reserved and rejected. */
  headers?: Record<string, string>;
  /** Marks a deletion on a replication subject (see README: tombstones are kept, not purged). */
  tombstone?: boolean;
}

export interface PublishResult {
  stream: string;
  seq: number;
  /** True when a message with the same id was already stored within the duplicate window. */
  duplicate: boolean;
}

export interface EventMessage {
  readonly id: string;
  /** Logical subject, without any test prefix. */
  readonly subject: string;
  readonly data: Uint8Array;
  /** User headers (reserved `Nats-*` and tombstone headers are not included). */
  readonly headers: Readonly<Record<string, string>>;
  /** Sequence of the message in its stream. */
  readonly seq: number;
  readonly time: Date;
  /** 1 on first delivery; greater on redeliveries. Always 1 for replays. */
  readonly deliveryCount: number;
  readonly tombstone: boolean;
}

export type EventHandler = (msg: EventMessage) => Promise<void>;

export interface ConsumeOptions {
  /** Filter subject(s); NATS wildcards allowed. All must fall into one stream. Several subjects need NATS 2.10+. */
  subjects: string | readonly string[];
  /** Where a new durable consumer starts; ignored when the consumer already exists. Default "all". */
  deliver?: "all" | "new";
  /** Milliseconds a handler may take before the message is redelivered. Default 30 000. */
  ackWait?: number;
  /** Deliveries before a message is given up (logged and dropped). Default 50; -1 for unlimited. */
  maxDeliver?: number;
  /** Delays (ms) before redelivery after the n-th failure; the last value repeats. */
  backoff?: readonly number[];
  /** Messages handled at once by this replica. Default 1 (in order). */
  concurrency?: number;
}

export interface Subscription {
  readonly name: string;
  /** Stops this replica. In-flight handlers finish first; the durable position is kept. */
  stop(): Promise<void>;
}

export interface ReplayOptions {
  /** Names the replay in metrics (its consumer lag); default `replay`. */
  name?: string;
  /** Filter subject(s), all in one stream. */
  subjects: string | readonly string[];
  /** Delays (ms) between retries when the handler throws; replay never skips a message. */
  backoff?: readonly number[];
}

export interface Replay {
  /**
   * Resolves once every message stored when the replay started has been handled, so a read model
   * built from it is complete. Rejects if the replay is stopped or fails before that.
   */
  readonly ready: Promise<void>;
  /** Stops following the stream. */
  stop(): Promise<void>;
}

export interface ConsumerLag {
  /** The durable consumer's name, or the replay's. */
  readonly consumer: string;
  readonly stream: EventStreamKind;
  /** Messages on its subjects not yet handled (delivered but unacknowledged included). */
  readonly pending: number;
}

export interface EventBus {
  readonly kind: "nats" | "memory";
  /** Stream names in use (prefixed). */
  readonly streams: Readonly<Record<EventStreamKind, string>>;
  publish(subject: string, data: Uint8Array, options: PublishOptions): Promise<PublishResult>;
  /**
   * Durable, acknowledged consumption. Replicas using the same name share the work (each message
   * goes to one of them). A message is acknowledged when the handler resolves and redelivered after
   * a backoff when it throws, or after `ackWait` when it does not settle in time.
   */
  consume(name: string, options: ConsumeOptions, handler: EventHandler): Promise<Subscription>;
  /** Reads a stream from its start, then follows it live; no acknowledgements, nothing kept. */
  replay(options: ReplayOptions, handler: EventHandler): Replay;
  /**
   * The sequence of the newest message stored in `stream` (0 when it holds none): a reader that
   * has applied this much has seen every message published before the call.
   */
  lastSequence(stream: EventStreamKind): Promise<number>;
  /** Removes a durable consumer and its position. */
  deleteConsumer(stream: EventStreamKind, name: string): Promise<void>;
  /** Messages waiting for each of this process's consumers and replays (for metrics). */
  lag(): Promise<ConsumerLag[]>;
  close(): Promise<void>;
}

export interface EventBusLogger {
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const consoleLogger: EventBusLogger = {
  warn: (message, fields) => console.warn(`[events] ${message}`, fields ?? ""),
  error: (message, fields) => console.error(`[events] ${message}`, fields ?? ""),
};

export const silentLogger: EventBusLogger = { warn: () => {}, error: () => {} };

export interface EventBusCommonOptions {
  /**
   * Namespace for parallel test suites: stream names get `<PREFIX>_` in front and subjects on the
   * wire get `<prefix>.` in front, so buses with different prefixes never see each other. Empty in
   * production.
   */
  prefix?: string;
  /** Second subject tokens of the events stream. Default {@link DEFAULT_EVENT_DOMAINS}. */
  eventDomains?: readonly string[];
  /** Age (ms) after which events-stream messages are discarded. Default 7 days. */
  eventsMaxAge?: number;
  /** Window (ms) within which a repeated event id is dropped as a duplicate. Default 2 minutes. */
  duplicateWindow?: number;
  logger?: EventBusLogger;
}

export const DEFAULT_ACK_WAIT = 30_000;
export const DEFAULT_MAX_DELIVER = 50;
export const DEFAULT_BACKOFF: readonly number[] = [200, 1_000, 5_000, 15_000, 60_000];
export const DEFAULT_EVENTS_MAX_AGE = 7 * 24 * 3600_000;
export const DEFAULT_DUPLICATE_WINDOW = 2 * 60_000;

const PREFIX_RE = /^[A-Za-z0-9_-]+$/;
const NAME_RE = /^[A-Za-z0-9_-]{1,128}$/;

export function validatePrefix(prefix: string | undefined): string {
  if (prefix === undefined || prefix === "") return "";
  if (!PREFIX_RE.test(prefix)) throw new Error(`event bus prefix ${JSON.stringify(prefix)} must match ${PREFIX_RE}`);
  return prefix;
}

export function validateConsumerName(name: string): void {
  if (!NAME_RE.test(name)) throw new Error(`consumer name ${JSON.stringify(name)} must match ${NAME_RE}`);
}

export function streamNames(prefix?: string): Record<EventStreamKind, string> {
  const p = validatePrefix(prefix);
  const head = p ? `${p.toUpperCase()}_` : "";
  return { events: `${head}ENGINEMANAGER_EVENTS`, catalogue: `${head}ENGINEMANAGER_CATALOGUE` };
}

/**
 * Encodes a value for use as one subject token: `.`, wildcards, whitespace and `%` are
 * percent-encoded, so ids like the version `1.11.0` stay a single token.
 */
export function subjectToken(value: string): string {
  if (value === "") throw new Error("subject token must not be empty");
  // Fixed widths (%XX, or %uXXXX for the few wider whitespace characters) keep decoding unambiguous.
  return value.replace(/[.*>%\s]/gu, (c) => {
    const code = c.codePointAt(0)!;
    return code < 0x100
      ? `%${code.toString(16).toUpperCase().padStart(2, "0")}`
      : `%u${code.toString(16).toUpperCase().padStart(4, "0")}`;
  });
}

export function decodeSubjectToken(token: string): string {
  return token.replace(/%u([0-9A-F]{4})|%([0-9A-F]{2})/gu, (_, wide: string | undefined, narrow: string | undefined) =>
    String.fromCodePoint(parseInt(wide ?? narrow!, 16)),
  );
}

/** `enginemanager.<token>.<token>...`, each part encoded with {@link subjectToken}. */
export function eventSubject(...parts: string[]): string {
  return [SUBJECT_ROOT, ...parts.map(subjectToken)].join(".");
}

/** `enginemanager.engines.<workspace>.<id>.state` */
export function engineStateSubject(workspace: string, engineId: string): string {
  return eventSubject("engines", workspace, engineId, "state");
}

/** `enginemanager.catalogue.<kind>.<workspace>.<id>` */
export function catalogueSubject(kind: string, workspace: string, id: string): string {
  return eventSubject(CATALOGUE_DOMAIN, kind, workspace, id);
}

/** Which stream a (possibly wildcarded) logical subject belongs to. */
export function streamKindOf(subject: string, eventDomains: readonly string[]): EventStreamKind {
  const tokens = subject.split(".");
  const bad = (why: string) => new InvalidEventError(`subject ${JSON.stringify(subject)}: ${why}`);
  if (tokens.some((t) => t === "")) throw bad("empty token");
  if (tokens[0] !== SUBJECT_ROOT) throw bad(`must start with "${SUBJECT_ROOT}."`);
  const domain = tokens[1];
  if (domain === undefined || tokens.length < 3) throw bad("needs a domain and at least one more token");
  if (domain === CATALOGUE_DOMAIN) return "catalogue";
  if (eventDomains.includes(domain)) return "events";
  throw bad(`domain "${domain}" is not captured by any stream (event domains: ${eventDomains.join(", ")})`);
}

export function streamKindOfAll(subjects: readonly string[], eventDomains: readonly string[]): EventStreamKind {
  if (subjects.length === 0) throw new InvalidEventError("at least one subject is required");
  const kinds = new Set(subjects.map((s) => streamKindOf(s, eventDomains)));
  if (kinds.size > 1)
    throw new InvalidEventError(`subjects ${subjects.join(", ")} span both the events and the catalogue stream`);
  return [...kinds][0]!;
}

/** Checks what every publish needs, whichever bus: a literal subject in a stream and an id. */
export function checkPublish(
  subject: string,
  options: PublishOptions,
  eventDomains: readonly string[],
): EventStreamKind {
  if (!isLiteralSubject(subject)) throw new InvalidEventError(`cannot publish to wildcard subject ${subject}`);
  if (!options.id) throw new InvalidEventError("publish needs an event id");
  checkUserHeaders(options.headers);
  return streamKindOf(subject, eventDomains);
}

export function isLiteralSubject(subject: string): boolean {
  return !subject.split(".").some((t) => t === "*" || t === ">");
}

/** NATS subject matching: `*` matches one token, a trailing `>` one or more. */
export function subjectMatches(filter: string, subject: string): boolean {
  const f = filter.split(".");
  const s = subject.split(".");
  for (let i = 0; i < f.length; i++) {
    const ft = f[i];
    if (ft === ">") return s.length > i;
    if (i >= s.length) return false;
    if (ft !== "*" && ft !== s[i]) return false;
  }
  return f.length === s.length;
}

export function toArray(subjects: string | readonly string[]): readonly string[] {
  return typeof subjects === "string" ? [subjects] : subjects;
}

export function checkUserHeaders(headers: Record<string, string> | undefined): void {
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (typeof value !== "string" || /[\r\n]/u.test(value))
      throw new InvalidEventError(`header ${name} must be a single-line string`);
    if (/^nats-/iu.test(name) || name.toLowerCase() === TOMBSTONE_HEADER.toLowerCase()) {
      throw new InvalidEventError(`header ${name} is reserved`);
    }
    if (!/^[!-9;-~]+$/u.test(name))
      throw new InvalidEventError(`header name ${JSON.stringify(name)} is not a valid header name`);
  }
}

/** Delay before the retry that follows the n-th failed attempt (n starts at 1). */
export function backoffDelay(backoff: readonly number[], failures: number): number {
  if (backoff.length === 0) return 0;
  return backoff[Math.min(failures, backoff.length) - 1] ?? 0;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

export function errorFields(err: unknown): Record<string, unknown> {
  return { error: err instanceof Error ? err.message : String(err) };
}

/** The `ready` of a replay: resolves once caught up; a later failure no longer counts. */
export interface ReadyLatch {
  readonly promise: Promise<void>;
  readonly isReady: boolean;
  resolve(): void;
  reject(err: unknown): void;
}

export function createReadyLatch(): ReadyLatch {
  let settled = false;
  let isReady = false;
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Callers that only stop() must not see an unhandled rejection.
  promise.catch(() => {});
  return {
    promise,
    get isReady() {
      return isReady;
    },
    resolve() {
      if (settled) return;
      settled = isReady = true;
      resolve();
    },
    reject(err) {
      if (settled) return;
      settled = true;
      reject(err);
    },
  };
}

/** Replays must not skip a message: retry its handler with backoff until it succeeds or the replay stops. */
export async function handleUntilDone(
  handler: EventHandler,
  event: EventMessage,
  options: { backoff: readonly number[]; signal: AbortSignal; logger: EventBusLogger },
): Promise<void> {
  for (let failures = 0; !options.signal.aborted; ) {
    try {
      await handler(event);
      return;
    } catch (err) {
      failures++;
      options.logger.warn("replay handler failed; retrying", {
        subject: event.subject,
        id: event.id,
        ...errorFields(err),
      });
      await sleep(backoffDelay(options.backoff, failures), options.signal);
    }
  }
}
