// Warm sandboxes: agents started ahead of creates, one small pool for each limit set used
// lately, so a create with those limits claims a running agent instead of starting one.
import { randomUUID } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import type { Kysely } from "kysely";
import type { AnyDatabase } from "@aiem/kit/db";
import type { Logger } from "@aiem/kit/logger";
import { SandboxEngineSchema } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { LocalSandboxRuntime, SandboxLimits } from "./runtime/index.js";

const POOL_PREFIX = "pool-";
/** How many different limit sets keep warm sandboxes at once; the least recently used go first. */
const MAX_POOL_KEYS = 4;
/** How long after a claim the warm pool is refilled. */
const REFILL_DELAY_MS = 250;

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

export interface WarmPoolOptions {
  readonly runtime: LocalSandboxRuntime;
  readonly logger: Logger;
  readonly db: () => Kysely<AnyDatabase>;
  /** Warm sandboxes kept for each limit set; 0 keeps none. */
  readonly size: number;
}

export interface WarmPool {
  /** The runtime id of a new sandbox: a warm sandbox with these limits when one is ready, else its uid. */
  claim(uid: string, limits: SandboxLimits): string;
  /** Warms sandboxes for the templates used most recently, so the next creates start warm. */
  prewarm(): Promise<void>;
  /** A warm sandbox's agent ended: it is no longer offered. */
  forget(runtimeId: string): void;
  /** Warm sandboxes ready to be claimed and being started, over every limit set. */
  counts(): { ready: number; filling: number };
  /** Starts no more warm sandboxes; those started are left to the runtime's close. */
  stop(): void;
  resume(): void;
}

export function createWarmPool(options: WarmPoolOptions): WarmPool {
  const { runtime, logger } = options;
  /** Warm sandboxes by limits key, in the order they became ready; keys in least-recent-use order. */
  const pool = new Map<string, { limits: SandboxLimits; ready: string[]; filling: number }>();
  let stopped = false;
  const enabled = () => options.size > 0 && runtime.capabilities.isolation !== "unavailable";

  function fill(key: string): void {
    const entry = pool.get(key);
    if (!entry || stopped) return;
    while (entry.ready.length + entry.filling < options.size) {
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

  return {
    claim(uid, limits) {
      if (!enabled()) return uid;
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
      setTimeout(() => fill(key), REFILL_DELAY_MS).unref();
      return claimed ?? uid;
    },
    async prewarm() {
      if (!enabled()) return;
      const rows = (await options
        .db()
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
        fill(key);
      }
    },
    forget(runtimeId) {
      for (const entry of pool.values()) {
        const i = entry.ready.indexOf(runtimeId);
        if (i >= 0) entry.ready.splice(i, 1);
      }
    },
    counts() {
      let ready = 0;
      let filling = 0;
      for (const entry of pool.values()) {
        ready += entry.ready.length;
        filling += entry.filling;
      }
      return { ready, filling };
    },
    stop() {
      stopped = true;
      pool.clear();
    },
    resume() {
      stopped = false;
    },
  };
}

/**
 * Removes the sandboxes that no sandbox engine owns, left by an earlier run: warm ones, and a
 * cold start begun (startEarly) by a create whose row was never written.
 */
export async function removeUnownedSandboxes(runtime: LocalSandboxRuntime, db: Kysely<AnyDatabase>): Promise<void> {
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
        (await db
          .selectFrom("sandbox_engines")
          .select("runtime_id")
          .where("runtime_id", "in", candidates)
          .execute()) as { runtime_id: string }[]
      ).map((r) => r.runtime_id),
    );
    for (const name of candidates) if (!owned.has(name)) await runtime.destroy(name).catch(() => undefined);
  }
}
