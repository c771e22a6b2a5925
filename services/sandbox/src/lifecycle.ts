// Drives every sandbox engine from the state the API recorded towards the one it asked for:
// starts agents through the runtime, stops and deletes them, terminates idle sandboxes and those
// that reached their running limit (counted from when they first ran), and notices
// agents that died. After a restart of the service it adopts the agents of the sandboxes that
// were running (confined agents outlive the service, with their processes and output), marks
// FAILED those whose agent ended meanwhile, and starts again, on their files, the unconfined
// ones (their agents die with the service; their running processes end). Work on one sandbox is
// serialised; a sweep every `intervalMs` catches what a kick may have missed.
//
// The parts: reconcile-pass.ts (one pass over one sandbox), reconcile-queue.ts (passes over one
// sandbox one at a time), sweep.ts (the periodic look at every sandbox), agent-starts.ts (agents
// being started and whose they are), warm-pool.ts, sandbox-activity.ts (what keeps a sandbox from
// being idle) and change-hub.ts (telling waiting calls of changes).
//
// Replicas: a sandbox is pinned to the replica whose host runs its agent (`placement`). Each
// replica reconciles only its own sandboxes (and takes unpinned ones); calls about a sandbox
// pinned elsewhere are carried out by its owner (ServedElsewhere), or answered UNAVAILABLE while
// the owner is down. An owner that comes back (same host and data directory) starts its running
// sandboxes again, as after any restart. Where every replica reaches every agent (Kubernetes: one
// placement), a replica's first call about a RUNNING sandbox it holds no agent of adopts it then.
import { unavailable } from "@aiem/kit/errors";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { Logger } from "@aiem/kit/logger";
import { ServedElsewhere, type ReplicaRegistry } from "@aiem/kit/server";
import { createAgentStarts } from "./agent-starts.js";
import { removeUnusedAgents } from "./old-agents.js";
import type { ChangeHub } from "./change-hub.js";
import { createAgentEnded, createReconcilePass } from "./reconcile-pass.js";
import { createReconcileQueue } from "./reconcile-queue.js";
import { SHARED_AGENT_DIR } from "./runtime/bwrap.js";
import type { LocalSandboxRuntime, SandboxHandle, SandboxLimits } from "./runtime/index.js";
import { createSandboxActivity } from "./sandbox-activity.js";
import type { ServiceContext } from "./service-context.js";
import { sandboxStateName, type SandboxRow, type StartPhase } from "./store.js";
import { createSweep } from "./sweep.js";
import { createWarmPool, removeUnownedSandboxes } from "./warm-pool.js";

export { type ChangeHub, createChangeHub, sandboxKey } from "./change-hub.js";
export { limitsOf } from "./warm-pool.js";

const RUNNING = sandboxStateName(SandboxEngine_State.RUNNING);

export interface LifecycleOptions {
  readonly context: ServiceContext;
  readonly runtime: LocalSandboxRuntime;
  readonly logger: Logger;
  readonly hub: ChangeHub;
  /** This replica: its id is the placement of the sandboxes it runs. */
  readonly replicas: ReplicaRegistry;
  readonly intervalMs: number;
  readonly warmPoolSize: number;
  /** Called after the live processes of a sandbox were ended (its agent stopped). */
  readonly onProcessesEnded?: (uid: string) => void;
  /** Called when the agent of a running sandbox was adopted after a restart: its processes run on. */
  readonly onAdopted?: (uid: string) => Promise<void> | void;
  /**
   * Whether stop() ends every sandbox's agent (and its processes) instead of leaving them running
   * for the next start of the service to adopt. Default false.
   */
  readonly stopSandboxesOnStop?: boolean;
  /**
   * Whether a create starts its sandbox before writing its row (startEarly). Default true; off
   * for a runtime that makes a sandbox from its stored resource (Kubernetes).
   */
  readonly earlyStart?: boolean;
  /**
   * Whether every replica reaches every sandbox's agent (Kubernetes: one placement, none pinned).
   * Then a call about a RUNNING sandbox this replica holds no agent of takes it over at once,
   * instead of answering UNAVAILABLE until a reconcile pass does. Default false.
   */
  readonly sharedPlacement?: boolean;
  /** How long a call waits for that take-over before it is answered UNAVAILABLE. Default 10 s. */
  readonly takeOverTimeoutMs?: number;
}

export interface Lifecycle {
  /** This replica's placement: sandboxes pinned to it run here. */
  readonly placement: string;
  /**
   * Throws ServedElsewhere when another live replica runs the sandbox, UNAVAILABLE when that
   * replica is down; returns when this one serves it.
   */
  requireServedHere(row: Pick<SandboxRow, "name" | "placement">): Promise<void>;
  /**
   * With a shared placement, takes over a RUNNING sandbox whose agent this replica does not hold
   * yet (the reconcile pass's adoption, which also follows its running processes again); calls
   * about it share one take-over. Resolves when this replica holds the agent, or when the take-over
   * failed or took too long (handle() then still says undefined). Does nothing otherwise.
   */
  hold(row: Pick<SandboxRow, "uid" | "runtime_id" | "state" | "desired">): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Reconciles one sandbox soon; resolves when that pass (and any it triggered) is done. */
  kick(uid: string): Promise<void>;
  /** The agent of a running sandbox. */
  handle(row: Pick<SandboxRow, "runtime_id">): SandboxHandle | undefined;
  /** Records activity on a sandbox now. */
  touch(uid: string): void;
  /** Counts as activity for as long as `work` runs (waits, output streams, port connections). */
  busy<T>(uid: string, work: () => Promise<T>): Promise<T>;
  enter(uid: string): void;
  leave(uid: string): void;
  /** How far a starting sandbox has got: its environment launched, waiting for the agent, or not yet. */
  startPhase(uid: string): StartPhase;
  /** Milliseconds the sandbox has been idle, for a RUNNING sandbox; 0 otherwise. */
  idleMs(row: Pick<SandboxRow, "uid" | "state" | "last_activity">, now?: number): number;
  /** The runtime id of a new sandbox: a warm sandbox with these limits when one is ready, else its uid. */
  claimRuntimeId(uid: string, limits: SandboxLimits): string;
  /**
   * Starts a new sandbox's agent before its row is written, so that writing it, the create's
   * answer and the pass that records it running overlap the start; that pass takes this start
   * over. Resolves once the start had its turn to reach the launcher.
   */
  startEarly(uid: string, runtimeId: string, limits: SandboxLimits): Promise<void>;
  /** The row of a sandbox started early was not written: its agent is stopped and removed. */
  discardEarly(uid: string, runtimeId: string): void;
  /** The runtime's report of an agent that ended without being stopped, with why when it knows. */
  agentEnded(runtimeId: string, reason?: string): void;
  /** Warm sandboxes ready to be claimed and being started, over every limit set. */
  warmPool(): { ready: number; filling: number };
  /** Sandboxes with a reconcile pass queued or under way. */
  readonly reconciling: number;
}

export function createLifecycle(options: LifecycleOptions): Lifecycle {
  const { context, runtime, logger, hub, replicas } = options;
  const placement = replicas.id;
  /** Sandboxes whose agent just ended on its own, until that is recorded: not to be restarted. */
  const failing = new Set<string>();
  let stopped = false;

  const db = () => context.database().db;
  const activity = createSandboxActivity();
  const pool = createWarmPool({ runtime, logger, db, size: options.warmPoolSize });
  const starts = createAgentStarts(runtime, () => stopped, { early: options.earlyStart !== false });
  const common = { context, runtime, logger, hub, placement, starts, activity, failing };
  const reconcile = createReconcilePass({
    ...common,
    queueAgain: (uid) => queue.again(uid),
    running: { track: (row) => sweep.track(row), untrack: (uid) => sweep.untrack(uid) },
    onProcessesEnded: options.onProcessesEnded,
    onAdopted: options.onAdopted,
  });
  const queue = createReconcileQueue(logger, () => stopped, reconcile, starts.interrupt);
  const sweep = createSweep({
    ...common,
    queued: (uid) => queue.has(uid),
    kick: queue.kick,
    stopped: () => stopped,
  });
  const recordEnded = createAgentEnded({ ...common, onProcessesEnded: options.onProcessesEnded });
  /** Take-overs that calls wait for, by sandbox uid. */
  const takingOver = new Map<string, Promise<void>>();

  /** A pass under way may be the one adopting the sandbox: it is waited for, not interrupted. */
  async function takeOver(uid: string, runtimeId: string): Promise<void> {
    await queue.current(uid);
    if (!runtime.get(runtimeId) && !stopped) await queue.kick(uid);
  }

  return {
    placement,
    warmPool: () => pool.counts(),
    get reconciling() {
      return queue.size;
    },
    async requireServedHere(row) {
      if (row.placement === null || row.placement === placement) return;
      const url = await replicas.urlOf(row.placement);
      if (!url) throw unavailable(`the replica running ${row.name} is down; retry once it is back`);
      throw new ServedElsewhere(url, row.name);
    },
    async hold(row) {
      if (!options.sharedPlacement || row.state !== RUNNING || row.desired !== "running") return;
      if (runtime.get(row.runtime_id) || stopped) return;
      let taking = takingOver.get(row.uid);
      if (!taking) {
        taking = takeOver(row.uid, row.runtime_id).finally(() => takingOver.delete(row.uid));
        takingOver.set(row.uid, taking);
      }
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, options.takeOverTimeoutMs ?? 10_000);
      });
      await Promise.race([taking, timedOut]).finally(() => clearTimeout(timer));
    },
    async start() {
      stopped = false;
      pool.resume();
      await removeUnownedSandboxes(runtime, db());
      // Sandboxes left running are adopted (and those that ran before run again) before the
      // service says it is ready, so that no call routed here finds a sandbox without its agent.
      await Promise.all(await sweep.sweepAll());
      // The agents those run are in use now; earlier builds' that nothing runs can go.
      const removed = await removeUnusedAgents(SHARED_AGENT_DIR);
      if (removed.length > 0) logger.info("removed agents of earlier builds that no sandbox runs", { removed });
      await pool.prewarm();
      sweep.schedule(options.intervalMs);
    },
    async stop() {
      stopped = true;
      pool.stop();
      await sweep.stop();
      // A shared placement's sandboxes run on without this replica and the others carry their
      // starts on, so a start waiting for a pod (which may wait for a node for good) is dropped.
      if (options.sharedPlacement) starts.interruptAll();
      await queue.drain();
      await runtime.close({ stopSandboxes: options.stopSandboxesOnStop === true });
    },
    kick: queue.kick,
    handle: (row) => runtime.get(row.runtime_id),
    touch: activity.touch,
    busy: activity.busy,
    enter: activity.enter,
    leave: activity.leave,
    startPhase: starts.phase,
    idleMs: activity.idleMs,
    claimRuntimeId: pool.claim,
    startEarly: starts.startEarly,
    discardEarly: starts.discardEarly,
    agentEnded(runtimeId, reason) {
      pool.forget(runtimeId);
      recordEnded(runtimeId, reason);
    },
  };
}
