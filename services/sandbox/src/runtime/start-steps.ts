// A sandbox start's steps timed, for finding where a cold create spends its time: with
// AIEM_DEBUG_START_STEPS=1 each start writes one line to standard error: per step, the
// milliseconds since the step before and the service process's CPU time meanwhile, and the CPU
// time and run-queue wait of the sandbox's processes when its agent answered (on a shared
// machine the CPU times move less with the load than the wall times do). Off (the default),
// every call returns at once.
import * as fs from "node:fs";

interface Steps {
  readonly begin: number;
  readonly cpuBegin: number;
  last: number;
  cpu: number;
  readonly steps: string[];
}

const starts = new Map<string, Steps>();
const enabled = () => process.env.AIEM_DEBUG_START_STEPS === "1";

function serviceCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Marks `step` of the start of sandbox `id` (its uid, which is its runtime id when cold), at `at`. */
export function startStep(id: string, step: string, at = performance.now()): void {
  if (!enabled()) return;
  const cpu = serviceCpuMs();
  let entry = starts.get(id);
  if (!entry) {
    // Starts that never end here (a warm sandbox's, one that failed) are dropped, oldest first.
    if (starts.size >= 256) starts.delete(starts.keys().next().value!);
    entry = { begin: at, cpuBegin: cpu, last: at, cpu, steps: [] };
    starts.set(id, entry);
  }
  entry.steps.push(`${step} +${(at - entry.last).toFixed(1)} (cpu ${(cpu - entry.cpu).toFixed(1)})`);
  entry.last = at;
  entry.cpu = cpu;
}

/** Notes the CPU time and run-queue wait so far of processes (`mainOnly`: their first thread). */
export function startStepCpu(id: string, label: string, pids: readonly number[], mainOnly = false): void {
  const entry = enabled() ? starts.get(id) : undefined;
  if (!entry) return;
  let run = 0;
  let wait = 0;
  for (const pid of pids) {
    let tasks: string[] = [];
    try {
      tasks = mainOnly ? [String(pid)] : fs.readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        const [ran, waited] = fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ").map(Number);
        run += ran ?? 0;
        wait += waited ?? 0;
      } catch {
        // ended meanwhile
      }
    }
  }
  entry.steps.push(`[${label}: cpu ${(run / 1e6).toFixed(1)} wait ${(wait / 1e6).toFixed(1)}]`);
}

/** Ends the record of a start with `step`, and writes it. */
export function startStepsEnd(id: string, step: string): void {
  if (!enabled()) return;
  startStep(id, step);
  const entry = starts.get(id)!;
  starts.delete(id);
  const total = `total ${(entry.last - entry.begin).toFixed(1)} ms, service cpu ${(entry.cpu - entry.cpuBegin).toFixed(1)}`;
  process.stderr.write(`start-steps ${id} ${total}: ${entry.steps.join(", ")}\n`);
}
