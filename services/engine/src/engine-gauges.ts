// The engine service's gauges: engines by kind and state, and the reconciler's queue.
import { sql } from "kysely";
import type { Database } from "@aiem/kit/db";
import type { ServiceDeps } from "@aiem/kit/server";
import type { Reconciler } from "./reconciler.js";

/** Registers the gauges; the functions that remove them again. */
export function registerEngineGauges(
  metrics: ServiceDeps["metrics"],
  database: Database,
  reconciler: Reconciler,
): Array<(() => void) | undefined> {
  return [
    metrics?.gauge({
      name: "aiem_engines",
      help: "Engines by kind and state (the whole deployment's, as every engine replica sees the same database)",
      labelNames: ["kind", "state"] as const,
      async collect(set) {
        const r = await sql<{ type: string; state: string; n: string | number }>`
          select type, state, count(*) as n from engines group by type, state`.execute(database.db);
        for (const row of r.rows) set({ kind: row.type, state: row.state }, Number(row.n));
      },
    }),
    metrics?.gauge({
      name: "aiem_engine_reconciler_due",
      help: "Engines whose next reconcile step is due and not yet taken by a reconciler",
      async collect(set) {
        const r = await sql<{ n: string | number }>`
          select count(*) as n from engines
           where next_reconcile_at <= now() and (lease_until is null or lease_until < now())`.execute(database.db);
        set({}, Number(r.rows[0]?.n ?? 0));
      },
    }),
    metrics?.gauge({
      name: "aiem_engine_reconciler_in_flight",
      help: "Reconcile steps this process is working on",
      collect: (set) => set({}, reconciler.inFlight),
    }),
  ];
}
