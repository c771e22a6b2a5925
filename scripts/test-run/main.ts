// `npm test`: the setup step, the type check, the format and lint checks, then every suite in turn,
// stopping at the first that fails, and a closing line that counts the tests of all of them.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { findGo, GO_AGENT_SOURCE_DIR } from "../../services/sandbox/src/runtime/go-agent-build.js";
import {
  addCounts,
  closingLine,
  countGoTest,
  countUnittest,
  countVitest,
  NO_TESTS,
  type TestCounts,
} from "./counts.js";

const root = resolve(import.meta.dirname, "..", "..");

interface Step {
  readonly name: string;
  readonly command: readonly string[];
  /** The directory to run in; the repository's root when left out. */
  readonly cwd?: string;
  /** Counts of the step's tests from its output; steps that run no tests leave it out. */
  readonly count?: (output: string) => TestCounts | undefined;
}

// Runs a command with the terminal's output, keeping the tail of stderr (where unittest reports)
// and, for `go test -v`, every result line of stdout.
function run(command: readonly string[], cwd = root): Promise<{ code: number; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(command[0]!, command.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let tail = "";
    let results = "";
    let partial = "";
    child.stdout.on("data", (chunk: Buffer) => {
      process.stdout.write(chunk);
      const lines = (partial + chunk.toString("utf8")).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) if (/^\s*--- (PASS|FAIL|SKIP):/.test(line)) results += `${line}\n`;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      process.stderr.write(chunk);
      tail = (tail + chunk.toString("utf8")).slice(-65_536);
    });
    child.once("error", fail);
    child.once("close", (code, signal) => done({ code: code ?? (signal ? 128 : 1), stderr: `${results}${tail}` }));
  });
}

async function main(): Promise<number> {
  const reportDir = mkdtempSync(join(tmpdir(), "aiem-test-"));
  const vitestReport = join(reportDir, "vitest.json");
  const steps: Step[] = [
    { name: "setup", command: ["npm", "run", "-s", "setup"] },
    { name: "typecheck", command: ["npm", "run", "-s", "typecheck"] },
    { name: "format", command: ["npm", "run", "-s", "format:check"] },
    { name: "lint", command: ["npm", "run", "-s", "lint:check"] },
    {
      name: "vitest",
      command: ["npx", "vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${vitestReport}`],
      count: () => countVitest(readFileSync(vitestReport, "utf8")),
    },
    {
      // The native sandbox agent's own tests, with the race detector.
      name: "go-agent",
      command: [findGo() ?? "go", "test", "-race", "-count=1", "-v", "./..."],
      cwd: GO_AGENT_SOURCE_DIR,
      count: countGoTest,
    },
    // test:kubernetes runs the product on the test Kubernetes control plane; it skips where that
    // is not built, unless AIEM_REQUIRE_KUBERNETES says it must run (CI).
    ...["test:python", "test:official", "test:kubernetes", "test:openapi"].map((name) => ({
      name,
      command: ["npm", "run", "-s", name],
      count: countUnittest,
    })),
  ];
  let total = NO_TESTS;
  try {
    for (const step of steps) {
      const { code, stderr } = await run(step.command, step.cwd);
      let counts: TestCounts | undefined;
      try {
        counts = step.count?.(stderr);
      } catch {
        counts = undefined;
      }
      if (counts) total = addCounts(total, counts);
      if (code !== 0 || (step.count && !counts)) {
        // A step that failed without counting a failure (it did not start, or a file did not load)
        // still has to show in the closing line.
        if (!counts || counts.failed === 0) total = addCounts(total, { passed: 0, failed: 1, skipped: 0 });
        console.error(`npm test: ${step.name} failed (exit ${code})`);
        console.log(closingLine(total));
        return code === 0 ? 1 : code;
      }
    }
  } finally {
    rmSync(reportDir, { recursive: true, force: true });
  }
  console.log(closingLine(total));
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
