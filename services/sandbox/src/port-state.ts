// A port's state, derived from its sandbox's: READY whenever the sandbox runs, since the proxy
// then routes to it, whether or not a program listens yet (a client waits for READY before
// starting the program that will listen).
import { Port_State } from "@aiem/proto/enginemanager/sandbox/v1/port_pb.js";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { sandboxStateName, type SandboxRow } from "./store.js";

/**
 * A port's state as its sandbox is now: routed while the sandbox runs. The answer to its creation
 * is PENDING, as a port whose route is still being made; every read after says what is.
 */
export function portState(
  sandbox: Pick<SandboxRow, "name" | "state">,
  justCreated = false,
): { state: Port_State; failureReason: string } {
  const S = SandboxEngine_State;
  switch (sandbox.state) {
    case sandboxStateName(S.RUNNING):
      return { state: justCreated ? Port_State.PENDING : Port_State.READY, failureReason: "" };
    case sandboxStateName(S.STARTING):
      return { state: Port_State.PENDING, failureReason: "" };
    case sandboxStateName(S.DELETING):
      return { state: Port_State.DELETING, failureReason: "" };
    default:
      return {
        state: Port_State.FAILED,
        failureReason: `${sandbox.name} is ${sandbox.state}; its ports are served only while it runs`,
      };
  }
}
