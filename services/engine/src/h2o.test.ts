// H2O engines on real H2O-3 (the jar of the `h2o` package that `npm run setup` installs, run by
// Java 17): a 2-node engine created through the REST API forms one cloud, the `h2o` Python package
// connects to it through the edge with the caller's credentials, imports a CSV and trains a GLM;
// its logs are H2O's; terminating and deleting it leaves no JVM. A node whose JVM is killed makes
// the engine FAILED, naming the node, and a runtime started over the same directory adopts a
// running cluster. Where Java or the jar is missing, creating an engine fails naming what is
// missing (tested everywhere); the rest is skipped, saying why.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RestJson } from "@aiem/kit/testing";
import { silentLogger } from "@aiem/kit/logger";
import { defaultH2OJar } from "./runtime/h2o-server.js";
import { createLocalRuntime, findOnPath } from "./runtime/local-runtime.js";
import { catalogueFixture, startEngineTestHost, type EngineTestHost } from "./testing/index.js";

const REPOSITORY = fileURLToPath(new URL("../../../", import.meta.url));
const PYTHON = path.join(REPOSITORY, ".venv", "bin", "python");
const MiB = 1024 * 1024;
const java = await findOnPath("java");
const jar = defaultH2OJar();
const missing = [
  !java && "java (Debian package openjdk-17-jre-headless)",
  !existsSync(jar) && `${jar} (npm run setup)`,
  !existsSync(PYTHON) && `${PYTHON} (npm run setup)`,
].filter(Boolean);
if (missing.length > 0) console.warn(`h2o.test.ts: real H2O-3 tests skipped, missing ${missing.join(", ")}`);

const PROFILE = "workspaces/global/h2oEngineProfiles/small";
const VERSION = "workspaces/global/h2oEngineVersions/3.46.0";

async function catalogue(h: EngineTestHost): Promise<void> {
  await catalogueFixture(h, "h2oEngineProfiles", "small", {
    displayName: "small",
    enabled: true,
    cpuConstraint: { min: "1", max: "2", default: "1" },
    gpuConstraint: { min: "0", max: "0", default: "0" },
    memoryBytesConstraint: { min: String(256 * MiB), max: String(4096 * MiB), default: String(512 * MiB) },
    nodeCountConstraint: { min: "1", max: "2", default: "1" },
    maxIdleDurationConstraint: { min: "0s", max: "86400s", default: "3600s" },
    maxRunningDurationConstraint: { min: "0s", max: "86400s", default: "3600s" },
    // Small heaps on a small machine: one GC thread, and a JIT that spends less time starting.
    javaOptions: "-XX:+UseSerialGC -XX:TieredStopAtLevel=1",
  });
  await catalogueFixture(h, "h2oEngineVersions", "3.46.0", { image: "h2oai/h2o-open-source-k8s:3.46.0.12" });
}

/** Whether `pid` runs: a killed node whose parent is gone may stay a zombie until init reaps it. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
  } catch {
    return false;
  }
}

function python(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // The h2o package can send usage telemetry; it is off unless opted into, and DO_NOT_TRACK
    // keeps it off whatever a config file on the machine says.
    const env = { ...process.env, DO_NOT_TRACK: "1" };
    execFile(PYTHON, args, { encoding: "utf8", timeout: 90_000, env }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

interface NodeRecord {
  readonly index: number;
  readonly pid: number;
  readonly port: number;
}

const nodesOf = (h: EngineTestHost, uid: string): NodeRecord[] =>
  JSON.parse(readFileSync(path.join(h.runtime.inner.engineDir(uid), "nodes.json"), "utf8")) as NodeRecord[];

// What both scripts start with: the h2o package, and requests' way to send our bearer token.
const PREAMBLE = `
import json, sys
import requests
import h2o

class Bearer(requests.auth.AuthBase):
    def __init__(self, token):
        self.token = token
    def __call__(self, request):
        request.headers["Authorization"] = "Bearer " + self.token
        return request
`;

// The \`h2o\` package through the edge: connect with a bearer token, count the nodes, upload a CSV
// made here (y depends on x1 and x2, with noise), train a binomial GLM and report its AUC.
const CLIENT_SCRIPT = `${PREAMBLE}
import random, tempfile
from h2o.estimators import H2OGeneralizedLinearEstimator

url, token = sys.argv[1], sys.argv[2]
h2o.connect(url=url, auth=Bearer(token), verbose=False, telemetry=False)
nodes = h2o.cluster().cloud_size
rng = random.Random(7)
with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    f.write("x1,x2,y\\n")
    for _ in range(500):
        x1, x2 = rng.gauss(0, 1), rng.gauss(0, 1)
        f.write(f"{x1:.4f},{x2:.4f},{int(x1 + 2 * x2 + rng.gauss(0, 0.5) > 0)}\\n")
frame = h2o.upload_file(f.name)
frame["y"] = frame["y"].asfactor()
glm = H2OGeneralizedLinearEstimator(family="binomial")
glm.train(x=["x1", "x2"], y="y", training_frame=frame)
print("RESULT " + json.dumps({"nodes": nodes, "rows": frame.nrows, "auc": glm.auc(), "version": h2o.cluster().version}), flush=True)
`;

// The official client's way: H2OEngine.get_connection_config() (the engine's name as context path,
// on the edge's host and the port given) with our bearer token added, then h2o.connect(config=).
// It reaches the same cluster: the frame uploaded above is there.
const OFFICIAL_SCRIPT = `${PREAMBLE}
import types
from h2o_engine_manager.clients.h2o_engine.h2o_engine import H2OEngine
from h2o_engine_manager.clients.h2o_engine.state import H2OEngineState

name, login_url, port, token = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
engine = H2OEngine(node_count=2, cpu=1, gpu=0, memory_bytes="0", annotations={}, max_idle_duration="0s",
                   max_running_duration="0s", display_name="", name=name, state=H2OEngineState.STATE_RUNNING,
                   login_url=login_url, client_info=types.SimpleNamespace(ssl_ca_cert=None))
config = engine.get_connection_config(https=False, port=port)
config["auth"] = Bearer(token)
h2o.connect(config=config, verbose=False, telemetry=False)
print("RESULT " + json.dumps({"context_path": config["context_path"], "nodes": h2o.cluster().cloud_size, "frames": len(h2o.ls())}), flush=True)
`;

const resultOf = (stdout: string): RestJson => {
  // h2o prints its own lines too (it closes the connection at exit).
  const line = stdout.split("\n").find((l) => l.startsWith("RESULT ")) ?? "";
  return JSON.parse(line.slice("RESULT ".length));
};

describe("H2O engines without what they need", () => {
  let h: EngineTestHost;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "aiem-h2o-missing-"));
    writeFileSync(path.join(dir, "placeholder.jar"), "not a server");
    h = await startEngineTestHost({
      settings: {
        h2oServer: "h2o-3",
        javaCommand: path.join(dir, "no-java"),
        h2oJar: path.join(dir, "placeholder.jar"),
      },
    });
    await catalogue(h);
  });
  afterAll(async () => {
    await h?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("fail with a reason that names the missing java", async () => {
    const name = "workspaces/team-a/h2oEngines/nojava";
    const r = await h.rest("POST", "/v1/workspaces/team-a/h2oEngines?h2oEngineId=nojava", {
      who: "alice",
      body: { profile: PROFILE, h2oEngineVersion: VERSION },
    });
    expect(r.status, r.text).toBe(200);
    const e = await h.waitForState(name, "STATE_FAILED");
    expect(e.failureMessage).toContain("H2O engines need Java");
    expect(e.failureMessage).toContain(path.join(dir, "no-java"));
  });
});

describe("H2O engines without the server jar", () => {
  it("fail with a reason that names the jar that is not the server", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "aiem-h2o-nojar-"));
    const placeholder = path.join(dir, "placeholder.jar");
    writeFileSync(placeholder, "not a server");
    const runtime = createLocalRuntime({
      root: path.join(dir, "engines"),
      h2o: { kind: "h2o-3", java: process.execPath, jar: placeholder },
      startTimeoutMs: 5_000,
      stopTimeoutMs: 1_000,
      logger: silentLogger,
    });
    try {
      const uid = "00000000-0000-4000-8000-000000000016";
      await runtime.start({
        uid,
        kind: "h2o",
        name: "workspaces/team-a/h2oEngines/nojar",
        version: "3.46.0",
        image: "",
        cpu: 1,
        gpu: 0,
        memoryBytes: BigInt(512 * MiB),
        storageBytes: 0n,
        nodeCount: 1,
        basePath: `/engines/${uid}/`,
        config: {},
        options: {},
      });
      const status = await runtime.inspect(uid);
      expect(status.phase).toBe("exited");
      expect(status.exit?.message).toContain(`${placeholder} is not the H2O-3 server jar`);
      await runtime.remove(uid);
    } finally {
      await runtime.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(missing.length > 0)("an H2O engine on real H2O-3", () => {
  let h: EngineTestHost;
  beforeAll(async () => {
    h = await startEngineTestHost({
      settings: { h2oServer: "h2o-3", h2oJar: jar, startTimeoutMs: 120_000, stopTimeoutMs: 10_000 },
    });
    await catalogue(h);
  });
  afterAll(async () => h?.stop());

  /** An engine of alice's with `nodeCount` nodes of `heapMiB` each, once RUNNING. */
  async function runningCluster(id: string, heapMiB: number, nodeCount = 2): Promise<{ name: string; e: RestJson }> {
    const name = `workspaces/team-a/h2oEngines/${id}`;
    const created = await h.rest("POST", `/v1/workspaces/team-a/h2oEngines?h2oEngineId=${id}`, {
      who: "alice",
      body: { profile: PROFILE, h2oEngineVersion: VERSION, nodeCount, cpu: 1, memoryBytes: String(heapMiB * MiB) },
    });
    expect(created.status, created.text).toBe(200);
    return { name, e: await h.waitForState(name, "STATE_RUNNING", 120_000) };
  }

  it("forms a 2-node cloud that h2o.connect reaches through the edge, trains a GLM, and leaves no JVM", {
    timeout: 150_000,
  }, async () => {
    const { name, e } = await runningCluster("glm", 512);
    expect(e.apiUrl).toBe(`${h.url}/${name}`);
    const nodes = nodesOf(h, e.uid);
    expect(nodes).toHaveLength(2);

    // Creator-only: no credentials, or another member's, do not reach the cluster.
    expect((await fetch(`${e.apiUrl}/3/Cloud`)).status).toBe(401);
    expect(
      (await fetch(`${e.apiUrl}/3/Cloud`, { headers: { authorization: `Bearer ${await h.token("bob")}` } })).status,
    ).toBe(404);

    // Asynchronously: the edge that serves the client runs in this process.
    const run = await python(["-c", CLIENT_SCRIPT, e.apiUrl, await h.token("alice")]);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    const result = resultOf(run.stdout) as { nodes: number; rows: number; auc: number; version: string };
    expect(result.nodes).toBe(2);
    expect(result.rows).toBe(500);
    expect(result.version).toBe("3.46.0.12");
    // y follows x1 + 2 x2 closely: any model that learned something scores far above chance.
    expect(result.auc).toBeGreaterThan(0.9);

    // The login URL opens H2O Flow, H2O-3's web UI, under the same engine path.
    const alice = { authorization: `Bearer ${await h.token("alice")}` };
    expect(e.loginUrl).toBe(`${h.url}/${name}/flow/index.html`);
    const flow = await fetch(e.loginUrl, { headers: alice });
    expect(flow.status).toBe(200);
    expect(flow.headers.get("content-type")).toContain("text/html");

    const official = await python([
      "-c",
      OFFICIAL_SCRIPT,
      name,
      e.loginUrl,
      new URL(h.url).port,
      await h.token("alice"),
    ]);
    expect(official.code, `${official.stdout}\n${official.stderr}`).toBe(0);
    expect(resultOf(official.stdout)).toMatchObject({ context_path: name, nodes: 2 });
    expect(resultOf(official.stdout).frames).toBeGreaterThanOrEqual(1);
    // By name too, only the creator gets through.
    expect((await fetch(`${h.url}/${name}/3/Cloud`)).status).toBe(401);
    expect(
      (await fetch(`${h.url}/${name}/3/Cloud`, { headers: { authorization: `Bearer ${await h.token("bob")}` } }))
        .status,
    ).toBe(404);

    const logs = await h.rest("POST", `/v1/${name}:downloadLogs`, { who: "alice", body: {} });
    expect(logs.status, logs.text).toBe(200);
    const text = Buffer.from(logs.body.logs.data, "base64").toString();
    for (const node of nodes) expect(text).toContain(`127.0.0.1:${node.port}`);
    expect(text).toContain("water.default");

    // H2O engines do not pause: they terminate (spec), and stay terminated.
    expect((await h.rest("POST", `/v1/${name}:terminate`, { who: "alice", body: {} })).status).toBe(200);
    await h.waitForState(name, "STATE_TERMINATED", 30_000);
    for (const node of nodes) expect(alive(node.pid), `node ${node.index}`).toBe(false);

    expect((await h.rest("DELETE", `/v1/${name}`, { who: "alice" })).status).toBe(200);
    await h.waitForGone(name, 30_000);
    expect(existsSync(h.runtime.inner.engineDir(e.uid))).toBe(false);
    for (const node of nodes) expect(alive(node.pid), `node ${node.index}`).toBe(false);
  });

  it("is adopted by a new runtime, and reports a killed node as FAILED within the check interval", {
    timeout: 150_000,
  }, async () => {
    const { name, e } = await runningCluster("kill", 256);
    const nodes = nodesOf(h, e.uid);

    // What a restarted engine service does: a runtime over the same directory finds the cluster.
    const again = createLocalRuntime({
      root: path.join(h.dataDir, "engines"),
      h2o: { kind: "h2o-3", java: java!, jar },
      startTimeoutMs: 60_000,
      stopTimeoutMs: 10_000,
      logger: silentLogger,
    });
    try {
      expect((await again.inspect(e.uid)).phase).toBe("ready");
    } finally {
      await again.close();
    }

    const killedAt = Date.now();
    process.kill(nodes[1]!.pid, "SIGKILL");
    const failed = await h.waitForState(name, "STATE_FAILED", 2 * 2_000);
    const elapsed = Date.now() - killedAt;
    expect(failed.failureMessage).toContain(`H2O node 1 (pid ${nodes[1]!.pid}`);
    expect(failed.failureMessage).toContain("SIGKILL");
    console.log(`h2o.test.ts: a killed node was reported after ${elapsed} ms (check interval 2000 ms)`);
    for (const node of nodes) expect(alive(node.pid), `node ${node.index}`).toBe(false);
  });

  it("ends the nodes of a cluster whose own process was killed outright, and fails the engine", {
    timeout: 150_000,
  }, async () => {
    const { name, e } = await runningCluster("orphan", 256, 1);
    const nodes = nodesOf(h, e.uid);
    const supervisor = await h.runtime.inner.pid(e.uid);
    expect(supervisor).toBeDefined();
    process.kill(supervisor!, "SIGKILL");
    const failed = await h.waitForState(name, "STATE_FAILED", 10_000);
    expect(failed.failureMessage).toContain("SIGKILL");
    // The runtime kills the nodes once the end is recorded; a JVM takes a moment to go.
    const until = Date.now() + 10_000;
    while (nodes.some((n) => alive(n.pid)) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    for (const node of nodes) expect(alive(node.pid), `node ${node.index}`).toBe(false);
  });
});
