// Serves a service on the edge's Connect / gRPC / gRPC-Web router by passing every call on to
// the service's Transport, so a service that is only reachable through a transport is still
// callable in every protocol on the edge port.
import type { DescMethod, DescMethodStreaming, DescMethodUnary, DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type HandlerContext, type Transport } from "@connectrpc/connect";
import { createAsyncIterable } from "@connectrpc/connect/protocol";
import { detachBytesField, detachableBytesField, detachedBytes } from "@aiem/kit/server";
import { copyApplicationHeaders } from "../headers.js";

type AnyMessage = Record<string, unknown>;

function outgoingHeaders(ctx: HandlerContext): Headers {
  const h = new Headers();
  copyApplicationHeaders(ctx.requestHeader, h);
  return h;
}

// An upstream error carries the upstream response's headers and trailers as metadata; only
// the application ones may reach our response, the framing ones would corrupt it.
function cleanError(reason: unknown): unknown {
  if (!(reason instanceof ConnectError)) return reason;
  const metadata = new Headers();
  copyApplicationHeaders(reason.metadata, metadata);
  const clean = new ConnectError(reason.rawMessage, reason.code, metadata, undefined, reason.cause);
  clean.details.push(...reason.details);
  return clean;
}

function forwarder(desc: DescMethod, transport: Transport): unknown {
  // The kind is checked by the switch; the casts only tell the transport which call it is.
  const method = desc as DescMethod & DescMethodUnary & DescMethodStreaming;
  // A response led by a bytes field (a file's content, output) keeps it out of protobuf-es's
  // encoder on the way out, as the service itself does (kit/server/detached-bytes.ts).
  const field = detachableBytesField(desc.output);
  const answer = (message: unknown, ctx: HandlerContext): unknown => {
    const detached = field && detachedBytes(ctx);
    if (!detached) return message;
    const m = message as AnyMessage;
    detached.hold(m[field.localName] as Uint8Array);
    // A copy: a transport may hand over a message its service still holds.
    return { ...m, [field.localName]: new Uint8Array(0) };
  };
  const stream = (inputs: AsyncIterable<AnyMessage>, ctx: HandlerContext) =>
    transport.stream(method, ctx.signal, ctx.timeoutMs(), outgoingHeaders(ctx), inputs, ctx.values);
  switch (desc.methodKind) {
    case "unary":
      return async (input: AnyMessage, ctx: HandlerContext) => {
        try {
          const res = await transport.unary(
            method,
            ctx.signal,
            ctx.timeoutMs(),
            outgoingHeaders(ctx),
            input,
            ctx.values,
          );
          copyApplicationHeaders(res.header, ctx.responseHeader);
          copyApplicationHeaders(res.trailer, ctx.responseTrailer);
          return answer(res.message, ctx);
        } catch (e) {
          throw cleanError(e);
        }
      };
    case "server_streaming":
      return async function* (input: AnyMessage, ctx: HandlerContext) {
        try {
          const res = await stream(createAsyncIterable([input]), ctx);
          copyApplicationHeaders(res.header, ctx.responseHeader);
          for await (const message of res.message) yield answer(message, ctx);
          copyApplicationHeaders(res.trailer, ctx.responseTrailer);
        } catch (e) {
          throw cleanError(e);
        }
      };
    case "client_streaming":
      return async (inputs: AsyncIterable<AnyMessage>, ctx: HandlerContext) => {
        try {
          const res = await stream(inputs, ctx);
          copyApplicationHeaders(res.header, ctx.responseHeader);
          let last: unknown;
          for await (const m of res.message) last = m;
          if (last === undefined) throw new ConnectError("upstream sent no response", Code.Internal);
          copyApplicationHeaders(res.trailer, ctx.responseTrailer);
          return last;
        } catch (e) {
          throw cleanError(e);
        }
      };
    case "bidi_streaming":
      return async function* (inputs: AsyncIterable<AnyMessage>, ctx: HandlerContext) {
        try {
          const res = await stream(inputs, ctx);
          copyApplicationHeaders(res.header, ctx.responseHeader);
          yield* res.message;
          copyApplicationHeaders(res.trailer, ctx.responseTrailer);
        } catch (e) {
          throw cleanError(e);
        }
      };
  }
}

/** Registers `service` on `router`, every method passed on to `transport`. */
export function registerForwardingService(router: ConnectRouter, service: DescService, transport: Transport): void {
  const impl: Record<string, unknown> = {};
  for (const method of service.methods) impl[method.localName] = forwarder(method, transport);
  router.service(service, impl as never);
  for (const method of service.methods) {
    const field = detachableBytesField(method.output);
    if (field && (method.methodKind === "unary" || method.methodKind === "server_streaming"))
      detachBytesField(router, method, field);
  }
}
