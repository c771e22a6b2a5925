import { afterEach, describe, expect, it, vi } from "vitest";
import { startStep, startStepCpu, startStepsEnd } from "./start-steps.js";

describe("start steps", () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  function written(work: () => void): string {
    const lines: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    work();
    return lines.join("");
  }

  it("writes one line per start with each step's time and this process's CPU", () => {
    vi.stubEnv("AIEM_DEBUG_START_STEPS", "1");
    const out = written(() => {
      startStep("sandbox-a", "handler", 100);
      startStep("sandbox-a", "launch", 104.5);
      startStepCpu("sandbox-a", "this process", [process.pid]);
      startStepsEnd("sandbox-a", "running");
    });
    expect(out).toMatch(
      /^start-steps sandbox-a total [\d.]+ ms, service cpu [\d.]+: handler \+0\.0 \(cpu 0\.0\), launch \+4\.5 \(cpu [\d.]+\), \[this process: cpu [\d.]+ wait [\d.]+\], running \+[\d.]+ \(cpu [\d.]+\)\n$/,
    );
    // The record is gone once written: a later start of the same id begins afresh.
    expect(written(() => startStepsEnd("sandbox-a", "again"))).toMatch(/^start-steps sandbox-a total 0\.0 ms/);
  });

  it("does nothing unless AIEM_DEBUG_START_STEPS=1", () => {
    vi.stubEnv("AIEM_DEBUG_START_STEPS", "");
    const out = written(() => {
      startStep("sandbox-b", "handler");
      startStepsEnd("sandbox-b", "running");
    });
    expect(out).toBe("");
  });
});
