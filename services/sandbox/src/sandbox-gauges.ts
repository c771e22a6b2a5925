// The sandbox service's gauges: sandboxes by state (the deployment's), and this process's warm
// pool and reconcile queue.
import { sql } from "kysely";
import type { Database } from "@aiem/kit/db";
import type { Metrics } from "@aiem/kit/observability";
import type { Lifecycle } from "./lifecycle.js";

/** Adds the gauges to `metrics`; returns what removes them again. */
export function addSandboxGauges(
  metrics: Metrics | undefined,
  db: Database,
  lifecycle: Lifecycle,
): Array<(() => void) | undefined> {
  return [
    metrics?.gauge({
      name: "aiem_sandboxes",
      help: "Sandbox engines by state (the whole deployment's, as every sandbox replica sees the same database)",
      labelNames: ["state"] as const,
      async collect(set) {
        const r = await sql<{ state: string; n: string | number }>`
          select state, count(*) as n from sandbox_engines group by state`.execute(db.db);
        for (const row of r.rows) set({ state: row.state }, Number(row.n));
      },
    }),
    metrics?.gauge({
      name: "aiem_sandbox_warm_pool",
      help: "Warm sandboxes of this process: ready to be claimed, or starting",
      labelNames: ["status"] as const,
      collect(set) {
        const { ready, filling } = lifecycle.warmPool();
        set({ status: "ready" }, ready);
        set({ status: "starting" }, filling);
      },
    }),
    metrics?.gauge({
      name: "aiem_sandbox_reconciler_queued",
      help: "Sandboxes of this process with a reconcile pass queued or under way",
      collect: (set) => set({}, lifecycle.reconciling),
    }),
  ];
}
