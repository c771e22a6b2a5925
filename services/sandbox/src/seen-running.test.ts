// The state calls into a sandbox go by: RUNNING only once a read has shown it, or after a grace.
import { describe, expect, it } from "vitest";
import { SEEN_RUNNING_GRACE_MS, type SandboxRow, stateForCalls } from "./store.js";

const created = new Date("2026-01-01T00:00:00Z");
const row = (state: string, seen: boolean) => ({ state, seen_running: seen, create_time: created }) as SandboxRow;
const after = (ms: number) => new Date(created.getTime() + ms);

describe("stateForCalls", () => {
  it("says STARTING for a RUNNING sandbox no read has shown yet, within the grace", () => {
    expect(stateForCalls(row("STATE_RUNNING", false), after(0))).toBe("STATE_STARTING");
    expect(stateForCalls(row("STATE_RUNNING", false), after(SEEN_RUNNING_GRACE_MS - 1))).toBe("STATE_STARTING");
  });

  it("says RUNNING once a read showed it, or once the grace passed", () => {
    expect(stateForCalls(row("STATE_RUNNING", true), after(0))).toBe("STATE_RUNNING");
    expect(stateForCalls(row("STATE_RUNNING", false), after(SEEN_RUNNING_GRACE_MS))).toBe("STATE_RUNNING");
  });

  it("leaves every other state as it is", () => {
    for (const state of ["STATE_STARTING", "STATE_TERMINATING", "STATE_TERMINATED", "STATE_FAILED", "STATE_DELETING"]) {
      expect(stateForCalls(row(state, false), after(0))).toBe(state);
    }
  });
});
