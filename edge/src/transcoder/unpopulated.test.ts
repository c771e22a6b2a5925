import { create, toJson, type JsonObject } from "@bufbuild/protobuf";
import { DAIEngineSchema } from "@aiem/proto/enginemanager/v1/dai_engine_pb.js";
import { ListDAIEnginesResponseSchema } from "@aiem/proto/enginemanager/v1/dai_engine_service_pb.js";
import { DAIEngineProfileSchema } from "@aiem/proto/enginemanager/v1/dai_engine_profile_pb.js";
import { EngineStateChangedSchema } from "@aiem/proto/enginemanager/events/v1/engine_events_pb.js";
import { describe, expect, it } from "vitest";
import { fillUnpopulated } from "./unpopulated.js";

const write = { alwaysEmitImplicit: true } as const;

describe("fillUnpopulated", () => {
  it("names unset messages and optional scalars with null, keeps what is set", () => {
    const engine = create(DAIEngineSchema, { name: "workspaces/w/daiEngines/e", cpu: 2 });
    const json = fillUnpopulated(DAIEngineSchema, toJson(DAIEngineSchema, engine, write) as JsonObject);
    expect(json).toMatchObject({
      name: "workspaces/w/daiEngines/e",
      cpu: 2,
      gpu: null,
      memoryBytes: null,
      deleteTime: null,
      maxIdleDuration: null,
      profileInfo: null,
      annotations: {},
      state: "STATE_UNSPECIFIED",
    });
  });

  it("fills nested messages, through lists", () => {
    const profile = create(DAIEngineProfileSchema, { cpuConstraint: { min: 1n, default: 2n } });
    const list = create(ListDAIEnginesResponseSchema, {
      daiEngines: [create(DAIEngineSchema, { profileInfo: profile })],
    });
    const json = fillUnpopulated(ListDAIEnginesResponseSchema, toJson(ListDAIEnginesResponseSchema, list, write) as JsonObject);
    const engines = json["daiEngines"] as JsonObject[];
    const cpu = (engines[0]?.["profileInfo"] as JsonObject)["cpuConstraint"];
    expect(cpu).toEqual({ min: "1", max: null, default: "2", cumulativeMax: null });
    expect(json["nextPageToken"]).toBe("");
  });

  it("leaves the members of a real oneof out, and well-known types as they are", () => {
    const event = create(EngineStateChangedSchema, {});
    const json = fillUnpopulated(EngineStateChangedSchema, toJson(EngineStateChangedSchema, event, write) as JsonObject);
    expect(Object.keys(json)).not.toContain("daiEngine");
    const engine = create(DAIEngineSchema, { maxIdleDuration: { seconds: 60n } });
    const withDuration = fillUnpopulated(DAIEngineSchema, toJson(DAIEngineSchema, engine, write) as JsonObject);
    expect(withDuration["maxIdleDuration"]).toBe("60s");
  });
});
