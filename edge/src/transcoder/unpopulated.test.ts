import { create, toJson, type JsonObject } from "@bufbuild/protobuf";
import { DAIEngineSchema } from "@aiem/proto/enginemanager/v1/dai_engine_pb.js";
import {
  DeleteDAIEngineResponseSchema,
  ListDAIEnginesResponseSchema,
} from "@aiem/proto/enginemanager/v1/dai_engine_service_pb.js";
import { GetDAILicenseMetadataResponseSchema } from "@aiem/proto/enginemanager/v1/dai_license_service_pb.js";
import { ProcessSchema } from "@aiem/proto/enginemanager/sandbox/v1/process_pb.js";
import { DAIEngineProfileSchema } from "@aiem/proto/enginemanager/v1/dai_engine_profile_pb.js";
import { EngineStateChangedSchema } from "@aiem/proto/enginemanager/events/v1/engine_events_pb.js";
import { describe, expect, it } from "vitest";
import { fillUnpopulated } from "./unpopulated.js";

const write = { alwaysEmitImplicit: true } as const;

describe("fillUnpopulated", () => {
  it("names unset well-known types with null, keeps what is set", () => {
    const engine = create(DAIEngineSchema, { name: "workspaces/w/daiEngines/e", cpu: 2 });
    const json = fillUnpopulated(DAIEngineSchema, toJson(DAIEngineSchema, engine, write) as JsonObject);
    expect(json).toMatchObject({
      name: "workspaces/w/daiEngines/e",
      cpu: 2,
      deleteTime: null,
      maxIdleDuration: null,
      annotations: {},
      state: "STATE_UNSPECIFIED",
    });
  });

  // The official Python client's models accept no null for a message or for most optional
  // scalars (Process.exitCode), and read an absent key as None; protojson leaves proto3 optional
  // scalars out as members of their synthetic oneof.
  it("leaves unset optional scalars and messages other than well-known types out", () => {
    const engine = create(DAIEngineSchema, { name: "workspaces/w/daiEngines/e" });
    const json = fillUnpopulated(DAIEngineSchema, toJson(DAIEngineSchema, engine, write) as JsonObject);
    for (const key of ["cpu", "gpu", "memoryBytes", "profileInfo", "daiEngineVersionInfo"])
      expect(Object.keys(json)).not.toContain(key);
    expect(json.deleteTime).toBeNull();
    const process = create(ProcessSchema, { name: "workspaces/w/sandboxEngines/s/processes/p", command: "sleep" });
    expect(
      Object.keys(fillUnpopulated(ProcessSchema, toJson(ProcessSchema, process, write) as JsonObject)),
    ).not.toContain("exitCode");
    // No license: the answer has no metadata key at all, which the client reads as None.
    const license = create(GetDAILicenseMetadataResponseSchema, {});
    expect(
      fillUnpopulated(
        GetDAILicenseMetadataResponseSchema,
        toJson(GetDAILicenseMetadataResponseSchema, license, write) as JsonObject,
      ),
    ).toEqual({});
    // A deletion that deleted nothing (allow_missing) answers without an engine.
    const deleted = create(DeleteDAIEngineResponseSchema, {});
    expect(
      fillUnpopulated(
        DeleteDAIEngineResponseSchema,
        toJson(DeleteDAIEngineResponseSchema, deleted, write) as JsonObject,
      ),
    ).toEqual({});
  });

  it("fills nested messages, through lists", () => {
    const profile = create(DAIEngineProfileSchema, { cpuConstraint: { min: 1n, default: 2n } });
    const list = create(ListDAIEnginesResponseSchema, {
      daiEngines: [create(DAIEngineSchema, { profileInfo: profile })],
    });
    const json = fillUnpopulated(
      ListDAIEnginesResponseSchema,
      toJson(ListDAIEnginesResponseSchema, list, write) as JsonObject,
    );
    const engines = json.daiEngines as JsonObject[];
    const cpu = (engines[0]!.profileInfo as JsonObject).cpuConstraint;
    expect(cpu).toEqual({ min: "1", default: "2" });
    const idle = create(DAIEngineProfileSchema, {
      maxIdleDurationConstraint: { min: { seconds: 0n }, default: { seconds: 60n } },
    });
    const duration = fillUnpopulated(
      DAIEngineProfileSchema,
      toJson(DAIEngineProfileSchema, idle, write) as JsonObject,
    ).maxIdleDurationConstraint;
    expect(duration).toEqual({ min: "0s", max: null, default: "60s" });
    expect(json.nextPageToken).toBe("");
  });

  it("leaves the members of a real oneof out, and well-known types as they are", () => {
    const event = create(EngineStateChangedSchema, {});
    const json = fillUnpopulated(
      EngineStateChangedSchema,
      toJson(EngineStateChangedSchema, event, write) as JsonObject,
    );
    expect(Object.keys(json)).not.toContain("daiEngine");
    const engine = create(DAIEngineSchema, { maxIdleDuration: { seconds: 60n } });
    const withDuration = fillUnpopulated(DAIEngineSchema, toJson(DAIEngineSchema, engine, write) as JsonObject);
    expect(withDuration.maxIdleDuration).toBe("60s");
  });
});
