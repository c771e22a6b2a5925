import { describe, expect, it } from "vitest";
import { Port_State } from "@aiem/proto/enginemanager/sandbox/v1/port_pb.js";
import { portState } from "./port-state.js";

describe("port state", () => {
  const sandbox = (state: string) => ({ name: "workspaces/w/sandboxEngines/s", state });

  it("is READY while the sandbox runs, PENDING in the answer to its creation and while the sandbox starts", () => {
    expect(portState(sandbox("STATE_RUNNING"))).toEqual({ state: Port_State.READY, failureReason: "" });
    expect(portState(sandbox("STATE_RUNNING"), true)).toEqual({ state: Port_State.PENDING, failureReason: "" });
    expect(portState(sandbox("STATE_STARTING"))).toEqual({ state: Port_State.PENDING, failureReason: "" });
  });

  it("is DELETING with its sandbox, and FAILED with a reason when the sandbox no longer runs", () => {
    expect(portState(sandbox("STATE_DELETING"), false).state).toBe(Port_State.DELETING);
    for (const state of ["STATE_TERMINATING", "STATE_TERMINATED", "STATE_FAILED"]) {
      const r = portState(sandbox(state), false);
      expect(r.state).toBe(Port_State.FAILED);
      expect(r.failureReason).toBe(
        `workspaces/w/sandboxEngines/s is ${state}; its ports are served only while it runs`,
      );
    }
  });
});
