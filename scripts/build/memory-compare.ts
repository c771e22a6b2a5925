// Resident memory of each part at idle after start, run through tsx and compiled (`npm run build`
// first): `DATABASE_URL=... NATS_URL=... npx tsx scripts/build/memory-compare.ts [dist]`.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { createCluster } from "../../edge/src/distributed/cluster.js";

const rss = (pid: number) =>
  Math.round(Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024);

const compiled = resolve(process.argv[2] ?? "dist");
for (const mode of ["tsx", "compiled"] as const) {
  const cluster = await createCluster({
    replicas: 1,
    databaseUrl: process.env.DATABASE_URL!,
    natsUrl: process.env.NATS_URL!,
    policy: "admins: [users/root]\n",
    env: { AIEM_JUPYTER_COMMAND: "none", AIEM_LOG_LEVEL: "warn" },
    ...(mode === "compiled" ? { compiled } : {}),
  });
  try {
    await new Promise((r) => setTimeout(r, 15_000));
    for (const r of [...cluster.replicas, cluster.edge])
      console.log(`memory: ${mode.padEnd(8)} ${r.name.padEnd(12)} ${rss(r.child!.pid!)} MiB`);
  } finally {
    await cluster.close();
  }
}
