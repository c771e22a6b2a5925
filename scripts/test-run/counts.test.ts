import { describe, expect, it } from "vitest";
import { addCounts, closingLine, countGoTest, countUnittest, countVitest } from "./counts.js";

describe("test counts", () => {
  it("reads go test -v's result lines, subtests included", () => {
    const output = [
      "--- PASS: TestA (0.01s)",
      "    --- PASS: TestA/sub (0.00s)",
      "--- FAIL: TestB (0.02s)",
      "--- SKIP: TestC (0.00s)",
      "ok  	x	0.1s",
    ].join("\n");
    expect(countGoTest(output)).toEqual({ passed: 2, failed: 1, skipped: 1 });
    expect(countGoTest("no tests here")).toBeUndefined();
  });

  it("reads vitest's JSON report, a file that could not load counting as a failure", () => {
    expect(
      countVitest(JSON.stringify({ numPassedTests: 10, numFailedTests: 2, numPendingTests: 3, numTodoTests: 1 })),
    ).toEqual({
      passed: 10,
      failed: 2,
      skipped: 4,
    });
    expect(countVitest(JSON.stringify({ numPassedTests: 5, numFailedTests: 0, numFailedTestSuites: 1 }))).toEqual({
      passed: 5,
      failed: 1,
      skipped: 0,
    });
  });

  it("reads unittest's closing lines", () => {
    expect(countUnittest("....s\n------\nRan 136 tests in 33.023s\n\nOK (skipped=1)\n")).toEqual({
      passed: 135,
      failed: 0,
      skipped: 1,
    });
    expect(countUnittest("Ran 3 tests in 1.0s\n\nOK\n")).toEqual({ passed: 3, failed: 0, skipped: 0 });
    expect(countUnittest("Ran 10 tests in 2s\n\nFAILED (failures=1, errors=2, skipped=3)\n")).toEqual({
      passed: 4,
      failed: 3,
      skipped: 3,
    });
  });

  it("finds no counts in output without unittest's closing lines", () => {
    expect(
      countUnittest("Traceback (most recent call last):\nModuleNotFoundError: No module named 'yaml'\n"),
    ).toBeUndefined();
    expect(countUnittest("Ran 3 tests in 1s\n")).toBeUndefined();
  });

  it("ends on the plain closing line CI reads", () => {
    const total = addCounts({ passed: 3, failed: 0, skipped: 1 }, { passed: 2, failed: 1, skipped: 0 });
    expect(closingLine(total)).toBe("tests: 5 passed, 1 failed, 1 skipped");
    expect(closingLine(total)).toMatch(/^(\w+: )?\d+ passed, \d+ failed(, \d+ skipped)?$/);
  });
});
