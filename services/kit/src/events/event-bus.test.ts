import { describe, expect, it } from "vitest";
import { createEventBus } from "./create-event-bus.js";
import {
  DEFAULT_EVENT_DOMAINS,
  InvalidEventError,
  backoffDelay,
  catalogueSubject,
  decodeSubjectToken,
  engineStateSubject,
  streamKindOf,
  streamNames,
  subjectMatches,
  subjectToken,
} from "./event-bus.js";

describe("subjects", () => {
  it("encodes ids into single tokens and back", () => {
    for (const v of ["1.11.0", "a*b", "x>y", "50%", "%2E", "with space", "ideographic\u3000space", "plain-id"]) {
      const t = subjectToken(v);
      expect(t).not.toMatch(/[.*>\s]/);
      expect(decodeSubjectToken(t)).toBe(v);
    }
    expect(engineStateSubject("team-a", "e1")).toBe("enginemanager.engines.team-a.e1.state");
    expect(catalogueSubject("daiEngineVersions", "global", "1.11.0")).toBe(
      "enginemanager.catalogue.daiEngineVersions.global.1%2E11%2E0",
    );
  });

  it("matches NATS wildcards", () => {
    expect(subjectMatches("a.*.c", "a.b.c")).toBe(true);
    expect(subjectMatches("a.*.c", "a.b.d")).toBe(false);
    expect(subjectMatches("a.>", "a.b.c")).toBe(true);
    expect(subjectMatches("a.>", "a")).toBe(false);
    expect(subjectMatches("a.b", "a.b.c")).toBe(false);
    expect(subjectMatches("a.b.c", "a.b")).toBe(false);
  });

  it("routes subjects to the events or the catalogue stream", () => {
    expect(streamKindOf("enginemanager.engines.ws.e.state", DEFAULT_EVENT_DOMAINS)).toBe("events");
    expect(streamKindOf("enginemanager.catalogue.>", DEFAULT_EVENT_DOMAINS)).toBe("catalogue");
    expect(() => streamKindOf("enginemanager.>", DEFAULT_EVENT_DOMAINS)).toThrow(InvalidEventError);
    expect(() => streamKindOf("enginemanager.*.x", DEFAULT_EVENT_DOMAINS)).toThrow(/not captured/);
  });

  it("names streams with the prefix", () => {
    expect(streamNames()).toEqual({ events: "ENGINEMANAGER_EVENTS", catalogue: "ENGINEMANAGER_CATALOGUE" });
    expect(streamNames("t_x")).toEqual({
      events: "T_X_ENGINEMANAGER_EVENTS",
      catalogue: "T_X_ENGINEMANAGER_CATALOGUE",
    });
    expect(() => streamNames("bad.prefix")).toThrow();
  });

  it("repeats the last backoff step", () => {
    expect([1, 2, 3, 9].map((n) => backoffDelay([10, 20, 30], n))).toEqual([10, 20, 30, 30]);
  });

  it("createEventBus is in-process without a NATS URL", async () => {
    const bus = await createEventBus({ prefix: "unit" });
    expect(bus.kind).toBe("memory");
    await bus.close();
    await expect(bus.publish(engineStateSubject("w", "e"), new Uint8Array(), { id: "x" })).rejects.toThrow(/closed/);
  });
});
