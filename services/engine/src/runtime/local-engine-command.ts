// The command line and environment an engine process starts with on this machine.
import { stat, mkdir } from "node:fs/promises";
import path from "node:path";
import { H2O_CLUSTER, STAND_IN_SERVER } from "./engine-programs.js";
import { findOnPath, freePort, writeAtomic } from "./host-process.js";
import type { LocalRuntimeOptions } from "./local-runtime-options.js";
import type { EngineRunSpec } from "./runtime.js";

/** A file smaller than this is not the H2O-3 server jar (h2o-client ships a placeholder of a few hundred bytes). */
const MIN_H2O_JAR_BYTES = 10 * 1024 * 1024;

export interface EngineCommand {
  readonly cmd: string;
  readonly args: string[];
  readonly env: NodeJS.ProcessEnv;
  /** What serves the engine: `jupyter`, `h2o-3` or `stand-in` (its health path follows from it). */
  readonly server: string;
}

/** Java and the H2O-3 jar, or an error that names what is missing and the setting that points at it. */
async function h2oPrerequisites(h2o: { java: string; jar: string }): Promise<{ java: string; jar: string }> {
  const java = await findOnPath(h2o.java);
  if (!java) {
    throw new Error(
      `H2O engines need Java, and ${JSON.stringify(h2o.java)} is not an executable (install Java 17, e.g. the Debian package openjdk-17-jre-headless, or set AIEM_JAVA)`,
    );
  }
  let size: number;
  try {
    size = (await stat(h2o.jar)).size;
  } catch {
    throw new Error(
      `H2O engines need the H2O-3 server jar, and there is none at ${h2o.jar} (run npm run setup, which installs the h2o package, or set AIEM_H2O_JAR)`,
    );
  }
  if (size < MIN_H2O_JAR_BYTES) {
    throw new Error(
      `${h2o.jar} is not the H2O-3 server jar (${size} bytes; the h2o-client package ships a placeholder there): install the h2o package or set AIEM_H2O_JAR`,
    );
  }
  return { java, jar: h2o.jar };
}

/** The engine's environment: the service's own, less every setting of the engine service itself. */
function engineEnv(spec: EngineRunSpec, dir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    AIEM_ENGINE_DIR: dir,
    AIEM_ENGINE_UID: spec.uid,
    AIEM_ENGINE_KIND: spec.kind,
    AIEM_ENGINE_BASE_PATH: spec.basePath,
  };
  for (const key of Object.keys(env)) if (key.startsWith("AIEM_") && !key.startsWith("AIEM_ENGINE_")) delete env[key];
  delete env.DATABASE_URL;
  delete env.NATS_URL;
  delete env.NODE_OPTIONS;
  return env;
}

async function jupyterCommand(
  jupyter: string,
  spec: EngineRunSpec,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<EngineCommand> {
  const port = await freePort();
  await writeAtomic(path.join(dir, "port"), String(port));
  const home = path.join(dir, "home");
  await mkdir(home, { recursive: true });
  const args = [
    "--no-browser",
    "--ip=127.0.0.1",
    `--port=${port}`,
    "--port-retries=0",
    `--NotebookApp.base_url=${spec.basePath}`,
    "--NotebookApp.token=",
    "--NotebookApp.password=",
    // The edge authenticates and forwards the browser's Host; Jupyter must accept it.
    "--NotebookApp.allow_remote_access=True",
    `--notebook-dir=${path.join(dir, "data")}`,
  ];
  if (process.getuid?.() === 0) args.push("--allow-root");
  Object.assign(env, {
    HOME: home,
    JUPYTER_RUNTIME_DIR: path.join(dir, "runtime"),
    PYDEVD_DISABLE_FILE_VALIDATION: "1",
  });
  return { cmd: jupyter, args, env, server: "jupyter" };
}

/** What starts the engine of `spec` in `dir`; throws, naming what is missing, when this machine lacks it. */
export async function engineCommand(
  options: LocalRuntimeOptions,
  spec: EngineRunSpec,
  dir: string,
): Promise<EngineCommand> {
  const env = engineEnv(spec, dir);
  if (spec.kind === "notebook" && options.jupyterCommand) {
    return jupyterCommand(options.jupyterCommand, spec, dir, env);
  }
  if (spec.kind === "h2o" && options.h2o.kind === "h2o-3") {
    const { java, jar } = await h2oPrerequisites(options.h2o);
    Object.assign(env, { AIEM_ENGINE_JAVA: java, AIEM_ENGINE_H2O_JAR: jar });
    return { cmd: process.execPath, args: [H2O_CLUSTER, `--engine-dir=${dir}`], env, server: "h2o-3" };
  }
  // `--engine-dir` is not read by the server; it puts the directory in the command line so
  // that adoption can tell this process from one that merely reuses its pid.
  return { cmd: process.execPath, args: [STAND_IN_SERVER, `--engine-dir=${dir}`], env, server: "stand-in" };
}
