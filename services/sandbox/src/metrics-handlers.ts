// MetricsService: a snapshot of what a sandbox uses. Memory and CPU time come from the sandbox's
// cgroup where the runtime made one (what the kernel charges to it, page cache included),
// otherwise from the agent: in a pod, its container's cgroup, the same measure; elsewhere its sum
// over its process tree (docs/adr/0275). Disk figures always come from the agent,
// because the sandbox's storage image is mounted in a namespace only the sandbox sees.
//
// A CPU share needs two readings of CPU time: the previous call's, when it is recent enough to
// describe "now", otherwise a second reading taken a moment after the first.
import * as os from "node:os";
import { create, fromBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { ConnectError, unavailable } from "@aiem/kit/errors";
import type { ReadUsageResponse } from "@aiem/proto/enginemanager/agent/v1/agent_service_pb.js";
import { MetricsSchema, type MetricsService } from "@aiem/proto/enginemanager/sandbox/v1/metrics_service_pb.js";
import { SandboxEngineSchema } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { type AccessDeps, type SandboxCall, authorizeSandbox, requireRunning } from "./access.js";
import type { SandboxHandle } from "./runtime/index.js";

/** A previous CPU reading younger than this, and at least MIN_WINDOW_MS old, is reused. */
const MAX_WINDOW_MS = 10_000;
const MIN_WINDOW_MS = 100;
/** How long apart two readings are taken when there is no usable previous one. */
const SAMPLE_GAP_MS = 200;
const AGENT_TIMEOUT_MS = 5_000;

export interface MetricsDeps extends AccessDeps {
  /** The machine's CPU count, the denominator when a sandbox has no CPU limit (tests replace it). */
  readonly cpuCount?: () => number;
}

interface Reading {
  /** Monotonic milliseconds. */
  readonly at: number;
  readonly memoryBytes: bigint | undefined;
  readonly cpuNanos: bigint | undefined;
  readonly inside: ReadUsageResponse | undefined;
  readonly problems: readonly string[];
}

export function createMetricsHandlers(deps: MetricsDeps): ServiceImpl<typeof MetricsService> {
  const cpuCount = deps.cpuCount ?? (() => os.availableParallelism());
  /** The last CPU reading per sandbox uid. */
  const last = new Map<string, { at: number; cpuNanos: bigint }>();

  async function read(handle: SandboxHandle): Promise<Reading> {
    const problems: string[] = [];
    const cgroup = handle.cgroupUsage();
    let inside: ReadUsageResponse | undefined;
    try {
      inside = await handle.client.readUsage({}, { timeoutMs: AGENT_TIMEOUT_MS });
    } catch (err) {
      problems.push(`the sandbox's agent did not report its usage (${ConnectError.from(err).rawMessage})`);
    }
    const at = performance.now();
    // One source per figure for the whole call, so two readings compare like with like.
    const memoryBytes = cgroup.memoryBytes ?? inside?.memoryBytes;
    const cpuNanos = cgroup.cpuNanos ?? inside?.cpuNanos;
    if (memoryBytes === undefined) problems.push("memory use cannot be measured");
    if (cpuNanos === undefined) problems.push("CPU use cannot be measured");
    return { at, memoryBytes, cpuNanos, inside, problems };
  }

  function forget(now: number): void {
    for (const [uid, r] of last) if (now - r.at > 10 * MAX_WINDOW_MS) last.delete(uid);
  }

  async function usageRatio(call: SandboxCall, handle: SandboxHandle, first: Reading): Promise<number> {
    if (first.cpuNanos === undefined) return 0;
    let before = last.get(call.row.uid);
    let now = first;
    const age = before ? first.at - before.at : Number.POSITIVE_INFINITY;
    if (!before || age < MIN_WINDOW_MS || age > MAX_WINDOW_MS) {
      before = { at: first.at, cpuNanos: first.cpuNanos };
      await new Promise((r) => setTimeout(r, SAMPLE_GAP_MS));
      now = await read(handle);
      if (now.cpuNanos === undefined) return 0;
    }
    last.set(call.row.uid, { at: now.at, cpuNanos: now.cpuNanos! });
    forget(now.at);
    const info = fromBinary(SandboxEngineSchema, call.row.resource).sandboxEngineTemplateInfo;
    const cores = info?.milliCpuLimit ? info.milliCpuLimit / 1000 : cpuCount();
    const used = Number(now.cpuNanos! - before.cpuNanos) / 1e6; // ms of CPU
    const ratio = used / ((now.at - before.at) * cores);
    // Processes that ended between readings leave the agent's sum: never below 0.
    return Math.min(1, Math.max(0, ratio));
  }

  function memoryLimit(call: SandboxCall, handle: SandboxHandle): bigint | undefined {
    const applied = handle.limits.memory;
    if (applied.mechanism !== "none" && applied.value !== undefined) return BigInt(applied.value);
    const configured =
      fromBinary(SandboxEngineSchema, call.row.resource).sandboxEngineTemplateInfo?.memoryBytesLimit ?? 0n;
    return configured > 0n ? configured : undefined;
  }

  return {
    async readMetrics(req, ctx) {
      const call = await authorizeSandbox(deps, ctx, req.name, "name", WorkspaceKind.sandboxEngines, Action.GET);
      const handle = requireRunning(deps, call);
      const first = await read(handle);
      if (req.strictMode && first.problems.length > 0) {
        throw unavailable(`the metrics of ${call.row.name} cannot be collected: ${first.problems.join("; ")}`);
      }
      const ratio = await usageRatio(call, handle, first);
      const limit = memoryLimit(call, handle);
      return {
        metrics: create(MetricsSchema, {
          memory: { currentBytes: first.memoryBytes ?? 0n, ...(limit !== undefined ? { limitBytes: limit } : {}) },
          disk: {
            totalBytes: first.inside?.diskTotalBytes ?? 0n,
            availableBytes: first.inside?.diskAvailableBytes ?? 0n,
          },
          cpu: { usageRatio: ratio },
          collectTime: timestampFromDate(deps.context.now()),
        }),
      };
    },
  };
}
