import * as fs from "node:fs";
import * as path from "node:path";
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
