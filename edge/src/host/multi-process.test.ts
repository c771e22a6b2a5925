// The parts as separate processes (`npm run start:service -- <part>`), sharing only PostgreSQL,
// NATS and their APIs, pass the same smoke test as the all-in-one server. Needs DATABASE_URL
// and NATS_URL, as separate processes cannot share the embedded database or bus.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOrCreateSigningKey, mintEmbeddedToken } from "@aiem/kit/identity";
import { smokeTest } from "../testing/smoke.js";
import { landedParts } from "./modules.js";
import { PARTS } from "./parts.js";

const real = Boolean(process.env["DATABASE_URL"] && process.env["NATS_URL"]);
const entry = new URL("../start-service.ts", import.meta.url).pathname;

interface Started {
  child: ChildProcess;
  url: string;
}

// Starts one part on a free port and resolves with its URL once it logs "ready".
function startPart(part: string, env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, ["--import", "tsx", entry, part], {
    env: { ...process.env, ...env, AIEM_PORT: "0" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  return new Promise((resolve, reject) => {
    const lines: string[] = [];
    const timer = setTimeout(() => reject(new Error(`${part} did not start:\n${lines.join("\n")}`)), 60_000);
    child.once("exit", (code) => reject(new Error(`${part} exited with ${code}:\n${lines.join("\n")}`)));
    createInterface({ input: child.stderr! }).on("line", (line) => {
      lines.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === "ready" && entry.url) {
          clearTimeout(timer);
          resolve({ child, url: entry.url });
        }
      } catch {
        // not a log line
      }
    });
  });
}

describe.skipIf(!real)("separate processes against PostgreSQL and NATS", () => {
  const started: Started[] = [];
  let dataDir: string;
  let edgeUrl: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "aiem-multi-"));
    const suffix = randomBytes(4).toString("hex");
    const env = { AIEM_DATA_DIR: dataDir, AIEM_DB_SCHEMA_SUFFIX: `_m${suffix}`, AIEM_EVENTS_PREFIX: `m${suffix}` };
    const parts = await Promise.all(PARTS.map((part) => startPart(part, env)));
    started.push(...parts);
    const remotes = Object.fromEntries(PARTS.map((part, i) => [`AIEM_${part.toUpperCase()}_URL`, parts[i]!.url]));
    const edge = await startPart("edge", { ...env, ...remotes });
    started.push(edge);
    edgeUrl = edge.url;
  }, 120_000);

  afterAll(async () => {
    await Promise.all(
      started.map(({ child }) => new Promise<void>((resolve) => (child.once("exit", () => resolve()), child.kill("SIGTERM")))),
    );
    await rm(dataDir, { recursive: true, force: true });
  });

  it("passes the smoke test through the edge", async () => {
    const token = await mintEmbeddedToken(await loadOrCreateSigningKey(dataDir), { user: "root", admin: true });
    await smokeTest(edgeUrl, token, landedParts);
  });

  it("stops each process gracefully on SIGTERM", async () => {
    const last = started.pop()!;
    const code = await new Promise<number | null>((resolve) => {
      last.child.once("exit", (c) => resolve(c));
      last.child.kill("SIGTERM");
    });
    expect(code).toBe(0);
  });
});
