import { CatalogueResourceChangedSchema } from "@aiem/proto/enginemanager/events/v1/catalogue_events_pb.js";
import { describe, expect, it } from "vitest";
import { CatalogueKind } from "../authz/index.js";
import { KIND_BY_EVENT_CASE, kindOfName, type CatalogueEventCase } from "./resources.js";

describe("the catalogue's event cases", () => {
  it("map every member of CatalogueResourceChanged.resource to the kind its message is", () => {
    const members = CatalogueResourceChangedSchema.oneofs.find((o) => o.name === "resource")!.fields;
    expect(members.map((f) => f.localName).sort()).toEqual(Object.keys(KIND_BY_EVENT_CASE).sort());
    for (const field of members) {
      const kind = KIND_BY_EVENT_CASE[field.localName as CatalogueEventCase];
      // `enginemanager.v1.DAIEngineProfile` is the resource of `daiEngineProfiles`
      expect(`${field.message!.name}s`.toLowerCase()).toBe(kind.toLowerCase());
    }
    expect(new Set(Object.values(KIND_BY_EVENT_CASE))).toEqual(new Set(Object.values(CatalogueKind)));
  });
});

describe("kindOfName", () => {
  it("reads the collection of a catalogue resource name", () => {
    expect(kindOfName("workspaces/global/daiEngineVersions/1.2.3")).toBe("daiEngineVersions");
    expect(kindOfName("workspaces/w/sandboxEngineTemplates/t")).toBe("sandboxEngineTemplates");
  });

  it("refuses names of other resources and malformed ones", () => {
    expect(kindOfName("workspaces/w/daiEngines/e")).toBeUndefined();
    expect(kindOfName("workspaces/w/daiEngineVersions")).toBeUndefined();
    expect(kindOfName("workspaces/w/daiEngineVersions/a/b")).toBeUndefined();
    expect(kindOfName("workspaces/w/constructor/x")).toBeUndefined();
  });
});
