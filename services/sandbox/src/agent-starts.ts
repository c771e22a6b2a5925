// Starts of sandboxes' agents, and which sandbox owns each agent that runs: a start a create
// began before its row was written (taken over by the pass that records the sandbox running),
// and how far a starting sandbox has got.
import { fromBinary } from "@bufbuild/protobuf";
import { type SandboxEngine, SandboxEngineSchema } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { SandboxRuntimeError, type LocalSandboxRuntime, type SandboxLimits } from "./runtime/index.js";
import type { SandboxRow, StartPhase } from "./store.js";
import { limitsOf } from "./warm-pool.js";

export type Started =
  | { ok: true; adopted: boolean }
  | { ok: false; reason: string; agentGone: boolean; unverifiable?: boolean; interrupted?: boolean };

export interface AgentStarts {
  /** Starts (or adopts) a sandbox's agent, taking over a start its create began. */
  start(row: SandboxRow): Promise<Started>;
  startEarly(uid: string, runtimeId: string, limits: SandboxLimits): Promise<void>;
  discardEarly(uid: string, runtimeId: string): void;
  /** The sandbox no longer wants its agent: a start its create began is dropped, and the agent disowned. */
  release(runtimeId: string): void;
  /** Records that the agent `runtimeId` serves sandbox `uid`. */
  own(runtimeId: string, uid: string): void;
  /** The sandbox whose agent `runtimeId` was, forgetting it; undefined for none (a warm one). */
  disown(runtimeId: string): string | undefined;
  /** The start's launch is over (recorded running or failed). */
  settled(uid: string): void;
  phase(uid: string): StartPhase;
  /** A kick (terminate, delete) interrupts a start that waits for its sandbox to run. */
  interrupt(uid: string): void;
  /** Interrupts every start under way. */
  interruptAll(): void;
}

export interface AgentStartsOptions {
  /**
   * Whether a create starts its sandbox before writing its row. Off for a runtime that makes a
   * sandbox from its stored resource (Kubernetes).
   */
  readonly early?: boolean;
}

export function createAgentStarts(
  runtime: LocalSandboxRuntime,
  stopped: () => boolean,
  options: AgentStartsOptions = {},
): AgentStarts {
  /** runtime id -> sandbox uid, for agents that end on their own. */
  const owners = new Map<string, string>();
  /** Starting sandboxes whose environment was launched; the agent has not answered yet. */
  const launched = new Set<string>();
  /** Starts begun by a create before its row was written, by runtime id, until a pass takes them. */
  const early = new Map<string, Promise<Started>>();
  /** Starts under way, by sandbox uid. */
  const starting = new Map<string, AbortController>();

  function startRuntime(
    uid: string,
    runtimeId: string,
    limits: SandboxLimits,
    engine?: SandboxEngine,
  ): Promise<Started> {
    const controller = new AbortController();
    starting.set(uid, controller);
    const settle = () => {
      if (starting.get(uid) === controller) starting.delete(uid);
    };
    const signal = controller.signal;
    return runtime.start(runtimeId, { limits, engine, signal, onLaunched: () => launched.add(uid) }).then(
      (handle): Started => {
        settle();
        return { ok: true, adopted: handle.adopted };
      },
      (err: unknown): Started => {
        settle();
        // Interrupted by a kick, or by the runtime (a pod deleted while it started): the pass
        // records nothing and runs again to see what is wanted now.
        if (signal.aborted || (err instanceof SandboxRuntimeError && err.code === "stopping"))
          return { ok: false, reason: "interrupted", agentGone: false, interrupted: true };
        // Either way its processes are gone and a new start runs it afresh: its agent ended, or
        // it was started by an earlier version whose agent cannot be checked (so it was ended).
        const agentGone =
          err instanceof SandboxRuntimeError && (err.code === "agent-gone" || err.code === "agent-unverifiable");
        const unverifiable = err instanceof SandboxRuntimeError && err.code === "agent-unverifiable";
        return { ok: false, reason: err instanceof Error ? err.message : String(err), agentGone, unverifiable };
      },
    );
  }

  return {
    async start(row) {
      const begun = early.get(row.runtime_id);
      early.delete(row.runtime_id);
      // The limits come from the template as it was when the sandbox was created.
      const engine = fromBinary(SandboxEngineSchema, row.resource);
      const started =
        (await begun) ??
        (await startRuntime(row.uid, row.runtime_id, limitsOf(engine.sandboxEngineTemplateInfo ?? {}), engine));
      if (started.ok) owners.set(row.runtime_id, row.uid);
      return started;
    },
    async startEarly(uid, runtimeId, limits) {
      if (stopped() || early.has(runtimeId) || options.early === false) return;
      early.set(runtimeId, startRuntime(uid, runtimeId, limits));
      // The start runs synchronously from here to the launcher (a few awaits of settled work, then
      // the files, cgroup and arguments): one turn of the event loop lets it get there before the
      // caller writes the row, which then overlaps the agent's start in other processes.
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
    discardEarly(uid, runtimeId) {
      const begun = early.get(runtimeId);
      if (!begun) return;
      early.delete(runtimeId);
      launched.delete(uid);
      void runtime.destroy(runtimeId).catch(() => undefined);
    },
    release(runtimeId) {
      early.delete(runtimeId);
      owners.delete(runtimeId);
    },
    own(runtimeId, uid) {
      owners.set(runtimeId, uid);
    },
    disown(runtimeId) {
      const uid = owners.get(runtimeId);
      owners.delete(runtimeId);
      return uid;
    },
    settled(uid) {
      launched.delete(uid);
    },
    phase: (uid) => runtime.pending?.(uid) ?? (launched.has(uid) ? "launched" : "creating"),
    interrupt(uid) {
      starting.get(uid)?.abort();
    },
    interruptAll() {
      for (const controller of starting.values()) controller.abort();
    },
  };
}
