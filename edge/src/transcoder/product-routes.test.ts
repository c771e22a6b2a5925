// The transcoder over the product's real contract (the image `npm run gen` builds): every
// google.api.http rule loads without clashes, and representative spec routes reach the right
// method with the right request.
import { createServer, type Server } from "node:http";
import type { RestJson } from "@aiem/kit/testing";
import type { AddressInfo } from "node:net";
import { create, toJson, type DescMethod, type DescService } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadImageRegistry } from "../registry.js";
import { createTranscoder } from "./transcoder.js";

const registry = loadImageRegistry();
const services: DescService[] = [];
for (const file of registry.files) {
  if (file.proto.package.startsWith("enginemanager.")) services.push(...file.services);
}

const calls: Array<{ method: string; message: RestJson; request: unknown }> = [];
const record = (method: DescMethod, message: RestJson) => {
  let request: unknown;
  try {
    request = toJson(method.input, message as never);
  } catch {
    request = undefined; // e.g. a FieldMask path JSON cannot express; tests look at `message`
  }
  calls.push({ method: method.name, message, request });
};
// Answers every call with an empty response and remembers what it was asked.
const recorder: Transport = {
  async unary(method, _signal, _timeout, _header, input) {
    record(method, input);
    return {
      stream: false,
      service: method.parent,
      method,
      header: new Headers(),
      trailer: new Headers(),
      message: create(method.output),
    };
  },
  async stream(method, _signal, _timeout, _header, input) {
    for await (const m of input) record(method, m);
    async function* none() {}
    return {
      stream: true,
      service: method.parent,
      method,
      header: new Headers(),
      trailer: new Headers(),
      message: none(),
    } as never;
  },
};

const transcoder = createTranscoder({
  services: services.map((service) => ({ service, transport: recorder })),
  registry,
});
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer(transcoder.handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function send(method: string, path: string, body?: unknown) {
  calls.length = 0;
  const res = await fetch(base + path, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, text: await res.text(), call: calls[0] };
}

describe("the product's REST routes", () => {
  it("loads every http rule of the contract", () => {
    expect(transcoder.routes.length).toBeGreaterThanOrEqual(114);
  });

  it("routes resource, collection and custom-verb paths", async () => {
    const cases: Array<[string, string, unknown, string, Record<string, unknown>]> = [
      ["GET", "/v1/workspaces/w1/daiEngines/e1", undefined, "GetDAIEngine", { name: "workspaces/w1/daiEngines/e1" }],
      [
        "GET",
        "/v1/workspaces/-/daiEngines?pageSize=5&orderBy=create_time%20desc",
        undefined,
        "ListDAIEngines",
        { parent: "workspaces/-", pageSize: 5, orderBy: "create_time desc" },
      ],
      ["POST", "/v1/workspaces/w1/daiEngines/e1:pause", {}, "PauseDAIEngine", { name: "workspaces/w1/daiEngines/e1" }],
      [
        "PATCH",
        "/v1/workspaces/w1/daiEngines/e1?updateMask=display_name,cpu",
        { displayName: "x" },
        "UpdateDAIEngine",
        { daiEngine: { name: "workspaces/w1/daiEngines/e1", displayName: "x" } },
      ],
      [
        "GET",
        "/v1/workspaces/w1/sandboxEngines/s1/filesystem:readFile?path=/etc/hosts",
        undefined,
        "ReadFile",
        { name: "workspaces/w1/sandboxEngines/s1", path: "/etc/hosts" },
      ],
      [
        "GET",
        "/v1/workspaces/global/daiEngineProfiles:listAssigned",
        undefined,
        "ListAssignedDAIEngineProfiles",
        { parent: "workspaces/global" },
      ],
      [
        "GET",
        "/v1/workspaces/w1/sandboxEngines/s1/processes/p1:streamOutput",
        undefined,
        "StreamProcessOutput",
        { name: "workspaces/w1/sandboxEngines/s1/processes/p1" },
      ],
    ];
    for (const [method, path, body, rpc, request] of cases) {
      const r = await send(method, path, body);
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(200);
      expect(r.call?.method, path).toBe(rpc);
      expect(r.call?.request, path).toMatchObject(request);
    }
  });

  // The official Python client quotes a whole resource name into one path parameter, so
  // `workspaces/w/daiEngines/e` arrives as `workspaces%2Fw%2FdaiEngines%2Fe`.
  it("reaches the same method with the same request when names arrive with %2F, on every route", async () => {
    const shapes = new Set<string>();
    for (const route of transcoder.routes.filter((r) => r.path.includes("{"))) {
      let n = 0;
      const plain = route.path.replace(/\{[a-z0-9_.]+=([^}]+)\}/g, (_all, pattern: string) =>
        pattern.replace(/\*/g, () => `x${++n}`),
      );
      n = 0;
      const quoted = route.path.replace(/\{[a-z0-9_.]+=([^}]+)\}/g, (_all, pattern: string) =>
        encodeURIComponent(pattern.replace(/\*/g, () => `x${++n}`)),
      );
      expect(quoted, route.path).toContain("%2F");
      shapes.add(route.path.replace(/[A-Za-z0-9]+/g, "a"));
      const body = route.body === "" ? undefined : {};
      const a = await send(route.httpMethod, plain, body);
      const b = await send(route.httpMethod, quoted, body);
      expect(a.status, `${route.httpMethod} ${plain}: ${a.text}`).toBe(200);
      expect(b.status, `${route.httpMethod} ${quoted}: ${b.text}`).toBe(200);
      expect(b.call?.method, quoted).toBe(a.call?.method);
      expect(b.call?.request, quoted).toEqual(a.call?.request);
    }
    // resource, nested resource, collection, custom verbs on both, sub-collections, nested fields
    expect(shapes.size).toBeGreaterThanOrEqual(8);
  });

  it("keeps other encodings as they were when a name is quoted whole", async () => {
    const r = await send("GET", "/v1/workspaces%2Fw%201%2FdaiEngines%2Fe%3A1");
    expect(r.status, r.text).toBe(200);
    expect(r.call?.request).toEqual({ name: "workspaces/w 1/daiEngines/e:1" });
    const unknown = await send("GET", "/v1/workspaces%2Fw%2Fnothing%2Fe");
    expect(unknown.status).toBe(404);
  });

  it("reaches a custom verb on a literal collection", async () => {
    const route = transcoder.routes.find((r) => r.path === "/v1/h2oEngines:calculateH2OEngineSizeCompressedDataset");
    expect(route).toBeDefined();
    const r = await send("POST", "/v1/h2oEngines:calculateH2OEngineSizeCompressedDataset", {});
    expect(r.status, r.text).toBe(200);
    expect(r.call?.method).toBe("CalculateH2OEngineSizeCompressedDataset");
  });

  it("passes update masks through exactly", async () => {
    const r = await send("PATCH", "/v1/workspaces/w1/daiEngines/e1?updateMask=display_name,Max_Idle_Duration", {
      displayName: "x",
    });
    expect(r.status).toBe(200);
    expect(calls[0]?.message.updateMask.paths).toEqual(["display_name", "Max_Idle_Duration"]);
  });
});
