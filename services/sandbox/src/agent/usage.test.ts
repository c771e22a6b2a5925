import * as os from "node:os";
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { parseProcStat, parseRssBytes, processTree, readUsage } from "./usage.js";

describe("agent usage", () => {
  it("parses /proc/<pid>/stat, command names with spaces and parentheses included", () => {
    const line =
      "4242 (my (odd) prog) S 7 4242 4242 0 -1 4194560 100 0 0 0 25 5 3 2 20 0 1 0 12345 1000000 300 18446744073709551615";
    expect(parseProcStat(line)).toEqual({ pid: 4242, ppid: 7, ticks: 35 });
    expect(parseProcStat("garbage")).toBeUndefined();
  });

  it("reads VmRSS in bytes, and 0 where there is none", () => {
    expect(parseRssBytes("Name:\tx\nVmRSS:\t    2048 kB\nThreads:\t1\n")).toBe(2048 * 1024);
    expect(parseRssBytes("Name:\tkthreadd\n")).toBe(0);
  });

  it("finds a process and everything below it, and nothing else", () => {
    const tree = processTree(
      [
        { pid: 1, ppid: 0, ticks: 0 },
        { pid: 10, ppid: 1, ticks: 0 },
        { pid: 11, ppid: 10, ticks: 0 },
        { pid: 12, ppid: 11, ticks: 0 },
        { pid: 20, ppid: 1, ticks: 0 },
      ],
      10,
    );
    expect([...tree].sort()).toEqual([10, 11, 12]);
  });

  it("measures this process's tree and the filesystem of a directory", async () => {
    const child = spawn("sh", ["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"], { stdio: "ignore" });
    try {
      await new Promise((r) => setTimeout(r, 300));
      const usage = readUsage(os.tmpdir());
      expect(usage.memoryBytes).toBeGreaterThan(10n << 20n);
      expect(usage.cpuNanos).toBeGreaterThan(0n);
      expect(usage.diskTotalBytes).toBeGreaterThan(0n);
      expect(usage.diskAvailableBytes).toBeLessThanOrEqual(usage.diskTotalBytes);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
