import { create, toJson, type DescMessage, type JsonObject, type MessageShape } from "@bufbuild/protobuf";
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

/** A message as protojson writes it with every implicit field, then filled in. */
function filled<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): JsonObject {
  return fillUnpopulated(schema, toJson(schema, message, { alwaysEmitImplicit: true }) as JsonObject);
}

describe("fillUnpopulated", () => {
  it("names unset well-known types with null, keeps what is set", () => {
    const engine = create(DAIEngineSchema, { name: "workspaces/w/daiEngines/e", cpu: 2 });
    const json = filled(DAIEngineSchema, engine);
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
    const json = filled(DAIEngineSchema, engine);
    for (const key of ["cpu", "gpu", "memoryBytes", "profileInfo", "daiEngineVersionInfo"])
      expect(Object.keys(json)).not.toContain(key);
    expect(json.deleteTime).toBeNull();
    const process = create(ProcessSchema, { name: "workspaces/w/sandboxEngines/s/processes/p", command: "sleep" });
    expect(Object.keys(filled(ProcessSchema, process))).not.toContain("exitCode");
    // No license: the answer has no metadata key at all, which the client reads as None.
    const license = create(GetDAILicenseMetadataResponseSchema, {});
    expect(filled(GetDAILicenseMetadataResponseSchema, license)).toEqual({});
    // A deletion that deleted nothing (allow_missing) answers without an engine.
    const deleted = create(DeleteDAIEngineResponseSchema, {});
    expect(filled(DeleteDAIEngineResponseSchema, deleted)).toEqual({});
  });

  it("fills nested messages, through lists", () => {
    const profile = create(DAIEngineProfileSchema, { cpuConstraint: { min: 1n, default: 2n } });
    const list = create(ListDAIEnginesResponseSchema, {
      daiEngines: [create(DAIEngineSchema, { profileInfo: profile })],
    });
    const json = filled(ListDAIEnginesResponseSchema, list);
    const engines = json.daiEngines as JsonObject[];
    const cpu = (engines[0]!.profileInfo as JsonObject).cpuConstraint;
    expect(cpu).toEqual({ min: "1", default: "2" });
    const idle = create(DAIEngineProfileSchema, {
      maxIdleDurationConstraint: { min: { seconds: 0n }, default: { seconds: 60n } },
    });
    const duration = filled(DAIEngineProfileSchema, idle).maxIdleDurationConstraint;
    expect(duration).toEqual({ min: "0s", max: null, default: "60s" });
    expect(json.nextPageToken).toBe("");
  });

  it("leaves the members of a real oneof out, and well-known types as they are", () => {
    const event = create(EngineStateChangedSchema, {});
    const json = filled(EngineStateChangedSchema, event);
    expect(Object.keys(json)).not.toContain("daiEngine");
    const engine = create(DAIEngineSchema, { maxIdleDuration: { seconds: 60n } });
    const withDuration = filled(DAIEngineSchema, engine);
    expect(withDuration.maxIdleDuration).toBe("60s");
  });
});
