import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type SpawnedProcess, createLauncherSpawner } from "./spawner.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-spawner-test-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const options = (name: string) => ({
  env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
  cwd: dir,
  detached: false,
  logPath: path.join(dir, name),
});
const exited = (p: SpawnedProcess) =>
  new Promise<[number | null, string | null]>((r) => p.once("exit", (code, signal) => r([code, signal])));
const ready = (p: SpawnedProcess) => new Promise<void>((r) => p.once("ready", () => r()));

describe("launcher spawner", () => {
  it("kills what a closed launcher started, and nothing its successor started", async () => {
    const spawner = createLauncherSpawner();
    const old = spawner.spawn("sh", ["-c", "echo ready; sleep 30"], options("old.log"));
    await ready(old);
    const oldExit = exited(old);
    spawner.close();
    // Started at once, while the closed launcher may still be on its way out.
    const next = spawner.spawn("sh", ["-c", "echo ready; sleep 1; exit 7"], options("next.log"));
    const nextExit = exited(next);
    expect((await oldExit)[1]).toBe("SIGKILL");
    const first = await Promise.race([
      ready(next).then(() => "ready"),
      nextExit.then((e) => `exited ${JSON.stringify(e)}`),
    ]);
    expect(first).toBe("ready");
    expect(await nextExit).toEqual([7, null]);
    spawner.close();
  });
});
