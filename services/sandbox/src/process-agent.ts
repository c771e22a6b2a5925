// Starting a process on the sandbox's agent, and asking the agent, in the same breath, for its end.
import { randomUUID } from "node:crypto";
import { Code, ConnectError } from "@aiem/kit/errors";
import type { ProcessExit } from "@aiem/proto/enginemanager/agent/v1/agent_service_pb.js";
import type { Process } from "@aiem/proto/enginemanager/sandbox/v1/process_pb.js";
import { type SandboxCall, viaAgent } from "./access.js";
import type { ProcessDeps } from "./process-access.js";
import { processEnvironment } from "./process-definition.js";
import type { SandboxHandle } from "./runtime/index.js";

/** What the agent was asked about a process it started (see askAgent). */
export interface AgentAnswers {
  readonly exit: Promise<{ exit?: ProcessExit | undefined }>;
  readonly complete: Promise<boolean>;
  readonly oomKillsBefore: number | undefined;
}

/** A process started on the agent: the agent's id for it, when it started, and the questions asked. */
export interface StartedOnAgent {
  readonly agentId: string;
  readonly startTime: Date;
  readonly asked: AgentAnswers;
}

/**
 * Runs a process's definition on the agent; the secret values go there and nowhere else. The
 * agent is asked for the process's end in the same breath (see askAgent).
 */
export async function startOnAgent(
  deps: ProcessDeps,
  call: SandboxCall,
  handle: SandboxHandle,
  definition: Process,
): Promise<StartedOnAgent> {
  const environment = await processEnvironment(deps.secrets, call.principal, call.row, definition);
  const agentId = randomUUID();
  const startTime = deps.context.now();
  const started = viaAgent(deps, call, () =>
    handle.client.startProcess({
      processId: agentId,
      command: definition.command,
      args: definition.args,
      workingDirectory: definition.workingDirectory,
      environment,
    }),
  );
  const asked = askAgent(handle, agentId, started);
  await started;
  return { agentId, startTime, asked };
}

/**
 * Asks the agent for a process's exit and, beside it, for the moment its output is complete
 * too, so no call is left to make after the exit (an agent from before `wait_for_output`
 * answers at the exit, and the output stream's end marker is awaited instead). With `started`,
 * asked together with the start, which the agent answers first: its round trips then overlap
 * the start's and the recording of it. An agent that does not wait for a process being started
 * (from before that) answers NOT_FOUND; then the question is asked again once it started.
 */
export function askAgent(handle: SandboxHandle, agentId: string, started?: Promise<unknown>): AgentAnswers {
  const ask = (waitForOutput: boolean) =>
    handle.client.waitProcess({ processId: agentId, waitForOutput }).catch(async (err: unknown) => {
      if (!started || ConnectError.from(err).code !== Code.NotFound) throw err;
      await started;
      return handle.client.waitProcess({ processId: agentId, waitForOutput });
    });
  const exit = ask(false);
  // Never awaited when the start failed or is not recorded (the process is killed then).
  exit.catch(() => undefined);
  return {
    exit,
    complete: ask(true).then(
      (res) => res.outputComplete,
      () => false,
    ),
    // The sandbox's OOM kills so far: one more by the time this process dies of SIGKILL means
    // the kernel chose it when the sandbox reached its memory limit.
    oomKillsBefore: handle.cgroupUsage().oomKills,
  };
}
