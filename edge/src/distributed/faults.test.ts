// The short fault suite for `npm test`: one replica of each part SIGKILLed and started again,
// NATS, PostgreSQL and the edge restarted, under a mixed workload, then every check of the long
// suite (`npm run faults`). Its PostgreSQL and NATS are its own (started from Debian's binaries),
// so restarting them disturbs no other suite; it runs where the others run on real servers.
import { expect, it } from "vitest";
import { formatReport } from "./fault-report.js";
import { runFaultSuite } from "./fault-suite.js";

const real = Boolean(process.env.DATABASE_URL && process.env.NATS_URL);

it.skipIf(!real)(
  "loses nothing a client was told succeeded while replicas, NATS, PostgreSQL and the edge fail one at a time",
  async () => {
    const report = await runFaultSuite({ everyReplica: false, rounds: 1, gapMs: 2_500, workers: 3 });
    console.log(formatReport(report));
    expect(report.faults).toHaveLength(6);
    expect(report.succeeded).toBeGreaterThan(20);
    expect(report.crashes).toEqual([]);
    expect(report.lost).toEqual([]);
    expect(report.stuck).toEqual([]);
    expect(report.catalogueMismatches).toEqual([]);
    expect(report.catalogueChecks).toBeGreaterThan(0);
    expect(report.duplicateProcesses).toEqual([]);
  },
  300_000,
);
