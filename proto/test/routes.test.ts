// Every /v1 route of spec section 7, and nothing else. Rows marked `addition` are ours and say why.
import { describe, expect, it } from "vitest";
import { internalPackages, loadRegistry, ourServices, routesOf, type Route } from "./descriptors.js";
import { specRoutes as expected } from "./spec-routes.js";

const key = (r: { verb: string; path: string }) => `${r.verb} ${r.path}`;

// Files as message streams, for Connect and gRPC clients: REST has no way to carry a client stream,
// and its clients send and get the raw bytes through `:upload` and `:download` instead.
const fileStreams = ["WriteFileStream", "ReadFileStream"];

describe("HTTP routes", () => {
  const registry = loadRegistry();
  const actual: Route[] = ourServices(registry).flatMap((s) => s.methods.flatMap(routesOf));
  const byKey = new Map(actual.map((r) => [key(r), r]));

  it("has no two methods on the same verb and path", () => {
    expect(byKey.size).toBe(actual.length);
  });

  it.each(expected.map((r) => [`${r[0]} ${r[1]}`, r] as const))("%s", (_, [verb, path, body, method]) => {
    const route = byKey.get(key({ verb, path }));
    expect(route, `${verb} ${path} is missing`).toBeDefined();
    expect(route?.method).toBe(method);
    expect(route?.body).toBe(body);
  });

  it("has no route that the spec (or our listed additions) does not name", () => {
    const known = new Set(expected.map(([verb, path]) => key({ verb, path })));
    expect(actual.filter((r) => !known.has(key(r))).map(key)).toEqual([]);
  });

  it("gives every public method an HTTP route, and the internal APIs none", () => {
    for (const service of ourServices(registry)) {
      const internal = internalPackages.includes(service.file.proto.package);
      for (const method of service.methods) {
        expect(routesOf(method).length, method.name).toBe(internal || fileStreams.includes(method.name) ? 0 : 1);
      }
    }
  });

  it("streams process output and file contents, and only those", () => {
    const streaming = ourServices(registry)
      .filter((s) => !internalPackages.includes(s.file.proto.package))
      .flatMap((s) => s.methods)
      .filter((m) => m.methodKind !== "unary")
      .map((m) => `${m.name}:${m.methodKind}`);
    expect(streaming.sort()).toEqual([
      "ReadFileStream:server_streaming",
      "StreamProcessOutput:server_streaming",
      "WriteFileStream:client_streaming",
    ]);
  });
});
