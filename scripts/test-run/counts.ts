// How many tests each runner reports, so that `npm test` can end on one closing line that
// counts every suite (CI reads a run's closing line to tell whether it tested anything).

export interface TestCounts {
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
}

export const NO_TESTS: TestCounts = { passed: 0, failed: 0, skipped: 0 };

export function addCounts(a: TestCounts, b: TestCounts): TestCounts {
  return { passed: a.passed + b.passed, failed: a.failed + b.failed, skipped: a.skipped + b.skipped };
}

/** The closing line: "tests: N passed, N failed, N skipped". */
export function closingLine(counts: TestCounts): string {
  return `tests: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`;
}

interface VitestReport {
  numPassedTests?: number;
  numFailedTests?: number;
  numPendingTests?: number;
  numTodoTests?: number;
  numTotalTestSuites?: number;
  numFailedTestSuites?: number;
}

/** Counts from vitest's JSON reporter; a file that failed to load counts as one failure. */
export function countVitest(json: string): TestCounts {
  const report = JSON.parse(json) as VitestReport;
  const failed = report.numFailedTests ?? 0;
  return {
    passed: report.numPassedTests ?? 0,
    failed: failed === 0 && (report.numFailedTestSuites ?? 0) > 0 ? report.numFailedTestSuites! : failed,
    skipped: (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0),
  };
}

/**
 * Counts from unittest's closing lines ("Ran N tests in …", then "OK", "OK (skipped=1)" or
 * "FAILED (failures=1, errors=2, skipped=3)"). Undefined when the output has no such lines,
 * for example when the interpreter could not start.
 */
export function countUnittest(output: string): TestCounts | undefined {
  const ran = [...output.matchAll(/^Ran (\d+) tests? in /gm)].at(-1);
  if (!ran) return undefined;
  const verdict = /^(OK|FAILED)(?: \((.*)\))?\s*$/m.exec(output.slice(ran.index));
  if (!verdict) return undefined;
  const detail = new Map<string, number>();
  for (const part of (verdict[2] ?? "").split(",")) {
    const [key, value] = part.split("=");
    if (key && value) detail.set(key.trim(), Number(value));
  }
  const of = (key: string): number => detail.get(key) ?? 0;
  const failed = of("failures") + of("errors") + of("unexpected successes");
  const skipped = of("skipped") + of("expected failures");
  return { passed: Number(ran[1]) - failed - skipped, failed, skipped };
}

/** Counts from `go test -v`: one "--- PASS/FAIL/SKIP:" line per test and subtest. */
export function countGoTest(output: string): TestCounts | undefined {
  const count = (word: string) => (output.match(new RegExp(`^\\s*--- ${word}:`, "gm")) ?? []).length;
  const counts = { passed: count("PASS"), failed: count("FAIL"), skipped: count("SKIP") };
  return counts.passed + counts.failed + counts.skipped === 0 ? undefined : counts;
}
