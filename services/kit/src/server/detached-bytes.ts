// A large bytes field of a response written beside the message instead of through protobuf-es.
// protobuf-es encodes into one buffer it grows by doubling and then copies out (a 64 MiB field
// grows it to 128 MiB), and the gRPC and Connect-streaming framing copies the result once more:
// three copies and up to three times the field's size in memory for bytes that are already whole.
// The wire form of a length-delimited field is its tag, its length and the bytes themselves, so
// the handler hands the bytes over apart and answers the message without them; the method's
// handler then writes the field's tag and length, the bytes as they are, and the rest of the
// message as Connect encoded it, fixing the lengths around it (the Connect unary body's
// Content-Length, the 5-byte envelope of the others). The detached field goes first, which is
// where protobuf-es puts it too when it has the lowest number of the fields set, so the bytes on
// the wire are the same as without this.
//
// Only where the framing is binary and uncompressed (the edge answers every call uncompressed);
// a JSON call, a compressed one, a GET or an in-process call gets no slot, and the handler answers
// the whole message as usual.
import { type DescField, type DescMessage, type DescMethod, ScalarType } from "@bufbuild/protobuf";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { createContextKey, createContextValues, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import type { UniversalHandler, UniversalServerRequest, UniversalServerResponse } from "@connectrpc/connect/protocol";

export interface DetachedBytes {
  /**
   * Takes the detached field of the next message the handler answers, whole or as pieces written
   * one after the other (never joined); that message must leave the field empty. Every message
   * of a call must go through here once a slot was given.
   */
  hold(bytes: Uint8Array | readonly Uint8Array[]): void;
}

const slotKey = createContextKey<DetachedBytes | undefined>(undefined, { description: "detached bytes field" });

/** The call's slot for its detached bytes field, or undefined: then answer the field in the message. */
export function detachedBytes(ctx: HandlerContext): DetachedBytes | undefined {
  return ctx.values.get(slotKey);
}

type Framing = "unary" | "envelopes";

// Content types of binary framings, by the protocol that uses them.
const FRAMINGS: Readonly<Record<string, Framing>> = {
  "application/proto": "unary",
  "application/connect+proto": "envelopes",
  "application/grpc": "envelopes",
  "application/grpc+proto": "envelopes",
  "application/grpc-web": "envelopes",
  "application/grpc-web+proto": "envelopes",
};

// A response could be compressed if the client offered an encoding other than identity.
const ACCEPT_ENCODING_HEADERS = ["accept-encoding", "connect-accept-encoding", "grpc-accept-encoding"] as const;

function framingOf(req: UniversalServerRequest): Framing | undefined {
  if (req.method !== "POST") return undefined;
  const type = (req.header.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  const framing = FRAMINGS[type];
  if (framing === undefined) return undefined;
  for (const name of ACCEPT_ENCODING_HEADERS) {
    const offered = req.header.get(name);
    if (offered?.split(",").some((e) => !["", "identity"].includes(e.trim().toLowerCase()))) return undefined;
  }
  return framing;
}

/** A detached field's value: its pieces, and their length in all. */
interface Held {
  readonly pieces: readonly Uint8Array[];
  readonly length: number;
}

/** A varint's bytes, written at `at`; returns the position after it. */
function putVarint(target: Uint8Array, at: number, value: number): number {
  while (value > 0x7f) {
    target[at++] = (value % 0x80) | 0x80;
    value = Math.floor(value / 0x80);
  }
  target[at++] = value;
  return at;
}

/** `prefix` (the envelope's header, if any) then the field's tag and length, in one small buffer. */
function fieldHead(tag: number, length: number, prefix = 0): { head: Uint8Array; end: number } {
  const head = new Uint8Array(prefix + 10 + 5);
  let at = putVarint(head, prefix, tag);
  at = putVarint(head, at, length);
  return { head, end: at };
}

/**
 * The field of `message` that can be detached with the same bytes on the wire: its lowest-numbered
 * field, when that is a plain bytes field (not repeated, not in a oneof, and empty meaning unset,
 * so a message answered without it says nothing of it). Undefined when there is none.
 */
export function detachableBytesField(message: DescMessage): DescField | undefined {
  const first = [...message.fields].sort((a, b) => a.number - b.number)[0];
  if (first?.fieldKind !== "scalar" || first.scalar !== ScalarType.BYTES || first.oneof !== undefined) return undefined;
  // Implicit presence (proto3's plain fields): an empty value is not written at all.
  return first.presence === FeatureSet_FieldPresence.IMPLICIT ? first : undefined;
}

/**
 * Answers the bytes field `field` of `method`'s responses apart from the message (see above), in
 * the handlers `router` has for the method so far. A router without them (the edge's in-process
 * transport keeps none) is left as it is.
 */
export function detachBytesField(router: ConnectRouter, method: DescMethod, field: DescField): void {
  if (
    field.parent.typeName !== method.output.typeName ||
    detachableBytesField(method.output)?.number !== field.number
  ) {
    throw new Error(
      `${field.toString()} is not the first field of ${method.output.typeName} or not a plain bytes field`,
    );
  }
  const tag = field.number * 8 + 2;
  for (const [i, handler] of router.handlers.entries()) {
    if (handler.method.parent.typeName !== method.parent.typeName || handler.method.name !== method.name) continue;
    const wrapped = async (req: UniversalServerRequest): Promise<UniversalServerResponse> => {
      const framing = framingOf(req);
      if (framing === undefined) return handler(req);
      const held: Held[] = [];
      req.contextValues ??= createContextValues();
      req.contextValues.set(slotKey, {
        hold(bytes) {
          const pieces = (bytes instanceof Uint8Array ? [bytes] : bytes).filter((p) => p.length > 0);
          held.push({ pieces, length: pieces.reduce((n, p) => n + p.length, 0) });
        },
      });
      const res = await handler(req);
      if (res.status !== 200 || res.body === undefined) return res;
      return framing === "unary"
        ? unaryWithField(res, res.body, held, tag)
        : { ...res, body: envelopesWithField(res.body, held, tag) };
    };
    router.handlers[i] = Object.assign(wrapped, handler) as UniversalHandler;
  }
}

function unaryWithField(
  res: UniversalServerResponse,
  body: AsyncIterable<Uint8Array>,
  held: Held[],
  tag: number,
): UniversalServerResponse {
  // The handler has run: a message it answered in full (one forwarded from another replica) held nothing.
  const bytes = held.shift();
  if (bytes === undefined || bytes.length === 0 || res.header?.get("content-type") !== "application/proto") return res;
  const { head, end } = fieldHead(tag, bytes.length);
  const header = new Headers(res.header);
  const length = header.get("content-length");
  if (length !== null) header.set("content-length", String(Number(length) + end + bytes.length));
  return {
    ...res,
    header,
    body: (async function* () {
      yield head.subarray(0, end);
      yield* bytes.pieces;
      yield* body;
    })(),
  };
}

/**
 * The envelopes of `body` (5 bytes: flags, then the length, big-endian; then the data), each data
 * envelope with the next held bytes put in; others (end of stream, trailers) pass as they are.
 * Envelopes may span chunks: only the 5 header bytes are ever gathered.
 */
async function* envelopesWithField(
  body: AsyncIterable<Uint8Array>,
  held: Held[],
  tag: number,
): AsyncGenerator<Uint8Array> {
  const header = new Uint8Array(5);
  let headerBytes = 0;
  let remaining = 0;
  for await (const chunk of body) {
    let at = 0;
    while (at < chunk.length) {
      if (remaining > 0) {
        const n = Math.min(remaining, chunk.length - at);
        yield chunk.subarray(at, at + n);
        at += n;
        remaining -= n;
        continue;
      }
      const n = Math.min(5 - headerBytes, chunk.length - at);
      header.set(chunk.subarray(at, at + n), headerBytes);
      headerBytes += n;
      at += n;
      if (headerBytes < 5) continue;
      headerBytes = 0;
      const flags = header[0]!;
      remaining = new DataView(header.buffer).getUint32(1);
      // A data envelope (flags 0) takes the next held bytes; none are held for a message answered in full.
      const bytes = flags === 0 ? held.shift() : undefined;
      if (bytes === undefined || bytes.length === 0) {
        yield header.slice();
        continue;
      }
      const { head, end } = fieldHead(tag, bytes.length, 5);
      const length = remaining + (end - 5) + bytes.length;
      if (length > 0xffffffff) throw new Error("the message is too large for an envelope");
      head[0] = flags;
      new DataView(head.buffer).setUint32(1, length);
      yield head.subarray(0, end);
      yield* bytes.pieces;
    }
  }
}
