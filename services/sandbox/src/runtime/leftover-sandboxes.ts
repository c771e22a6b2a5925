import * as fs from "node:fs";
import * as path from "node:path";
import { processStartTime, type SandboxRecord } from "./adopted-sandboxes.js";
import { createLocalSandboxRuntime } from "./local-runtime.js";

/**
 * Ends and removes every sandbox a local runtime left under `dataDir`. A service stopped normally
 * keeps its sandboxes running for its next start; whoever removes the data directory for good (a
 * test, the cluster launcher, an operator retiring a replica) ends them first, or they run on
 * without it.
 */
export async function destroyLeftSandboxes(dataDir: string): Promise<void> {
  let ids: string[];
  try {
    ids = await fs.promises.readdir(path.join(dataDir, "sandboxes"));
  } catch {
    return;
  }
  const runtime = createLocalSandboxRuntime({ dataDir, keepRunning: true });
  for (const id of ids) await runtime.destroy(id).catch(() => undefined);
  await runtime.close({ stopSandboxes: true });
}

/** The ids of the sandboxes under `dataDir` whose recorded process still runs. */
export function runningSandboxes(dataDir: string): string[] {
  let ids: string[];
  try {
    ids = fs.readdirSync(path.join(dataDir, "sandboxes"));
  } catch {
    return [];
  }
  return ids.filter((id) => {
    try {
      const record = JSON.parse(
        fs.readFileSync(path.join(dataDir, "sandboxes", id, "sandbox.json"), "utf8"),
      ) as SandboxRecord;
      return processStartTime(record.pid) === record.startTime;
    } catch {
      return false;
    }
  });
}

/**
 * Stops every sandbox a local runtime left running under `dataDir`, keeping its files (a later
 * start of the service finds its agent ended); returns the ids it stopped. For `npm run stop`,
 * while no sandbox service holds the directory.
 */
export async function stopLeftSandboxes(dataDir: string): Promise<string[]> {
  const ids = runningSandboxes(dataDir);
  const runtime = createLocalSandboxRuntime({ dataDir, keepRunning: true });
  try {
    for (const id of ids) await runtime.stop(id);
  } finally {
    await runtime.close({ stopSandboxes: true });
  }
  return ids;
}
