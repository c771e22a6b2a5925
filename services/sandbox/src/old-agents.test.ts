// Removing the published agents that no process runs: a real executable run from the directory
// stays, old unused ones go, recent ones and other files stay.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { removeUnusedAgents } from "./old-agents.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("removeUnusedAgents", () => {
  it("removes old agents no process runs, and keeps the one running, recent ones and other files", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-old-agents-"));
    dirs.push(dir);
    const sleepBin = ["/bin/sleep", "/usr/bin/sleep"].find((p) => fs.existsSync(p))!;
    const file = (name: string, ageMs: number) => {
      const p = path.join(dir, name);
      fs.copyFileSync(sleepBin, p);
      fs.chmodSync(p, 0o555);
      const at = new Date(Date.now() - ageMs);
      fs.utimesSync(p, at, at);
      return p;
    };
    const hour = 3_600_000;
    const running = file("native-aiem-agent-aaaa", hour);
    file("native-aiem-agent-bbbb", hour);
    file("native-aiem-agent-cccc", 1_000);
    file(".native-aiem-agent-dddd.123.456", hour);
    file("false", hour);
    const child = spawn(running, ["60"], { stdio: "ignore" });
    try {
      await new Promise<void>((resolve, reject) => child.once("spawn", resolve).once("error", reject));
      const removed = await removeUnusedAgents(dir, 10 * 60_000);
      expect(removed.sort()).toEqual([".native-aiem-agent-dddd.123.456", "native-aiem-agent-bbbb"]);
      expect(fs.readdirSync(dir).sort()).toEqual(["false", "native-aiem-agent-aaaa", "native-aiem-agent-cccc"]);
    } finally {
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
    }
    // Once nothing runs it, the old one goes too.
    expect(await removeUnusedAgents(dir, 10 * 60_000)).toEqual(["native-aiem-agent-aaaa"]);
  });

  it("removes nothing from a directory that is not there", async () => {
    expect(await removeUnusedAgents(path.join(os.tmpdir(), "aiem-no-such-dir-here"))).toEqual([]);
  });
});
