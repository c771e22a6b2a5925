// `npm run faults`: the long fault suite (every replica of every part killed in turn, NATS,
// PostgreSQL and the edge restarted, over several rounds) on a PostgreSQL and NATS of its own.
// Prints the figures; exits non-zero when anything was lost, stuck, out of step or doubled.
// FAULT_ROUNDS (default 2) and FAULT_GAP_MS (default 5000) make it longer or shorter.
import { formatReport } from "./fault-report.js";
import { runFaultSuite } from "./fault-suite.js";

const rounds = Number(process.env.FAULT_ROUNDS ?? 2);
const gapMs = Number(process.env.FAULT_GAP_MS ?? 5_000);
const report = await runFaultSuite({
  everyReplica: true,
  rounds,
  gapMs,
  workers: 4,
  log: (line) => console.error(`[faults] ${line}`),
});
console.log(formatReport(report));
const failed =
  report.crashes.length +
  report.lost.length +
  report.stuck.length +
  report.catalogueMismatches.length +
  report.duplicateProcesses.length;
process.exitCode = failed > 0 ? 1 : 0;
