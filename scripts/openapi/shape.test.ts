import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { hasOption } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { http } from "@aiem/proto/google/api/annotations_pb.js";
import { publicServices } from "../../edge/src/host/parts.js";
import { loadImageRegistry } from "../../edge/src/registry.js";
import { NDJSON, shapeOpenApi } from "./shape.js";

const registry = loadImageRegistry();

// The generator's output in miniature: a resource, a streaming and a plain operation.
function generated() {
  return {
    swagger: "2.0",
    info: { title: "enginemanager/v1/dai_engine.proto", version: "version not set" },
    paths: {
      "/v1/x:streamOutput": {
        get: { operationId: "ProcessService_StreamProcessOutput", responses: { "200": { description: "" }, default: { description: "" } } },
      },
      "/v1/x": {
        get: { operationId: "DAIEngineService_GetDAIEngine", responses: { "200": { description: "" }, default: { description: "" } } },
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
        },
      },
    },
  };
}

describe("shapeOpenApi", () => {
  const shaped = shapeOpenApi(generated(), { registry, version: "1.2.3" }) as ReturnType<typeof generated> & Record<string, any>;

  it("marks the timestamp and duration fields nullable, as the edge sends them unset, and nothing else", () => {
    const props = shaped.definitions["enginemanager.v1.DAIEngine"].properties as Record<string, Record<string, unknown>>;
    expect(props["createTime"]?.["x-nullable"]).toBe(true);
    expect(props["maxIdleDuration"]?.["x-nullable"]).toBe(true);
    expect(props["profileInfo"]).not.toHaveProperty("x-nullable");
    expect(props["cpu"]).not.toHaveProperty("x-nullable");
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
    expect(shaped["info"]).toMatchObject({ title: "AI Engine Manager", version: "1.2.3" });
    expect(shaped["security"]).toEqual([{ bearer: [] }]);
    expect(shaped["securityDefinitions"].bearer).toMatchObject({ type: "apiKey", in: "header", name: "Authorization" });
  });

  it("leaves the generated document as it was", () => {
    const input = generated();
    shapeOpenApi(input, { registry, version: "1" });
    expect(input).toEqual(generated());
  });
});

describe("the generated document (proto/gen/openapi)", () => {
  const path = createRequire(import.meta.url).resolve("@aiem/proto/openapi/openapi.json");
  const doc = JSON.parse(readFileSync(path, "utf8")) as { paths: Record<string, Record<string, { operationId: string }>> };

  it("has an operation for every method of the public services with an HTTP rule", () => {
    const documented = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId)));
    const routed = publicServices(registry).flatMap((s) =>
      s.methods.filter((m) => hasOption(m, http)).map((m) => `${s.name}_${m.name}`),
    );
    expect(routed.length).toBeGreaterThan(100);
    expect(routed.filter((id) => !documented.has(id))).toEqual([]);
  });
});
