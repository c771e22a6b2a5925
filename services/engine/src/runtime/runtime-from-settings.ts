// The runtime the engine settings name: Kubernetes, or processes on this machine under the data
// directory (which one engine service holds at a time).
import * as fs from "node:fs";
import path from "node:path";
import { acquireDirectoryLock, type DirectoryLock } from "@aiem/kit/db";
import type { Logger } from "@aiem/kit/logger";
import type { EngineSettings } from "../config.js";
import { h2oServerOf } from "./h2o-server.js";
import { createLocalRuntime, findOnPath } from "./local-runtime.js";
import type { EngineRuntime } from "./runtime.js";

export interface OpenedRuntime {
  readonly runtime: EngineRuntime;
  /** The lock on the local runtime's directory, released when the service stops. */
  readonly lock?: DirectoryLock;
}

export async function openRuntime(settings: EngineSettings, dataDir: string, logger: Logger): Promise<OpenedRuntime> {
  if (settings.runtime === "kubernetes") {
    // Loaded only for this runtime: the client and its dependencies cost every other process memory.
    const { KubeConfig } = await import("@kubernetes/client-node");
    const { createKubernetesRuntime } = await import("./kubernetes/kubernetes-runtime.js");
    const config = new KubeConfig();
    config.loadFromDefault();
    return {
      runtime: await createKubernetesRuntime({ config, namespace: settings.kubernetesNamespace ?? "default" }),
    };
  }
  // One engine service per directory: a second would be the same placement and adopt (or stop)
  // the first one's engines. It stops with a clear error instead.
  await fs.promises.mkdir(dataDir, { recursive: true });
  const lock = acquireDirectoryLock(path.join(dataDir, "engines"), "the engines of this directory");
  const jupyter =
    settings.jupyterCommand === "none" ? undefined : await findOnPath(settings.jupyterCommand ?? "jupyter-notebook");
  if (settings.jupyterCommand && settings.jupyterCommand !== "none" && !jupyter) {
    logger.warn("AIEM_JUPYTER_COMMAND is not an executable; notebook engines run the stand-in server", {
      command: settings.jupyterCommand,
    });
  }
  const runtime = createLocalRuntime({
    root: path.join(dataDir, "engines"),
    jupyterCommand: jupyter,
    h2o: h2oServerOf(settings),
    startTimeoutMs: settings.startTimeoutMs,
    stopTimeoutMs: settings.stopTimeoutMs,
    logger,
  });
  return { runtime, lock };
}
