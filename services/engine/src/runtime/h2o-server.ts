// Where the H2O-3 server comes from: the jar of the `h2o` package (the Python package index
// distribution carries it) that `npm run setup` installs into the repository's `.venv`, unless
// AIEM_H2O_JAR names another, and the java on the PATH unless AIEM_JAVA names another.
import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { EngineSettings } from "../config.js";
import type { H2OServer } from "./local-runtime.js";

const REPOSITORY = fileURLToPath(new URL("../../../../", import.meta.url));

/** The jar in `.venv/lib/python3.*\/site-packages/h2o/backend/bin/`, whichever Python built the venv. */
export function defaultH2OJar(root = REPOSITORY): string {
  const lib = path.join(root, ".venv", "lib");
  let python = "python3.11";
  try {
    python = readdirSync(lib).find((name) => /^python3\.\d+$/.test(name)) ?? python;
  } catch {
    // No venv yet: the path is still named, so the failure says where the jar was looked for.
  }
  return path.join(lib, python, "site-packages", "h2o", "backend", "bin", "h2o.jar");
}

/** What the local runtime runs for H2O engines under these settings. */
export function h2oServerOf(settings: Pick<EngineSettings, "h2oServer" | "javaCommand" | "h2oJar">): H2OServer {
  if (settings.h2oServer === "stand-in") return { kind: "stand-in" };
  return { kind: "h2o-3", java: settings.javaCommand, jar: settings.h2oJar ?? defaultH2OJar() };
}
