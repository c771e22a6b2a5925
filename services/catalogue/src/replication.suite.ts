// The catalogue replication stream: every change publishes the full state (or a tombstone) on the
// resource's subject, a live consumer sees it within a second, and a consumer that starts late
// rebuilds the whole catalogue from the stream.
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogueSubject, type EventMessage } from "@aiem/kit/events";
import { createTestEventBus, waitFor } from "@aiem/kit/events/testing";
import { createTestDatabase, type RestJson } from "@aiem/kit/testing";
import { EventSchema } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import { ALL_KINDS, descriptorOf } from "./kinds.js";
import {
  createCatalogueReadModel,
  isProfileAssignedTo,
  type CatalogueChange,
  type CatalogueReadModel,
} from "@aiem/kit/catalogue-view";
import { createCatalogueHarness, expectInvalid, kindApi, minimalBody, type CatalogueHarness } from "./testing.js";

let h: CatalogueHarness;
let early: CatalogueReadModel;
const messages: EventMessage[] = [];

beforeAll(async () => {
  h = await createCatalogueHarness("replication", { seedDemo: true });
  early = createCatalogueReadModel({ bus: h.bus });
  h.bus.replay({ subjects: "enginemanager.catalogue.>" }, async (m) => void messages.push(m));
  await early.ready;
});
afterAll(async () => {
  await early?.stop();
  await h?.close();
});

const ws = "team-a";
const dai = descriptorOf("daiEngineProfiles");
const daiVersions = descriptorOf("daiEngineVersions");

const lastOn = (subject: string) => [...messages].reverse().find((m) => m.subject === subject);

describe("events", () => {
  it("publishes the full state on create and update, and a tombstone on delete", async () => {
    const api = kindApi(h.as("admin"), dai);
    const subject = catalogueSubject("daiEngineProfiles", ws, "evt");
    const created = await api.create(ws, "evt", { displayName: "Events", enabled: true });
    await waitFor(() => lastOn(subject) !== undefined, 2000, "the create event");
    let msg = lastOn(subject)!;
    let event = fromBinary(EventSchema, msg.data);
    expect(event.id).toBe(msg.id);
    expect(event.source).toBe("catalogue");
    expect(event.payload.case).toBe("catalogueResourceChanged");
    const changed = event.payload.value as { resource: { case: string; value: unknown } };
    expect(changed.resource.case).toBe("daiEngineProfile");
    expect(changed.resource.value).toEqual(created);
    expect(msg.tombstone).toBe(false);

    const updated = await api.update({ name: created.name, priority: 4 }, ["priority"]);
    await waitFor(() => lastOn(subject)?.id !== msg.id, 2000, "the update event");
    msg = lastOn(subject)!;
    event = fromBinary(EventSchema, msg.data);
    expect((event.payload.value as { resource: { value: unknown } }).resource.value).toEqual(updated);

    await api.delete(created.name);
    await waitFor(() => lastOn(subject)?.tombstone === true, 2000, "the tombstone");
    event = fromBinary(EventSchema, lastOn(subject)!.data);
    expect(event.payload).toMatchObject({ case: "catalogueResourceDeleted", value: { name: created.name } });
  });

  it("publishes nothing for a refused change", async () => {
    const before = messages.length;
    await expectInvalid(
      kindApi(h.as("admin"), dai).create(ws, "refused", { displayName: "x".repeat(64) }),
      "dai_engine_profile.display_name",
    );
    await h.module.flushEvents();
    await new Promise((r) => setTimeout(r, 100));
    expect(messages.slice(before).some((m) => m.subject === catalogueSubject("daiEngineProfiles", ws, "refused"))).toBe(
      false,
    );
  });

  it("republishes a version that loses an alias, on the version's own subject (ids percent-encoded)", async () => {
    const api = kindApi(h.as("admin"), daiVersions);
    await api.create(ws, "1.0.0", { image: "x:1" });
    await api.create(ws, "2.0.0", { image: "x:2" });
    await api.assignAliases(`workspaces/${ws}/daiEngineVersions/1.0.0`, ["stable"]);
    await api.assignAliases(`workspaces/${ws}/daiEngineVersions/2.0.0`, ["stable"]);
    const s1 = catalogueSubject("daiEngineVersions", ws, "1.0.0");
    expect(s1).toBe(`enginemanager.catalogue.daiEngineVersions.${ws}.1%2E0%2E0`);
    await waitFor(
      () => {
        const v1 = lastOn(s1);
        return (
          v1 !== undefined &&
          (fromBinary(EventSchema, v1.data).payload.value as RestJson).resource.value.aliases.length === 0
        );
      },
      2000,
      "version 1.0.0 without its alias",
    );
    await waitFor(
      () =>
        early.get("daiEngineVersions", `workspaces/${ws}/daiEngineVersions/stable`)?.name ===
        `workspaces/${ws}/daiEngineVersions/2.0.0`,
      2000,
      "the alias to move",
    );
  });
});

describe("read model", () => {
  it("receives a profile update within one second", async () => {
    const api = kindApi(h.as("admin"), dai);
    const created = await api.create(ws, "live", { displayName: "Before", enabled: true });
    await waitFor(() => early.get("daiEngineProfiles", created.name) !== undefined, 2000, "the created profile");
    const seen = new Promise<number>((resolve) => {
      const off = early.subscribe((c: CatalogueChange) => {
        if (c.name === created.name && (c.resource as { displayName?: string } | undefined)?.displayName === "After") {
          off();
          resolve(Date.now());
        }
      });
    });
    const start = Date.now();
    await api.update({ name: created.name, displayName: "After" }, ["display_name"]);
    const arrived = await seen;
    expect(arrived - start).toBeLessThan(1000);
    expect(early.get("daiEngineProfiles", created.name)?.displayName).toBe("After");
  });

  it("resolves aliases, lists by workspace and forgets deleted resources", async () => {
    await waitFor(
      () => early.get("daiEngineVersions", "workspaces/global/daiEngineVersions/latest") !== undefined,
      2000,
      "the demo version",
    );
    expect(early.get("daiEngineVersions", "workspaces/global/daiEngineVersions/latest")?.name).toBe(
      "workspaces/global/daiEngineVersions/1.11.0",
    );
    expect(early.resolveName("h2oEngineVersions", "workspaces/global/h2oEngineVersions/latest")).toBe(
      "workspaces/global/h2oEngineVersions/3.46.0",
    );
    expect(early.get("daiEngineVersions", "workspaces/team-a/daiEngineVersions/latest")).toBeUndefined();
    expect(early.list("notebookEngineImages", "global").map((r) => r.name)).toEqual([
      "workspaces/global/notebookEngineImages/default",
    ]);
    const api = kindApi(h.as("admin"), dai);
    await api.create(ws, "short-lived", {});
    await waitFor(
      () => early.get("daiEngineProfiles", `workspaces/${ws}/daiEngineProfiles/short-lived`) !== undefined,
      2000,
      "create",
    );
    await api.delete(`workspaces/${ws}/daiEngineProfiles/short-lived`);
    await waitFor(
      () => early.get("daiEngineProfiles", `workspaces/${ws}/daiEngineProfiles/short-lived`) === undefined,
      2000,
      "delete",
    );
  });

  it("lets a consumer that starts late rebuild the whole catalogue from the stream", async () => {
    // Churn: creations, updates, deletions and alias moves of every kind.
    for (const d of ALL_KINDS) {
      const api = kindApi(h.as("admin"), d);
      const id = (i: number) => (d.family === "version" ? `7.${i}.0` : `late-${i}`);
      for (let i = 0; i < 3; i++) await api.create("late", id(i), minimalBody(d));
      await api.update({ name: `workspaces/late/${d.kind}/${id(1)}`, ...minimalBody(d) }, [d.updatable[0]!]);
      await api.delete(`workspaces/late/${d.kind}/${id(2)}`);
      if (d.family === "version") {
        await api.assignAliases(`workspaces/late/${d.kind}/${id(0)}`, ["latest", "lts"]);
        await api.assignAliases(`workspaces/late/${d.kind}/${id(1)}`, ["latest"]);
      }
    }
    await h.module.flushEvents();

    const late = createCatalogueReadModel({ bus: h.bus });
    try {
      await late.ready;
      for (const d of ALL_KINDS) {
        for (const workspace of ["global", "team-a", "late"]) {
          const { items } = await kindApi(h.as("admin"), d).list(workspace, { pageSize: 1000, orderBy: "name" });
          expect(late.list(d.kind, workspace), `${d.kind} in ${workspace}`).toEqual(items);
        }
        expect(
          late.get(d.kind, `workspaces/late/${d.kind}/${d.family === "version" ? "7.2.0" : "late-2"}`),
        ).toBeUndefined();
      }
      expect(late.resolveName("daiEngineVersions", "workspaces/late/daiEngineVersions/latest")).toBe(
        "workspaces/late/daiEngineVersions/7.1.0",
      );
      expect(late.resolveName("daiEngineVersions", "workspaces/late/daiEngineVersions/lts")).toBe(
        "workspaces/late/daiEngineVersions/7.0.0",
      );
      expect(late.isReady()).toBe(true);
    } finally {
      await late.stop();
    }
  });

  it("can keep only some kinds", async () => {
    const profilesOnly = createCatalogueReadModel({ bus: h.bus, kinds: ["daiEngineProfiles"] });
    try {
      await profilesOnly.ready;
      expect(profilesOnly.list("daiEngineProfiles", "global")).toHaveLength(1);
      expect(profilesOnly.list("daiEngineVersions")).toEqual([]);
      expect(profilesOnly.get("daiEngineVersions", "workspaces/global/daiEngineVersions/latest")).toBeUndefined();
    } finally {
      await profilesOnly.stop();
    }
  });
});

describe("isProfileAssignedTo", () => {
  it("applies the role rule", () => {
    const p = (enabled: boolean, verify: boolean, roles: string[]) => ({
      enabled,
      assignedOidcRolesEnabled: verify,
      assignedOidcRoles: roles,
    });
    expect(isProfileAssignedTo(p(true, false, []), [])).toBe(true);
    expect(isProfileAssignedTo(p(false, false, []), ["x"])).toBe(false);
    expect(isProfileAssignedTo(p(true, true, []), ["x"])).toBe(false);
    expect(isProfileAssignedTo(p(true, true, ["x", "y"]), ["y"])).toBe(true);
    expect(isProfileAssignedTo(p(true, true, ["x"]), ["z"])).toBe(false);
  });
});

describe("a restart on the in-process bus", () => {
  it("republishes the whole catalogue, so read models on the new bus see it", async () => {
    // One database for both lives of the module; each harness leaves it open.
    const database = await createTestDatabase("cat_republish");
    const first = await createCatalogueHarness("republish1", {
      seedDemo: true,
      database,
      bus: await createTestEventBus("republish1", { kind: "memory" }),
    });
    const created = (
      await first.as("admin").daiProfiles.createDAIEngineProfile({
        parent: "workspaces/team-r",
        daiEngineProfileId: "kept",
        daiEngineProfile: { displayName: "Kept", enabled: true },
      })
    ).daiEngineProfile!;
    await first.module.stop();
    await first.bus.destroy();

    const bus = await createTestEventBus("republish2", { kind: "memory" });
    const second = await createCatalogueHarness("republish2", { database, bus, dataDir: first.dataDir });
    const model = createCatalogueReadModel({ bus });
    try {
      await model.ready;
      await waitFor(
        () => model.get("daiEngineProfiles", created.name) !== undefined,
        2000,
        "the profile on the new bus",
      );
      expect(model.get("daiEngineVersions", "workspaces/global/daiEngineVersions/latest")?.name).toBe(
        "workspaces/global/daiEngineVersions/1.11.0",
      );
    } finally {
      await model.stop();
      await second.close();
      await first.close();
      await database.destroy();
    }
  });
});
