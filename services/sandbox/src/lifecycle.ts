// Drives every sandbox engine from the state the API recorded towards the one it asked for:
// starts agents through the runtime, stops and deletes them, terminates idle sandboxes and those
// that reached their running limit (counted from when they first ran), and notices
// agents that died. After a restart of the service it adopts the agents of the sandboxes that
// were running (confined agents outlive the service, with their processes and output), marks
// FAILED those whose agent ended meanwhile, and starts again, on their files, the unconfined
// ones (their agents die with the service; their running processes end). Work on one sandbox is
// serialised; a sweep every `intervalMs` catches everything a kick may have missed.
//
// Activity, which keeps a sandbox from being idle, is kept in memory (every call on the sandbox,
// every byte through its ports, and as long as a wait or an output stream is open) and written
// to the database now and then, so the idle limit survives a restart roughly.
//
// Replicas: a sandbox is pinned to the replica whose host runs its agent (`placement`). Each
// replica reconciles only its own sandboxes (and takes unpinned ones); calls about a sandbox
// pinned elsewhere are carried out by its owner (ServedElsewhere), or answered UNAVAILABLE while
// the owner is down. An owner that comes back (same host and data directory) starts its running
// sandboxes again, as after any restart.
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { unavailable } from "@aiem/kit/errors";
import type { Logger } from "@aiem/kit/logger";
import { ServedElsewhere, type ReplicaRegistry } from "@aiem/kit/server";
import {
  type SandboxEngine,
  SandboxEngineSchema,
  SandboxEngine_State,
} from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import {
  SandboxRuntimeError,
  type LocalSandboxRuntime,
  type SandboxHandle,
  type SandboxLimits,
} from "./runtime/index.js";
import type { ServiceContext } from "./service-context.js";
import {
  enqueueSandboxState,
  failLiveProcesses,
  loadSandboxByUid,
  recordSandboxRunning,
  sandboxStateName,
  sandboxStateOf,
  transitionSandbox,
  type SandboxRow,
  type StartPhase,
} from "./store.js";

const S = SandboxEngine_State;
const POOL_PREFIX = "pool-";
/** How many different limit sets keep warm sandboxes at once; the least recently used go first. */
const MAX_POOL_KEYS = 4;
/** How long after a claim the warm pool is refilled. */
const REFILL_DELAY_MS = 250;
/** Activity is written to the database when it is this much newer than what is stored. */
const ACTIVITY_WRITE_MS = 2_000;

export interface ChangeHub {
  /** Resolves at the next notify(key), or when `signal` aborts. */
  next(keys: readonly string[], signal?: AbortSignal): Promise<void>;
  notify(key: string): void;
}

export function createChangeHub(): ChangeHub {
  const waiters = new Map<string, Set<() => void>>();
  return {
    next(keys, signal) {
      return new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const done = () => {
          for (const key of keys) waiters.get(key)?.delete(done);
          signal?.removeEventListener("abort", done);
          resolve();
        };
        for (const key of keys) {
          let set = waiters.get(key);
          if (!set) waiters.set(key, (set = new Set()));
          set.add(done);
        }
        signal?.addEventListener("abort", done, { once: true });
      });
    },
    notify(key) {
      const set = waiters.get(key);
      if (!set) return;
      waiters.delete(key);
      for (const w of set) w();
    },
  };
}

/** The key under which changes of a sandbox (its state, its agent) are announced. */
export const sandboxKey = (uid: string) => `sandbox:${uid}`;

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
}

export interface Lifecycle {
  /** This replica's placement: sandboxes pinned to it run here. */
  readonly placement: string;
  /**
   * Throws ServedElsewhere when another live replica runs the sandbox, UNAVAILABLE when that
   * replica is down; returns when this one serves it.
   */
  requireServedHere(row: Pick<SandboxRow, "name" | "placement">): Promise<void>;
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

export function limitsOf(info: {
  memoryBytesLimit?: bigint;
  milliCpuLimit?: number | undefined;
  milliCpuRequest?: number | undefined;
  storageBytes?: bigint | undefined;
}): SandboxLimits {
  return {
    memoryBytes: info.memoryBytesLimit ?? 0n,
    milliCpuLimit: info.milliCpuLimit ?? 0,
    milliCpuRequest: info.milliCpuRequest ?? 0,
    storageBytes: info.storageBytes ?? 0n,
  };
}

function limitsKey(limits: SandboxLimits): string {
  return JSON.stringify([
    String(limits.memoryBytes ?? 0),
    limits.milliCpuLimit ?? 0,
    limits.milliCpuRequest ?? 0,
    String(limits.storageBytes ?? 0),
  ]);
}

export function createLifecycle(options: LifecycleOptions): Lifecycle {
  const { context, runtime, logger, hub, replicas } = options;
  const placement = replicas.id;
  const queues = new Map<string, { again: boolean; done: Promise<void> }>();
  const activity = new Map<string, number>();
  const busyCount = new Map<string, number>();
  /** runtime id -> sandbox uid, for agents that end on their own. */
  const owners = new Map<string, string>();
  /** Sandboxes whose agent just ended on its own, until that is recorded: not to be restarted. */
  const failing = new Set<string>();
  /** Starting sandboxes whose environment was launched; the agent has not answered yet. */
  const launched = new Set<string>();
  /** Starts begun by a create before its row was written, by runtime id, until a pass takes them. */
  const early = new Map<string, Promise<Started>>();
  /** Warm sandboxes by limits key, in the order they became ready; keys in least-recent-use order. */
  const pool = new Map<string, { limits: SandboxLimits; ready: string[]; filling: number }>();
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<void> | undefined;
  let stopped = false;

  const now = () => context.now();
  const db = () => context.database().db;

  function touch(uid: string): void {
    activity.set(uid, Date.now());
  }

  function idleMs(row: Pick<SandboxRow, "uid" | "state" | "last_activity">, at = Date.now()): number {
    if (row.state !== sandboxStateName(S.RUNNING)) return 0;
    if ((busyCount.get(row.uid) ?? 0) > 0) return 0;
    const last = Math.max(activity.get(row.uid) ?? 0, row.last_activity.getTime());
    return Math.max(0, at - last);
  }

  function enter(uid: string): void {
    busyCount.set(uid, (busyCount.get(uid) ?? 0) + 1);
    touch(uid);
  }

  function leave(uid: string): void {
    const n = (busyCount.get(uid) ?? 1) - 1;
    if (n <= 0) busyCount.delete(uid);
    else busyCount.set(uid, n);
    touch(uid);
  }

  // ---- warm pool --------------------------------------------------------------------------------

  function fillPool(key: string): void {
    const entry = pool.get(key);
    if (!entry || stopped) return;
    while (entry.ready.length + entry.filling < options.warmPoolSize) {
      entry.filling++;
      const id = `${POOL_PREFIX}${randomUUID()}`;
      runtime
        .start(id, { limits: entry.limits })
        .then(
          () => {
            if (pool.get(key) === entry && !stopped) entry.ready.push(id);
            else void runtime.destroy(id).catch(() => undefined);
          },
          (err: unknown) => {
            logger.warn("could not start a warm sandbox", { error: err instanceof Error ? err.message : String(err) });
            void runtime.destroy(id).catch(() => undefined);
          },
        )
        .finally(() => {
          // A failed start is not retried until the next claim: no loop of failing starts.
          entry.filling--;
        });
    }
  }

  function claimRuntimeId(uid: string, limits: SandboxLimits): string {
    if (options.warmPoolSize <= 0 || runtime.capabilities.isolation === "unavailable") return uid;
    const key = limitsKey(limits);
    let entry = pool.get(key);
    if (entry) {
      pool.delete(key); // re-insert: most recently used last
      pool.set(key, entry);
    } else {
      entry = { limits, ready: [], filling: 0 };
      pool.set(key, entry);
      while (pool.size > MAX_POOL_KEYS) {
        const [oldKey, old] = pool.entries().next().value as [string, { ready: string[] }];
        pool.delete(oldKey);
        for (const id of old.ready) void runtime.destroy(id).catch(() => undefined);
      }
    }
    let claimed: string | undefined;
    while (entry.ready.length > 0) {
      const id = entry.ready.shift()!;
      if (runtime.isRunning(id)) {
        claimed = id;
        break;
      }
      void runtime.destroy(id).catch(() => undefined);
    }
    // Refilled a moment later, so the new agent's start does not slow the claimed sandbox's.
    setTimeout(() => fillPool(key), REFILL_DELAY_MS).unref();
    return claimed ?? uid;
  }

  /**
   * Removes the sandboxes that no sandbox engine owns, left by an earlier run: warm ones, and a
   * cold start begun (startEarly) by a create whose row was never written.
   */
  async function removeStaleDirs(): Promise<void> {
    const dir = path.join(runtime.dataDir, "sandboxes");
    let names: string[];
    try {
      names = await fs.promises.readdir(dir);
    } catch {
      return;
    }
    for (let i = 0; i < names.length; i += 500) {
      const candidates = names.slice(i, i + 500);
      const owned = new Set(
        (
          (await db()
            .selectFrom("sandbox_engines")
            .select("runtime_id")
            .where("runtime_id", "in", candidates)
            .execute()) as { runtime_id: string }[]
        ).map((r) => r.runtime_id),
      );
      for (const name of candidates) if (!owned.has(name)) await runtime.destroy(name).catch(() => undefined);
    }
  }

  /** Warms sandboxes for the templates used most recently, so the next creates start warm. */
  async function prewarm(): Promise<void> {
    if (options.warmPoolSize <= 0 || runtime.capabilities.isolation === "unavailable") return;
    const rows = (await db()
      .selectFrom("sandbox_engines")
      .select("resource")
      .orderBy("create_time", "desc")
      .limit(20)
      .execute()) as { resource: Uint8Array }[];
    const seen = new Map<string, SandboxLimits>();
    for (const row of rows) {
      const limits = limitsOf(fromBinary(SandboxEngineSchema, row.resource).sandboxEngineTemplateInfo ?? {});
      const key = limitsKey(limits);
      if (!seen.has(key)) seen.set(key, limits);
      if (seen.size >= 2) break;
    }
    for (const [key, limits] of [...seen].reverse()) {
      if (!pool.has(key)) pool.set(key, { limits, ready: [], filling: 0 });
      fillPool(key);
    }
  }

  // ---- reconciling ------------------------------------------------------------------------------

  function agentEnded(runtimeId: string, reason?: string): void {
    for (const entry of pool.values()) {
      const i = entry.ready.indexOf(runtimeId);
      if (i >= 0) entry.ready.splice(i, 1);
    }
    const uid = owners.get(runtimeId);
    if (uid === undefined) return;
    owners.delete(runtimeId);
    failing.add(uid);
    void context
      .write(async (trx) => {
        const at = now();
        const moved = await transitionSandbox(trx, uid, [S.RUNNING], S.FAILED, at, {
          failureReason: reason ?? "the sandbox's agent ended unexpectedly",
        });
        if (moved) await failLiveProcesses(trx, moved.row, at);
        return moved;
      })
      .then((moved) => {
        if (moved) logger.warn("a sandbox's agent ended unexpectedly", { sandbox: moved.row.name });
        options.onProcessesEnded?.(uid);
        hub.notify(sandboxKey(uid));
      })
      .catch((err: unknown) => logger.error("could not record a sandbox that failed", { uid, error: String(err) }))
      .finally(() => failing.delete(uid));
  }

  type Started =
    | { ok: true; adopted: boolean }
    | { ok: false; reason: string; agentGone: boolean; unverifiable?: boolean; interrupted?: boolean };

  /** Starts under way, by sandbox uid: a kick (terminate, delete) interrupts the wait for one to run. */
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

  async function startAgent(row: SandboxRow): Promise<Started> {
    const begun = early.get(row.runtime_id);
    early.delete(row.runtime_id);
    // The limits come from the template as it was when the sandbox was created.
    const engine = fromBinary(SandboxEngineSchema, row.resource);
    const started =
      (await begun) ??
      (await startRuntime(row.uid, row.runtime_id, limitsOf(engine.sandboxEngineTemplateInfo ?? {}), engine));
    if (started.ok) owners.set(row.runtime_id, row.uid);
    return started;
  }

  async function startEarly(uid: string, runtimeId: string, limits: SandboxLimits): Promise<void> {
    if (stopped || early.has(runtimeId) || options.earlyStart === false) return;
    early.set(runtimeId, startRuntime(uid, runtimeId, limits));
    // The start runs synchronously from here to the launcher (a few awaits of settled work, then
    // the files, cgroup and arguments): one turn of the event loop lets it get there before the
    // caller writes the row, which then overlaps the agent's start in other processes.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }

  function discardEarly(uid: string, runtimeId: string): void {
    const begun = early.get(runtimeId);
    if (!begun) return;
    early.delete(runtimeId);
    launched.delete(uid);
    void runtime.destroy(runtimeId).catch(() => undefined);
  }

  /** Whether this replica runs the sandbox, taking it when no replica does yet. */
  async function ours(row: SandboxRow): Promise<boolean> {
    if (row.placement === placement) return true;
    if (row.placement !== null) return false;
    const taken = await db()
      .updateTable("sandbox_engines")
      .set({ placement })
      .where("uid", "=", row.uid)
      .where("placement", "is", null)
      .executeTakeFirst();
    return taken.numUpdatedRows > 0n;
  }

  async function reconcile(uid: string): Promise<void> {
    const row = await loadSandboxByUid(db(), uid);
    if (!row) {
      activity.delete(uid);
      busyCount.delete(uid);
      return;
    }
    if (!(await ours(row))) return;
    const state = sandboxStateOf(row.state);

    if (row.desired === "deleted") {
      early.delete(row.runtime_id);
      owners.delete(row.runtime_id);
      await runtime.destroy(row.runtime_id);
      await context.write(async (trx) => {
        const current = await loadSandboxByUid(trx, uid, true);
        if (!current || current.desired !== "deleted") return;
        await trx.deleteFrom("processes").where("sandbox_uid", "=", uid).execute();
        await trx.deleteFrom("ports").where("sandbox_uid", "=", uid).execute();
        await trx.deleteFrom("sandbox_engines").where("uid", "=", uid).execute();
        await enqueueSandboxState(trx, current, sandboxStateOf(current.state), now(), 0, true);
      });
      activity.delete(uid);
      options.onProcessesEnded?.(uid);
      hub.notify(sandboxKey(uid));
      return;
    }

    if (row.desired === "terminated") {
      if (state === S.TERMINATED) return;
      early.delete(row.runtime_id);
      owners.delete(row.runtime_id);
      await runtime.destroy(row.runtime_id);
      await context.write(async (trx) => {
        const at = now();
        const moved = await transitionSandbox(
          trx,
          uid,
          [S.TERMINATING, S.STARTING, S.RUNNING, S.FAILED],
          S.TERMINATED,
          at,
        );
        if (moved) await failLiveProcesses(trx, moved.row, at);
      });
      options.onProcessesEnded?.(uid);
      hub.notify(sandboxKey(uid));
      return;
    }

    // desired running
    if (state === S.STARTING) {
      let started = await startAgent(row);
      // Its agent was started by a service that died before recording it running, and has ended
      // since: no process ran in it yet, so nothing is lost by starting it afresh.
      if (!started.ok && started.agentGone) started = await startAgent(row);
      if (!started.ok && started.interrupted) {
        launched.delete(uid);
        queueAgain(uid);
        return;
      }
      const moved = await context
        .write(async (trx) =>
          started.ok
            ? recordSandboxRunning(trx, row, now())
            : transitionSandbox(trx, uid, [S.STARTING], S.FAILED, now(), { failureReason: started.reason }),
        )
        .finally(() => launched.delete(uid));
      if (!started.ok) logger.warn("a sandbox could not start", { sandbox: row.name, reason: started.reason });
      if (moved && started.ok) touch(uid);
      if (!moved && started.ok) {
        // Terminated or deleted while it started: the next pass stops it.
        const again = await loadSandboxByUid(db(), uid);
        if (again && again.desired !== "running") queueAgain(uid);
      }
      hub.notify(sandboxKey(uid));
      return;
    }
    if (state === S.RUNNING && !runtime.isRunning(row.runtime_id) && !failing.has(uid)) {
      // Not held by this process of the service: an earlier one left it. Its agent is adopted
      // when it runs on (confined sandboxes outlive the service), with its processes and their
      // output; one whose agent ended meanwhile is FAILED, not started again with its processes
      // lost. Only an agent that was never meant to outlive the service (unconfined, or started
      // by a version without adoption) is started again on the same files.
      const started = await startAgent(row);
      if (!started.ok && started.interrupted) {
        queueAgain(uid);
        return;
      }
      if (started.ok && started.adopted) {
        touch(uid);
        logger.info("adopted a sandbox's agent left running by an earlier process of the service", {
          sandbox: row.name,
        });
        try {
          await options.onAdopted?.(uid);
        } catch (err) {
          logger.error("could not follow an adopted sandbox's processes", { sandbox: row.name, error: String(err) });
        }
        hub.notify(sandboxKey(uid));
        return;
      }
      const reason =
        !started.ok && started.agentGone && !started.unverifiable
          ? "the sandbox's agent ended while the service was not running; its processes ended with it"
          : !started.ok
            ? started.reason
            : undefined;
      const kept = await context.write(async (trx) => {
        const at = now();
        const current = await loadSandboxByUid(trx, uid, true);
        if (!current || current.state !== sandboxStateName(S.RUNNING) || current.desired !== "running") return false;
        await failLiveProcesses(trx, current, at);
        if (reason !== undefined)
          await transitionSandbox(trx, uid, [S.RUNNING], S.FAILED, at, { failureReason: reason });
        else await trx.updateTable("sandbox_engines").set({ last_activity: at }).where("uid", "=", uid).execute();
        return started.ok;
      });
      if (started.ok && !kept) {
        // It changed meanwhile (failed, terminated, deleted): the agent just started is not wanted.
        owners.delete(row.runtime_id);
        await runtime.stop(row.runtime_id);
        queueAgain(uid);
        return;
      }
      if (started.ok) {
        touch(uid);
        logger.info("restarted a sandbox whose agent was gone", { sandbox: row.name });
      } else {
        logger.warn(
          started.agentGone
            ? "a sandbox's agent ended while the service was not running"
            : "a sandbox could not be restarted",
          {
            sandbox: row.name,
            reason,
          },
        );
      }
      options.onProcessesEnded?.(uid);
      hub.notify(sandboxKey(uid));
      return;
    }
    if (state === S.RUNNING) owners.set(row.runtime_id, row.uid);
  }

  function queueAgain(uid: string): void {
    const q = queues.get(uid);
    if (q) q.again = true;
  }

  function kick(uid: string): Promise<void> {
    const existing = queues.get(uid);
    if (existing) {
      existing.again = true;
      starting.get(uid)?.abort();
      return existing.done;
    }
    const entry = { again: true, done: Promise.resolve() };
    entry.done = (async () => {
      try {
        while (entry.again && !stopped) {
          entry.again = false;
          try {
            await reconcile(uid);
          } catch (err) {
            logger.error("reconciling a sandbox failed", {
              uid,
              error: err instanceof Error ? err.message : String(err),
            });
          }
        }
      } finally {
        queues.delete(uid);
      }
    })();
    queues.set(uid, entry);
    return entry.done;
  }

  /** Looks at every live sandbox of this replica; returns the passes it started. */
  async function sweep(): Promise<Promise<void>[]> {
    const kicks: Promise<void>[] = [];
    const rows = (await db()
      .selectFrom("sandbox_engines")
      .select([
        "uid",
        "state",
        "desired",
        "runtime_id",
        "max_idle_ms",
        "max_running_ms",
        "start_time",
        "last_activity",
        "name",
      ])
      .where("state", "in", [S.STARTING, S.RUNNING, S.TERMINATING, S.DELETING].map(sandboxStateName))
      .where((eb) => eb.or([eb("placement", "=", placement), eb("placement", "is", null)]))
      .execute()) as Pick<
      SandboxRow,
      | "uid"
      | "state"
      | "desired"
      | "runtime_id"
      | "max_idle_ms"
      | "max_running_ms"
      | "start_time"
      | "last_activity"
      | "name"
    >[];
    const at = Date.now();
    for (const row of rows) {
      if (stopped) return kicks;
      const state = sandboxStateOf(row.state);
      if (state !== S.RUNNING || row.desired !== "running" || !runtime.isRunning(row.runtime_id)) {
        if (!queues.has(row.uid) && !failing.has(row.uid)) kicks.push(kick(row.uid));
        continue;
      }
      const maxIdle = Number(row.max_idle_ms);
      const idle = idleMs(row, at);
      const maxRunning = Number(row.max_running_ms);
      const ran = row.start_time ? at - row.start_time.getTime() : 0;
      const reason =
        maxRunning > 0 && ran >= maxRunning
          ? { message: "terminating a sandbox that reached its running limit", ranMs: ran }
          : maxIdle > 0 && idle >= maxIdle
            ? { message: "terminating an idle sandbox", idleMs: idle }
            : undefined;
      if (reason) {
        const moved = await context.write((trx) =>
          transitionSandbox(trx, row.uid, [S.RUNNING], S.TERMINATING, now(), { desired: "terminated" }),
        );
        if (moved) {
          const { message, ...detail } = reason;
          logger.info(message, { sandbox: row.name, ...detail });
          hub.notify(sandboxKey(row.uid));
          kicks.push(kick(row.uid));
        }
        continue;
      }
      const last = activity.get(row.uid);
      const effective = (busyCount.get(row.uid) ?? 0) > 0 ? at : last;
      if (effective !== undefined && effective - row.last_activity.getTime() > ACTIVITY_WRITE_MS) {
        await db()
          .updateTable("sandbox_engines")
          .set({ last_activity: new Date(effective) })
          .where("uid", "=", row.uid)
          .execute();
      }
    }
    return kicks;
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      sweeping = sweep()
        .then(() => undefined)
        .catch((err: unknown) =>
          logger.error("sandbox sweep failed", { error: err instanceof Error ? err.message : String(err) }),
        )
        .finally(() => {
          sweeping = undefined;
          schedule();
        });
    }, options.intervalMs);
    timer.unref();
  }

  return {
    placement,
    warmPool() {
      let ready = 0;
      let filling = 0;
      for (const entry of pool.values()) {
        ready += entry.ready.length;
        filling += entry.filling;
      }
      return { ready, filling };
    },
    get reconciling() {
      return queues.size;
    },
    async requireServedHere(row) {
      if (row.placement === null || row.placement === placement) return;
      const url = await replicas.urlOf(row.placement);
      if (!url) throw unavailable(`the replica running ${row.name} is down; retry once it is back`);
      throw new ServedElsewhere(url, row.name);
    },
    async start() {
      stopped = false;
      await removeStaleDirs();
      // Sandboxes left running are adopted (and those that ran before run again) before the
      // service says it is ready, so that no call routed here finds a sandbox without its agent.
      await Promise.all(await sweep());
      await prewarm();
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await sweeping;
      await Promise.all([...queues.values()].map((q) => q.done));
      pool.clear();
      await runtime.close({ stopSandboxes: options.stopSandboxesOnStop === true });
    },
    kick,
    handle: (row) => runtime.get(row.runtime_id),
    touch,
    async busy(uid, work) {
      enter(uid);
      try {
        return await work();
      } finally {
        leave(uid);
      }
    },
    enter,
    leave,
    startPhase: (uid) => runtime.pending?.(uid) ?? (launched.has(uid) ? "launched" : "creating"),
    idleMs,
    claimRuntimeId,
    startEarly,
    discardEarly,
    agentEnded,
  };
}
