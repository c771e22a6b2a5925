// A crashed engine service loses nothing (issue 6, part 7): the catalogue and engine parts run in
// a process of their own; engines are created (some then paused or deleted right away) and the
// process is killed with SIGKILL while they start. A new process on the same database (and, on
// PGlite, the same data directory) picks up where the old one stopped: every engine reaches the
// state it was asked for, with exactly one process each, and none left for the others.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { sql } from "kysely";
import { afterAll, expect, it } from "vitest";
import { createTestEventBus } from "@aiem/kit/events/testing";
import { loadOrCreateSigningKey, mintEmbeddedToken } from "@aiem/kit/identity";
import { createTestDatabase, type RestJson } from "@aiem/kit/testing";
import { killEngineProcesses } from "./runtime/local-runtime.js";
import { TEST_POLICY } from "./testing/index.js";

const CHILD = fileURLToPath(new URL("./testing/child-host.ts", import.meta.url));
const suffix = randomBytes(4).toString("hex");
let dataDir = "";
let child: ChildProcess | undefined;

afterAll(async () => {
  child?.kill("SIGKILL");
  if (dataDir) {
    await killEngineProcesses(path.join(dataDir, "engines"));
    await rm(dataDir, { recursive: true, force: true });
  }
  if (process.env.DATABASE_URL) {
    const admin = await createTestDatabase("engine_restart_cleanup");
    for (const schema of [`catalogue_r${suffix}`, `engine_r${suffix}`])
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
    await admin.destroy();
  }
  if (process.env.NATS_URL) await (await createTestEventBus("restart", { prefix: `t_r${suffix}` })).destroy();
});

function startChild(env: Record<string, string>): Promise<{ process: ChildProcess; url: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ["--import", "tsx", CHILD], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error(`the child host did not start: ${err}`)), 60_000);
    p.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) {
        clearTimeout(timer);
        resolve({ process: p, url: (JSON.parse(line) as { url: string }).url });
      }
    });
    p.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    p.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the child host exited with ${code}: ${err}`));
    });
  });
}

/** The pids of processes whose command line names the engine's directory. */
async function enginePids(engineDir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8");
      const stat = await readFile(`/proc/${entry}/stat`, "utf8");
      if (cmdline.includes(engineDir) && stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z")
        pids.push(Number(entry));
    } catch {}
  }
  return pids;
}

it("resumes every engine's intent after the service is killed mid-start", { timeout: 180_000 }, async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), "aiem-restart-"));
  const policyFile = path.join(dataDir, "policy.yaml");
  await writeFile(policyFile, TEST_POLICY);
  const env: Record<string, string> = {
    AIEM_DATA_DIR: dataDir,
    AIEM_PORT: "0",
    AIEM_POLICY_FILE: policyFile,
    AIEM_SEED_DEMO: "true",
    AIEM_JUPYTER_COMMAND: "none",
    AIEM_H2O_SERVER: "stand-in",
    AIEM_ENGINE_RECONCILE_INTERVAL_MS: "100",
    AIEM_ENGINE_CHECK_INTERVAL_MS: "300",
    AIEM_DB_SCHEMA_SUFFIX: `_r${suffix}`,
    AIEM_EVENTS_PREFIX: `t_r${suffix}`,
  };
  const first = await startChild(env);
  child = first.process;
  const key = await loadOrCreateSigningKey(dataDir);
  const token = await mintEmbeddedToken(key, { user: "alice" });
  const call = async (url: string, method: string, p: string, body?: unknown) => {
    const res = await fetch(`${url}${p}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json().catch(() => undefined)) as RestJson };
  };
  const bodies = {
    daiEngines: {
      profile: "workspaces/global/daiEngineProfiles/default",
      daiEngineVersion: "workspaces/global/daiEngineVersions/latest",
    },
    h2oEngines: {
      profile: "workspaces/global/h2oEngineProfiles/default",
      h2oEngineVersion: "workspaces/global/h2oEngineVersions/latest",
    },
    notebookEngines: {
      profile: "workspaces/global/notebookEngineProfiles/default",
      notebookImage: "workspaces/global/notebookEngineImages/default",
    },
  } as const;
  const idParam = {
    daiEngines: "daiEngineId",
    h2oEngines: "h2oEngineId",
    notebookEngines: "notebookEngineId",
  } as const;
  // The demo catalogue reaches the engine service through the event stream: wait for it.
  const until = Date.now() + 30_000;
  for (;;) {
    const probe = await call(
      first.url,
      "POST",
      "/v1/workspaces/team-a/notebookEngines?notebookEngineId=probe&validateOnly=true",
      bodies.notebookEngines,
    );
    if (probe.status === 200) break;
    if (Date.now() > until) throw new Error(`the demo catalogue did not arrive: ${JSON.stringify(probe.body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }

  const plan: Array<{ collection: keyof typeof bodies; id: string; intent: "run" | "pause" | "delete" }> = [];
  for (let i = 0; i < 6; i++)
    plan.push({ collection: "daiEngines", id: `dai-${i}`, intent: i === 4 ? "pause" : i === 5 ? "delete" : "run" });
  for (let i = 0; i < 4; i++)
    plan.push({ collection: "h2oEngines", id: `h2o-${i}`, intent: i === 3 ? "delete" : "run" });
  for (let i = 0; i < 4; i++)
    plan.push({ collection: "notebookEngines", id: `nb-${i}`, intent: i === 3 ? "pause" : "run" });
  const uids = new Map<string, string>();
  await Promise.all(
    plan.map(async (e) => {
      const r = await call(
        first.url,
        "POST",
        `/v1/workspaces/team-a/${e.collection}?${idParam[e.collection]}=${e.id}`,
        bodies[e.collection],
      );
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      uids.set(e.id, (Object.values(r.body)[0] as { uid: string }).uid);
      const name = `workspaces/team-a/${e.collection}/${e.id}`;
      if (e.intent === "pause") expect((await call(first.url, "POST", `/v1/${name}:pause`, {})).status).toBe(200);
      if (e.intent === "delete") expect((await call(first.url, "DELETE", `/v1/${name}`)).status).toBe(200);
    }),
  );
  // Killed while engines are still starting: no chance to clean up or record anything more.
  const before = await call(first.url, "GET", "/v1/workspaces/team-a/engines?pageSize=100");
  const unsettled = (before.body.engines as Array<{ reconciling: boolean }>).filter((e) => e.reconciling).length;
  first.process.kill("SIGKILL");
  await new Promise((r) => first.process.once("exit", r));
  expect(unsettled).toBeGreaterThan(0);

  const second = await startChild(env);
  child = second.process;
  const deadline = Date.now() + 90_000;
  const wanted = (intent: string) =>
    intent === "run" ? "STATE_RUNNING" : intent === "pause" ? "STATE_PAUSED" : undefined;
  for (;;) {
    const states = await Promise.all(
      plan.map(async (e) => {
        const r = await call(second.url, "GET", `/v1/workspaces/team-a/${e.collection}/${e.id}`);
        return r.status === 404
          ? undefined
          : (Object.values(r.body)[0] as { state: string; reconciling: boolean }).state;
      }),
    );
    if (plan.every((e, i) => states[i] === wanted(e.intent))) break;
    if (Date.now() > deadline)
      throw new Error(
        `engines did not reach their states: ${JSON.stringify(plan.map((e, i) => [e.id, e.intent, states[i]]))}`,
      );
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const e of plan) {
    const pids = await enginePids(path.join(dataDir, "engines", uids.get(e.id)!));
    expect(pids.length, `${e.id} (${e.intent}) has processes ${pids.join(",")}`).toBe(e.intent === "run" ? 1 : 0);
  }
  // The restarted service serves the running engines' URLs.
  const dai = await call(second.url, "GET", "/v1/workspaces/team-a/daiEngines/dai-0");
  const page = await fetch(dai.body.daiEngine.loginUrl.replace(/^http:\/\/[^/]+/, second.url), {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(page.status).toBe(200);
  second.process.kill("SIGTERM");
  await new Promise((r) => second.process.once("exit", r));
  child = undefined;
});
