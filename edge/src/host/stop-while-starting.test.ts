// A SIGTERM can come while a part is still starting (a cluster stopping a replica it just
// started). The stop must undo the whole start, including what the start goes on to open.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { readCommonEnv, readPublicUrl } from "@aiem/kit/config";
import { createTestEventBus } from "@aiem/kit/events/testing";
import { silentLogger } from "@aiem/kit/logger";
import type { ServiceModule } from "@aiem/kit/server";
import { createHost, type ModuleFactory } from "./create-host.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

it("stops everything a start did when the stop comes while it starts, and opens no server", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "aiem-stop-starting-"));
  dirs.push(dataDir);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const seen: string[] = [];
  const slow = (name: "catalogue" | "engine"): ModuleFactory => ({
    name,
    create: (): ServiceModule => ({
      name,
      services: [],
      register() {},
      start: async () => {
        seen.push(`${name} start`);
        if (name === "catalogue") await gate;
      },
      stop: async () => {
        seen.push(`${name} stop`);
      },
      isReady: () => true,
    }),
  });
  const env = { AIEM_PORT: "0", AIEM_DATA_DIR: dataDir };
  const host = await createHost({
    bus: await createTestEventBus(`stopstart${Date.now().toString(36)}`),
    config: readCommonEnv(env),
    edge: { corsOrigins: "*", bodyLimitBytes: 1 << 20, publicUrl: readPublicUrl(env) },
    modules: [slow("catalogue"), slow("engine")],
    logger: silentLogger,
  });
  const started = host.start();
  await expect.poll(() => seen).toEqual(["catalogue start"]);
  const stopped = host.stop();
  release();
  await started;
  await stopped;
  // The engine module, after the stop came, never started; both created modules were stopped.
  expect(seen).toEqual(["catalogue start", "engine stop", "catalogue stop"]);
  expect(host.url).toBe("");
});
