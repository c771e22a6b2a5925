// A Transport that calls service implementations in this process directly: no serialization,
// no envelopes, the message objects are handed over as they are. The edge uses it for services
// it hosts itself (the all-in-one launcher), where createRouterTransport would encode every
// request and response to binary and back for nothing.
//
// It keeps the handler semantics services rely on: a HandlerContext with request headers,
// context values, deadline and cancellation signal (aborted when the call ends), response
// headers and trailers, per-service interceptors, and output normalisation.
import { create, isMessage, type DescMessage, type DescMethod } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createHandlerContext,
  createMethodImplSpec,
  createServiceImplSpec,
  type ConnectRouter,
  type Interceptor,
  type MethodImplSpec,
  type Transport,
} from "@connectrpc/connect";
import { invokeUnaryImplementation, transformInvokeImplementation } from "@connectrpc/connect/protocol";
import type { Routes } from "./edge-handler.js";

interface Entry {
  readonly spec: MethodImplSpec;
  readonly interceptors: Interceptor[];
}

const key = (method: DescMethod) => `${method.parent.typeName}/${method.name}`;

function toMessage(desc: DescMessage, value: unknown): unknown {
  return isMessage(value, desc) ? value : create(desc, value as never);
}

async function* normalized(desc: DescMessage, input: AsyncIterable<unknown>): AsyncIterable<unknown> {
  for await (const m of input) yield toMessage(desc, m);
}

function raceAbort<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  if (signal.aborted) return Promise.reject(ConnectError.from(signal.reason, Code.Canceled));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(ConnectError.from(signal.reason, Code.Canceled));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/** A transport over the implementations that `routes` registers. */
export function createInProcessTransport(routes: Routes): Transport {
  const entries = new Map<string, Entry>();
  const capture: ConnectRouter = {
    handlers: [],
    service(service, implementation, options) {
      const spec = createServiceImplSpec(service, implementation);
      for (const m of Object.values(spec.methods))
        entries.set(key(m.method), { spec: m, interceptors: options?.interceptors ?? [] });
      return this;
    },
    rpc(method, impl, options) {
      entries.set(key(method), { spec: createMethodImplSpec(method, impl), interceptors: options?.interceptors ?? [] });
      return this;
    },
  };
  routes(capture);

  const lookup = (method: DescMethod): Entry => {
    const entry = entries.get(key(method));
    if (!entry) throw new ConnectError(`${key(method)} is not served in this process`, Code.Unimplemented);
    return entry;
  };
  const contextFor = (
    method: DescMethod,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    header: ConstructorParameters<typeof Headers>[0],
    contextValues: Parameters<typeof createHandlerContext>[0]["contextValues"],
  ) =>
    createHandlerContext({
      service: method.parent,
      method,
      protocolName: "in-process",
      requestMethod: "POST",
      url: `/${key(method)}`,
      timeoutMs,
      requestSignal: signal,
      requestHeader: header,
      contextValues,
    });

  return {
    async unary(method, signal, timeoutMs, header, input, contextValues) {
      const entry = lookup(method);
      const ctx = contextFor(method, signal, timeoutMs, header, contextValues);
      try {
        const message = await raceAbort(
          ctx.signal,
          invokeUnaryImplementation(
            entry.spec as never,
            ctx,
            toMessage(method.input, input) as never,
            entry.interceptors,
          ),
        );
        return {
          stream: false,
          service: method.parent,
          method,
          header: ctx.responseHeader,
          trailer: ctx.responseTrailer,
          message: message as never,
        };
      } catch (e) {
        throw ConnectError.from(e);
      } finally {
        ctx.abort();
      }
    },

    async stream(method, signal, timeoutMs, header, input, contextValues) {
      const entry = lookup(method);
      const ctx = contextFor(method, signal, timeoutMs, header, contextValues);
      const output = transformInvokeImplementation(
        entry.spec,
        ctx,
        entry.interceptors,
      )(normalized(method.input, input) as never)[Symbol.asyncIterator]();
      // Like a network transport, answer once the handler produced its first message (and so
      // set its response headers), or failed.
      let first: IteratorResult<unknown>;
      try {
        first = await raceAbort(ctx.signal, output.next());
      } catch (e) {
        ctx.abort();
        throw ConnectError.from(e);
      }
      async function* messages() {
        try {
          let next = first;
          while (!next.done) {
            yield next.value;
            next = await raceAbort(ctx.signal, output.next());
          }
        } catch (e) {
          throw ConnectError.from(e);
        } finally {
          ctx.abort();
        }
      }
      return {
        stream: true,
        service: method.parent,
        method,
        header: ctx.responseHeader,
        trailer: ctx.responseTrailer,
        message: messages() as never,
      };
    },
  };
}
