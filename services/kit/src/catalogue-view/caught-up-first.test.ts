import { create, toBinary } from "@bufbuild/protobuf";
import { EventSchema } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import { CatalogueResourceChangedSchema } from "@aiem/proto/enginemanager/events/v1/catalogue_events_pb.js";
import { DAIEngineProfileSchema } from "@aiem/proto/enginemanager/v1/dai_engine_profile_pb.js";
import { afterEach, describe, expect, it } from "vitest";
import { catalogueSubject, createMemoryEventBus, type EventBus, type EventHandler } from "../events/index.js";
import { caughtUpFirst } from "./caught-up-first.js";
import { createCatalogueReadModel, type CatalogueReadModel } from "./read-model.js";

const NAME = "workspaces/global/daiEngineProfiles/fresh";

/** A bus whose replays apply a message only when the test lets them: a copy that lags. */
function laggingBus(bus: EventBus) {
  const held: Array<() => void> = [];
  const lagging: Pick<EventBus, "replay" | "lastSequence"> = {
    lastSequence: (stream) => bus.lastSequence(stream),
    replay(options, handler: EventHandler) {
      return bus.replay(options, (msg) => new Promise<void>((resolve) => held.push(resolve)).then(() => handler(msg)));
    },
  };
  const release = () => {
    for (const next of held.splice(0)) next();
  };
  return { lagging, release, held: () => held.length };
}

async function publishProfile(bus: EventBus, id: string): Promise<void> {
  const profile = create(DAIEngineProfileSchema, { name: NAME, enabled: true });
  const event = create(EventSchema, {
    id,
    payload: {
      case: "catalogueResourceChanged",
      value: create(CatalogueResourceChangedSchema, { resource: { case: "daiEngineProfile", value: profile } }),
    },
  });
  await bus.publish(catalogueSubject("daiEngineProfiles", "global", "fresh"), toBinary(EventSchema, event), { id });
}

const lookup = (view: CatalogueReadModel) => () => {
  const found = view.get("daiEngineProfiles", NAME);
  if (!found) throw new Error(`${NAME} does not exist`);
  return found;
};

describe("caughtUpFirst over a catalogue copy", () => {
  let bus: EventBus;
  let view: CatalogueReadModel;
  afterEach(async () => {
    await view?.stop();
    await bus?.close();
  });

  it("finds a resource published before the call although the copy had not applied it yet", async () => {
    bus = createMemoryEventBus();
    const { lagging, release, held } = laggingBus(bus);
    view = createCatalogueReadModel({ bus: lagging });
    await view.ready;
    await publishProfile(bus, "e1");
    await expect.poll(held).toBe(1);
    expect(view.get("daiEngineProfiles", NAME)).toBeUndefined();
    const answer = caughtUpFirst(view, lookup(view));
    // Applied only now, while the lookup waits for the copy.
    release();
    expect((await answer).name).toBe(NAME);
  });

  it("answers that a resource is missing once the copy holds everything the stream does", async () => {
    bus = createMemoryEventBus();
    view = createCatalogueReadModel({ bus });
    await view.ready;
    await publishProfile(bus, "e1");
    const started = Date.now();
    await expect(
      caughtUpFirst(view, () => {
        throw new Error("workspaces/global/daiEngineProfiles/never does not exist");
      }),
    ).rejects.toThrow(/never does not exist/);
    // No waiting out the bound: the copy was caught up (or caught up at once).
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await view.caughtUp(Date.now() + 1_000)).toBe(true);
  });

  it("gives up at the deadline when the copy cannot catch up, and answers what it has", async () => {
    bus = createMemoryEventBus();
    const { lagging, release } = laggingBus(bus);
    view = createCatalogueReadModel({ bus: lagging });
    await view.ready;
    await publishProfile(bus, "e1");
    expect(await view.caughtUp(Date.now() + 50)).toBe(false);
    await expect(caughtUpFirst(view, lookup(view), 50)).rejects.toThrow(/fresh does not exist/);
    release();
  });
});
