// `npm run stop -- --all` on both stacks: `npm start` (a process of its own, on port 0) runs a
// sandbox and a stand-in DAI engine; the stop command refuses while it runs; stopped, it says
// what keeps running; then the command ends both, and none of their processes is left.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createInterface } from "node:readline";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { runningEngines } from "@aiem/engine";
import { createTestEventBus, waitFor } from "@aiem/kit/events/testing";
import { loadOrCreateSigningKey, mintEmbeddedToken } from "@aiem/kit/identity";
import { createTestDatabase, type RestJson, TEST_POLICY } from "@aiem/kit/testing";
import { destroyLeftSandboxes, runningSandboxes } from "@aiem/sandbox/runtime";

const MAIN = new URL("./main.ts", import.meta.url).pathname;
const STOP = new URL("./stop.ts", import.meta.url).pathname;
const real = Boolean(process.env.DATABASE_URL && process.env.NATS_URL);
// Sandboxes outlive the service only when confined (bubblewrap, as root).
const confined = process.getuid?.() === 0 && fs.existsSync("/usr/bin/bwrap");
const suffix = randomBytes(4).toString("hex");

const children: ChildProcess[] = [];
const dataDirs: string[] = [];

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of dataDirs) {
    await destroyLeftSandboxes(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  if (real) {
    const admin = await createTestDatabase("stop_cleanup");
    for (const service of ["catalogue", "engine", "sandbox"])
      await sql`drop schema if exists ${sql.id(`${service}_s${suffix}`)} cascade`.execute(admin.db);
    await admin.destroy();
    await (await createTestEventBus("stop_cleanup", { prefix: `s${suffix}` })).destroy();
  }
});

function environment(dataDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("AIEM_") && k !== "DATABASE_URL" && k !== "NATS_URL") env[k] = v;
  }
  const policyFile = path.join(dataDir, "policy.yaml");
  fs.writeFileSync(policyFile, TEST_POLICY);
  return {
    ...env,
    AIEM_DATA_DIR: dataDir,
    AIEM_PORT: "0",
    AIEM_POLICY_FILE: policyFile,
    AIEM_SANDBOX_WARM_POOL: "0",
    AIEM_JUPYTER_COMMAND: "none",
    AIEM_H2O_SERVER: "stand-in",
    ...(real
      ? {
          DATABASE_URL: process.env.DATABASE_URL!,
          NATS_URL: process.env.NATS_URL!,
          AIEM_DB_SCHEMA_SUFFIX: `_s${suffix}`,
          AIEM_EVENTS_PREFIX: `s${suffix}`,
        }
      : {}),
  };
}

/** `npm start`; resolves with its URL once it listens, and every line it prints to stdout. */
async function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; url: string; out: string[] }> {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN], { env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const out: string[] = [];
  const errors: string[] = [];
  createInterface({ input: child.stderr! }).on("line", (line) => errors.push(line));
  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the server exited (${code}):\n${errors.join("\n")}`)));
    createInterface({ input: child.stdout! }).on("line", (line) => {
      out.push(line);
      const m = /^\s+API \(REST \/v1.*: (http:\/\/\S+)\/v1$/.exec(line);
      if (m) resolve(m[1]!);
    });
  });
  return { child, url, out };
}

function runStop(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", STOP, "--all"], { env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d) => (stdout += d));
  child.stderr!.on("data", (d) => (stderr += d));
  return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
}

/** Whether the process runs (a zombie nobody reaped yet has ended). */
const alive = (pid: number) => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return !["Z", "X"].includes(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]!);
  } catch {
    return false;
  }
};

describe.skipIf(!confined)(`npm run stop -- --all (${real ? "PostgreSQL and NATS" : "embedded defaults"})`, () => {
  it("refuses while the server runs, then ends what the stopped server left running", {
    timeout: 180_000,
  }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-stop-"));
    dataDirs.push(dataDir);
    const env = environment(dataDir);
    const server = await startServer(env);
    const token = await mintEmbeddedToken(await loadOrCreateSigningKey(dataDir), { user: "alice" });
    const call = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(`${server.url}${p}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as RestJson };
    };

    const sandbox = await call("POST", "/v1/workspaces/team-a/sandboxEngines?sandboxEngineId=kept", {
      sandboxEngineImage: "workspaces/global/sandboxEngineImages/default",
      sandboxEngineTemplate: "workspaces/global/sandboxEngineTemplates/default",
    });
    expect(sandbox.status, JSON.stringify(sandbox.body)).toBe(200);
    const engine = await call("POST", "/v1/workspaces/team-a/daiEngines?daiEngineId=kept", {
      profile: "workspaces/global/daiEngineProfiles/default",
      daiEngineVersion: "workspaces/global/daiEngineVersions/1.11.0",
    });
    expect(engine.status, JSON.stringify(engine.body)).toBe(200);
    const state = async (name: string, kind: "sandboxEngine" | "daiEngine") =>
      (await call("GET", `/v1/${name}`)).body[kind]?.state;
    await waitFor(
      async () => (await state(sandbox.body.sandboxEngine.name, "sandboxEngine")) === "STATE_RUNNING",
      60_000,
      "the sandbox to run",
    );
    await waitFor(
      async () => (await state(engine.body.daiEngine.name, "daiEngine")) === "STATE_RUNNING",
      60_000,
      "the engine to run",
    );

    const refused = await runStop(env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/a server is running on .* in use by process \d+\. Stop it first/);
    expect([runningSandboxes(dataDir).length, (await runningEngines(path.join(dataDir, "engines"))).length]).toEqual([
      1, 1,
    ]);

    const exited = new Promise((r) => server.child.once("exit", r));
    server.child.kill("SIGINT");
    await exited;
    expect(server.out).toContain(
      "1 sandbox and 1 engine keep running for the next start; to end them: npm run stop -- --all (with the same AIEM_DATA_DIR)",
    );
    const [sandboxId] = runningSandboxes(dataDir);
    const record = JSON.parse(fs.readFileSync(path.join(dataDir, "sandboxes", sandboxId!, "sandbox.json"), "utf8"));
    const enginePid = Number(
      fs.readFileSync(path.join(dataDir, "engines", engine.body.daiEngine.uid as string, "pid"), "utf8"),
    );
    const pids = [record.pid as number, record.agent.pid as number, enginePid];
    expect(pids.map(alive)).toEqual([true, true, true]);

    const stopped = await runStop(env);
    expect(stopped.stderr).toBe("");
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toBe(`stopped 1 sandbox and 1 engine of ${dataDir}\n`);
    expect(pids.map(alive)).toEqual([false, false, false]);
    expect(runningSandboxes(dataDir)).toEqual([]);
    expect(await runningEngines(path.join(dataDir, "engines"))).toEqual([]);
    // Their files stay: a later start finds them ended, not gone.
    expect(fs.existsSync(path.join(dataDir, "sandboxes", sandboxId!, "root"))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, "engines", engine.body.daiEngine.uid as string))).toBe(true);
    // Nothing else is left to stop.
    expect((await runStop(env)).stdout).toBe(`stopped 0 sandboxes and 0 engines of ${dataDir}\n`);
  });
});
