// The routes of the transcoder: every `google.api.http` binding of the given services, read from
// their descriptors once at start-up, in a trie by method and path template.
import { getOption, type DescField, type DescMessage, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { type ContextValues, createContextValues, type Interceptor, type Transport } from "@connectrpc/connect";
import { runStreamingCall, runUnaryCall } from "@connectrpc/connect/protocol";
import { http } from "@aiem/proto/google/api/annotations_pb.js";
import type { HttpRule } from "@aiem/proto/google/api/http_pb.js";
import type { EdgeLogger } from "../logger.js";
import { parsePathTemplate, type PathTemplate } from "./path-template.js";
import { createRequestPlan, type RequestPlan } from "./request-builder.js";
import { createRouteTrie, type RouteTrie } from "./route-trie.js";

/** One REST route, for listings and docs. */
export interface RestRoute {
  readonly httpMethod: string;
  readonly path: string;
  readonly body: string;
  /** `package.Service.Method` */
  readonly method: string;
}

export interface RouteEntry {
  readonly method: DescMethod;
  readonly template: PathTemplate;
  readonly plan: RequestPlan;
  readonly call: CallTarget;
  readonly output: DescMessage;
  readonly responseField: DescField | undefined;
  readonly serverStreaming: boolean;
}

export interface CallTarget {
  readonly transport: Transport;
  readonly service: DescService;
}

export interface RouteTable {
  readonly trie: RouteTrie<RouteEntry>;
  readonly routes: readonly RestRoute[];
}

/** Reads the routes of `services`; calls go through `interceptors` as a client's would. */
export function buildRouteTable(
  services: readonly { readonly service: DescService; readonly transport: Transport }[],
  interceptors: readonly Interceptor[] | undefined,
  logger: EdgeLogger,
): RouteTable {
  const trie = createRouteTrie<RouteEntry>((r) => `${r.method.parent.typeName}.${r.method.name}`);
  const routes: RestRoute[] = [];
  for (const { service, transport } of services) {
    const target: CallTarget = {
      transport: interceptors?.length ? withInterceptors(transport, [...interceptors]) : transport,
      service,
    };
    for (const method of service.methods) {
      const rule = getOption(method, http);
      for (const binding of flattenRule(rule)) {
        if (method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming") {
          logger.warn("http rule on a client-streaming method is not served over REST", {
            method: `${service.typeName}.${method.name}`,
          });
          continue;
        }
        const template = parsePathTemplate(binding.path);
        const responseField = binding.responseBody
          ? method.output.fields.find((f) => f.name === binding.responseBody)
          : undefined;
        if (binding.responseBody && !responseField) {
          throw new Error(`${service.typeName}.${method.name}: response_body "${binding.responseBody}" does not exist`);
        }
        const entry: RouteEntry = {
          method,
          template,
          plan: createRequestPlan(method, template, binding.body),
          call: target,
          output: method.output,
          responseField,
          serverStreaming: method.methodKind === "server_streaming",
        };
        trie.add(binding.httpMethod, template, entry);
        routes.push({
          httpMethod: binding.httpMethod,
          path: binding.path,
          body: binding.body,
          method: `${service.typeName}.${method.name}`,
        });
      }
    }
  }
  return { trie, routes };
}

interface Binding {
  readonly httpMethod: string;
  readonly path: string;
  readonly body: string;
  readonly responseBody: string;
}

function flattenRule(rule: HttpRule): Binding[] {
  const out: Binding[] = [];
  const visit = (r: HttpRule) => {
    const { case: kind, value } = r.pattern;
    if (kind === "custom")
      out.push({ httpMethod: value.kind.toUpperCase(), path: value.path, body: r.body, responseBody: r.responseBody });
    else if (kind !== undefined)
      out.push({ httpMethod: kind.toUpperCase(), path: value, body: r.body, responseBody: r.responseBody });
    for (const extra of r.additionalBindings) visit(extra);
  };
  visit(rule);
  return out;
}

/** What a request made directly on a transport says about its call, whether unary or streaming. */
function callTarget<Method extends DescMethod>(
  method: Method,
  header: Parameters<Transport["unary"]>[3],
  contextValues: ContextValues | undefined,
) {
  return {
    service: method.parent,
    method,
    requestMethod: "POST",
    url: `/${method.parent.typeName}/${method.name}`,
    header: new Headers(header),
    contextValues: contextValues ?? createContextValues(),
  };
}

/** Applies interceptors to calls made directly on a transport, as a client would. */
function withInterceptors(transport: Transport, interceptors: Interceptor[]): Transport {
  return {
    unary(method, signal, timeoutMs, header, input, contextValues) {
      return runUnaryCall({
        interceptors,
        signal,
        timeoutMs,
        req: {
          stream: false,
          ...callTarget(method, header, contextValues),
          message: input,
        },
        next: (req) => transport.unary(req.method, req.signal, timeoutMs, req.header, req.message, req.contextValues),
      });
    },
    stream(method, signal, timeoutMs, header, input, contextValues) {
      return runStreamingCall({
        interceptors,
        signal,
        timeoutMs,
        req: {
          stream: true,
          ...callTarget(method, header, contextValues),
          message: input,
        },
        next: (req) => transport.stream(req.method, req.signal, timeoutMs, req.header, req.message, req.contextValues),
      });
    },
  };
}
