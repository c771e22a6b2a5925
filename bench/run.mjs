// Runs the benchmarks: every bench/*.bench.ts, or those whose names contain an argument
// (`npm run bench -- kit-list`). Each prints its own figures and ratios.
import { readdirSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const benches = readdirSync(here)
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => filters.length === 0 || filters.some((want) => f.includes(want)))
  .sort();

let failed = 0;
for (const file of benches) {
  console.log(`\n=== ${file}`);
  const run = spawnSync(process.execPath, ["--import", "tsx", join(here, file)], { stdio: "inherit" });
  if (run.status !== 0) failed++;
}
if (benches.length === 0) console.log("no benchmark matched", filters);
process.exitCode = failed === 0 ? 0 : 1;
