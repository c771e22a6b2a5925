import { readFileSync } from "node:fs";
import type { RestJson } from "@aiem/kit/testing";
import { createRequire } from "node:module";
import { hasOption } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { http } from "@aiem/proto/google/api/annotations_pb.js";
import { publicServices } from "../../edge/src/host/parts.js";
import { loadImageRegistry } from "../../edge/src/registry.js";
import { NDJSON, shapeOpenApi } from "./shape.js";

const registry = loadImageRegistry();

// The generator's output in miniature: a resource, a streaming and a plain operation.
function generated(): Parameters<typeof shapeOpenApi>[0] {
  return {
    swagger: "2.0",
    info: { title: "enginemanager/v1/dai_engine.proto", version: "version not set" },
    paths: {
      "/v1/x:streamOutput": {
        get: {
          operationId: "ProcessService_StreamProcessOutput",
          responses: { "200": { description: "" }, default: { description: "" } },
        },
      },
      "/v1/x": {
        get: {
          operationId: "DAIEngineService_GetDAIEngine",
          responses: { "200": { description: "" }, default: { description: "" } },
        },
      },
      "/v1/workspaces/{workspace}/daiEngines/{daiEngine}": {
        patch: {
          operationId: "DAIEngineService_UpdateDAIEngine",
          parameters: [
            {
              name: "daiEngine",
              in: "body",
              required: true,
              schema: { type: "object", properties: { maxIdleDuration: { type: "string" }, cpu: { type: "integer" } } },
            },
          ],
          responses: {},
        },
      },
      "/v1/workspaces/{workspace}/daiEngineVersions/{daiEngineVersion}:assignAliases": {
        post: {
          operationId: "DAIEngineVersionService_AssignDAIEngineVersionAliases",
          parameters: [
            { name: "workspace", in: "path", required: true, type: "string" },
            { name: "daiEngineVersion", in: "path", required: true, type: "string" },
          ],
          responses: {},
        },
      },
      "/v1/workspaces/{workspace}/secrets/{secret}/versions/{version}": {
        get: {
          operationId: "SecretVersionService_GetSecretVersion",
          parameters: [
            { name: "workspace", in: "path", required: true, type: "string" },
            { name: "secret", in: "path", required: true, type: "string" },
            { name: "version", in: "path", required: true, type: "string" },
            { name: "pageSize", in: "query", type: "string", format: "int64" },
          ],
          responses: {},
        },
      },
    },
    definitions: {
      "enginemanager.v1.DAIEngine": {
        type: "object",
        properties: {
          createTime: { type: "string", format: "date-time" },
          maxIdleDuration: { type: "string" },
          profileInfo: { $ref: "#/definitions/enginemanager.v1.DAIEngineProfile" },
          cpu: { type: "integer", format: "int32" },
          memoryBytes: { type: "string", format: "int64" },
        },
      },
    },
  };
}

describe("shapeOpenApi", () => {
  // Reached into by known paths; the shapes are checked by the expectations.
  const shaped = shapeOpenApi(generated(), { registry, version: "1.2.3" }) as Record<string, RestJson>;

  it("marks the timestamp and duration fields nullable, as the edge sends them unset, and nothing else", () => {
    const props = shaped.definitions["enginemanager.v1.DAIEngine"].properties as Record<
      string,
      Record<string, unknown>
    >;
    expect(props.createTime?.["x-nullable"]).toBe(true);
    expect(props.maxIdleDuration?.["x-nullable"]).toBe(true);
    expect(props.profileInfo).not.toHaveProperty("x-nullable");
    expect(props.cpu).not.toHaveProperty("x-nullable");
  });

  it("describes the well-known fields of a request body written inline, found through the HTTP rule", () => {
    const body =
      shaped.paths["/v1/workspaces/{workspace}/daiEngines/{daiEngine}"].patch.parameters[0].schema.properties;
    expect(body.maxIdleDuration).toMatchObject({ "x-nullable": true, pattern: "^-?[0-9]+(\\.[0-9]{1,9})?s$" });
    expect(new RegExp(body.maxIdleDuration.pattern).test("3600s")).toBe(true);
    expect(new RegExp(body.maxIdleDuration.pattern).test("1.5s")).toBe(true);
    expect(new RegExp(body.maxIdleDuration.pattern).test("1h")).toBe(false);
    expect(body.cpu).toEqual({ type: "integer" });
  });

  it("gives each path id the pattern the services check it with", () => {
    const matches = (path: string, method: "get" | "post", name: string, value: string) => {
      const operation = (
        shaped.paths as Record<string, Record<string, { parameters: { name: string; pattern: string }[] }>>
      )[path]![method]!;
      const pattern = operation.parameters.find((p) => p.name === name)!.pattern;
      return new RegExp(pattern).test(value);
    };
    const versions = "/v1/workspaces/{workspace}/daiEngineVersions/{daiEngineVersion}:assignAliases";
    expect(matches(versions, "post", "workspace", "team-a")).toBe(true);
    expect(matches(versions, "post", "workspace", "0")).toBe(true);
    expect(matches(versions, "post", "workspace", "-a")).toBe(false);
    expect(matches(versions, "post", "daiEngineVersion", "1.10.3")).toBe(true);
    expect(matches(versions, "post", "daiEngineVersion", "latest")).toBe(true);
    expect(matches(versions, "post", "daiEngineVersion", "1.10")).toBe(true);
    expect(matches(versions, "post", "daiEngineVersion", "1..10")).toBe(false);
    const secretVersion = "/v1/workspaces/{workspace}/secrets/{secret}/versions/{version}";
    expect(matches(secretVersion, "get", "version", "12")).toBe(true);
    expect(matches(secretVersion, "get", "version", "latest")).toBe(true);
    expect(matches(secretVersion, "get", "version", "v1")).toBe(false);
  });

  it("gives 64-bit integers, sent as strings, a pattern of digits", () => {
    const props = shaped.definitions["enginemanager.v1.DAIEngine"].properties as Record<
      string,
      Record<string, unknown>
    >;
    expect(props.memoryBytes?.pattern).toBe("^-?[0-9]+$");
    const query = shaped.paths["/v1/workspaces/{workspace}/secrets/{secret}/versions/{version}"].get.parameters[3];
    expect(query).toHaveProperty("pattern", "^-?[0-9]+$");
  });

  it("says that server-streaming operations answer newline-delimited JSON, or JSON when they fail first", () => {
    expect(shaped.paths["/v1/x:streamOutput"].get).toHaveProperty("produces", [NDJSON, "application/json"]);
    expect(shaped.paths["/v1/x"].get).not.toHaveProperty("produces");
  });

  it("describes the error response with the HTTP status of each gRPC code", () => {
    const description = shaped.paths["/v1/x"].get.responses.default.description;
    expect(description).toContain("NOT_FOUND 404");
    expect(description).toContain("FAILED_PRECONDITION 400");
    expect(description).toContain("UNAUTHENTICATED 401");
  });

  it("names the product and its version and asks for a bearer token", () => {
    expect(shaped.info).toMatchObject({ title: "AI Engine Manager", version: "1.2.3" });
    expect(shaped.security).toEqual([{ bearer: [] }]);
    expect(shaped.securityDefinitions.bearer).toMatchObject({ type: "apiKey", in: "header", name: "Authorization" });
  });

  it("leaves the generated document as it was", () => {
    const input = generated();
    shapeOpenApi(input, { registry, version: "1" });
    expect(input).toEqual(generated());
  });
});

describe("the generated document (proto/gen/openapi)", () => {
  const path = createRequire(import.meta.url).resolve("@aiem/proto/openapi/openapi.json");
  const doc = JSON.parse(readFileSync(path, "utf8")) as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };

  it("has an operation for every method of the public services with an HTTP rule", () => {
    const documented = new Set(
      Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId)),
    );
    const routed = publicServices(registry).flatMap((s) =>
      s.methods.filter((m) => hasOption(m, http)).map((m) => `${s.name}_${m.name}`),
    );
    expect(routed.length).toBeGreaterThan(100);
    expect(routed.filter((id) => !documented.has(id))).toEqual([]);
  });

  it("asks every PATCH for its update mask, which the server does not fill in from the body", () => {
    const patches = Object.values(doc.paths).flatMap((item) => (item.patch ? [item.patch] : [])) as unknown as {
      parameters: { name: string; in: string; required?: boolean }[];
    }[];
    expect(patches.length).toBeGreaterThan(5);
    for (const patch of patches) {
      expect(patch.parameters).toContainEqual(
        expect.objectContaining({ name: "updateMask", in: "query", required: true }),
      );
    }
  });
});
