// The product as separate processes (`start-service.ts <part>`) on PostgreSQL and NATS: the
// catalogue, engine and sandbox parts and an edge in front, on free ports, in a schema and
// stream prefix of their own. The multi-process test and `npm run load` start it.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { PARTS } from "../host/parts.js";
import { freePort } from "./free-port.js";

const entry = new URL("../start-service.ts", import.meta.url).pathname;

export interface StartedPart {
  readonly name: string;
  readonly child: ChildProcess;
  readonly url: string;
}

export interface Layout {
  readonly edgeUrl: string;
  readonly dataDir: string;
  readonly policyFile: string;
  /** The service parts, then the edge. */
  readonly parts: StartedPart[];
  /** Stops every part still running with SIGTERM and removes the data directory. */
  stop(): Promise<void>;
}

export interface LayoutOptions {
  readonly policy: string;
  /** Added to every part's environment. */
  readonly env?: Record<string, string>;
  readonly startTimeoutMs?: number;
}

// Starts one part (on a free port unless `env` names one) and resolves with its URL once it logs "ready".
export function startPart(name: string, env: Record<string, string>, timeoutMs = 60_000): Promise<StartedPart> {
  const child = spawn(process.execPath, ["--import", "tsx", entry, name], {
    env: { ...process.env, AIEM_PORT: "0", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  return new Promise((resolve, reject) => {
    const lines: string[] = [];
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${lines.join("\n")}`)), timeoutMs);
    child.once("exit", (code) => reject(new Error(`${name} exited with ${code}:\n${lines.join("\n")}`)));
    createInterface({ input: child.stderr! }).on("line", (line) => {
      if (lines.length < 200) lines.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === "ready" && entry.url) {
          clearTimeout(timer);
          resolve({ name, child, url: entry.url });
        }
      } catch {
        // not a log line
      }
    });
  });
}

function stopPart({ child }: StartedPart): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

export async function startLayout(options: LayoutOptions): Promise<Layout> {
  const dataDir = await mkdtemp(join(tmpdir(), "aiem-layout-"));
  const policyFile = join(dataDir, "policy.yaml");
  await writeFile(policyFile, options.policy);
  const suffix = randomBytes(4).toString("hex");
  // Every part builds the URLs it hands out on the edge's address, as a deployment sets it.
  const edgePort = await freePort();
  const env = {
    AIEM_PUBLIC_URL: `http://127.0.0.1:${edgePort}`,
    AIEM_DATA_DIR: dataDir,
    AIEM_DB_SCHEMA_SUFFIX: `_m${suffix}`,
    AIEM_EVENTS_PREFIX: `m${suffix}`,
    AIEM_POLICY_FILE: policyFile,
    AIEM_INTERNAL_KEY: randomBytes(32).toString("base64"),
    // stop() ends the parts with SIGTERM; their sandboxes must not outlive the layout.
    AIEM_SANDBOX_STOP_WITH_SERVICE: "true",
    ...options.env,
  };
  const parts: StartedPart[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(parts.map(stopPart));
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    // The sandbox reaches the catalogue (for secret values) where the edge does.
    const catalogue = await startPart("catalogue", env, options.startTimeoutMs);
    parts.push(catalogue);
    const others = await Promise.all(
      PARTS.filter((p) => p !== "catalogue").map((part) => startPart(part, { ...env, AIEM_CATALOGUE_URL: catalogue.url }, options.startTimeoutMs)),
    );
    parts.push(...others);
    const remotes = Object.fromEntries(parts.map((p) => [`AIEM_${p.name.toUpperCase()}_URL`, p.url]));
    const edge = await startPart("edge", { ...env, ...remotes, AIEM_PORT: String(edgePort) }, options.startTimeoutMs);
    parts.push(edge);
    return { edgeUrl: edge.url, dataDir, policyFile, parts, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
