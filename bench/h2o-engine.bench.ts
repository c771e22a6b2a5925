// H2O engine start benchmark (issue 16).
//   npx tsx bench/h2o-engine.bench.ts [--runs 5]
//
// Create to RUNNING of a 1-node H2O engine on real H2O-3, through the REST edge of the real host
// (PGlite, or PostgreSQL when DATABASE_URL is set), as a client sees it: from sending the create
// until a GET shows STATE_RUNNING (polled every 50 ms). The baseline, measured in the same run
// and alternating with it so both see the same machine: `java -jar` of the same jar with the
// same heap, JVM options and a flat file naming itself (as the engine's node has; without one,
// H2O waits for peers by multicast before it forms a cloud), from spawning it until its
// `/3/Cloud` answers a healthy cloud of 1 in consensus (polled every 50 ms). Goal: median ratio
// <= 1.2.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { defaultH2OJar } from "../services/engine/src/runtime/h2o-server.js";
import { catalogueFixture, startEngineTestHost } from "../services/engine/src/testing/index.js";

const { values: args } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const RUNS = Number(args.runs);
const HEAP_MIB = 512;
const JAVA_OPTIONS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"];
const jar = process.env.AIEM_H2O_JAR ?? defaultH2OJar();
const java = process.env.AIEM_JAVA ?? "java";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function bareStart(): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), "aiem-h2o-bare-"));
  const port = await freePort();
  const flatfile = path.join(dir, "flatfile");
  writeFileSync(flatfile, `127.0.0.1:${port}\n`);
  const t0 = performance.now();
  const child = spawn(
    java,
    [
      `-Xmx${HEAP_MIB}m`,
      ...JAVA_OPTIONS,
      "-jar",
      jar,
      "-name",
      `bare-${port}`,
      "-flatfile",
      flatfile,
      "-ip",
      "127.0.0.1",
      "-port",
      String(port),
      "-context_path",
      "/bench",
      "-ice_root",
      dir,
      "-log_dir",
      dir,
      "-nthreads",
      "1",
    ],
    { stdio: "ignore" },
  );
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`java -jar ended with ${child.exitCode}`);
      try {
        const c = (await (await fetch(`http://127.0.0.1:${port}/bench/3/Cloud`)).json()) as {
          cloud_size: number;
          cloud_healthy: boolean;
          consensus: boolean;
        };
        if (c.cloud_size === 1 && c.cloud_healthy && c.consensus) return performance.now() - t0;
      } catch {}
      await sleep(50);
    }
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once("exit", r)));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const stack = process.env.DATABASE_URL ? "PostgreSQL" : "PGlite";
  const h = await startEngineTestHost({
    settings: { h2oServer: "h2o-3", h2oJar: jar, javaCommand: java, startTimeoutMs: 120_000, stopTimeoutMs: 10_000 },
  });
  try {
    await catalogueFixture(h, "h2oEngineProfiles", "bench", {
      enabled: true,
      memoryBytesConstraint: { min: String(256 * 1024 * 1024), default: String(HEAP_MIB * 1024 * 1024) },
      nodeCountConstraint: { min: "1", max: "1", default: "1" },
      cpuConstraint: { min: "1", default: "1" },
      javaOptions: JAVA_OPTIONS.join(" "),
    });
    await catalogueFixture(h, "h2oEngineVersions", "3.46.0", { image: "h2oai/h2o-open-source-k8s:3.46.0.12" });
    const body = {
      profile: "workspaces/global/h2oEngineProfiles/bench",
      h2oEngineVersion: "workspaces/global/h2oEngineVersions/3.46.0",
    };
    const headers = { authorization: `Bearer ${await h.token("alice")}`, "content-type": "application/json" };
    const engineStart = async (id: string): Promise<number> => {
      const name = `workspaces/team-a/h2oEngines/${id}`;
      const t0 = performance.now();
      const res = await fetch(`${h.url}/v1/workspaces/team-a/h2oEngines?h2oEngineId=${id}`, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
      });
      if (res.status !== 200) throw new Error(`create ${id}: ${res.status} ${await res.text()}`);
      for (;;) {
        const e = (
          (await (await fetch(`${h.url}/v1/${name}`, { headers })).json()) as {
            h2oEngine: { state: string; failureMessage: string };
          }
        ).h2oEngine;
        if (e.state === "STATE_RUNNING") break;
        if (e.state === "STATE_FAILED") throw new Error(`${id} failed: ${e.failureMessage}`);
        await sleep(50);
      }
      const took = performance.now() - t0;
      await fetch(`${h.url}/v1/${name}`, { method: "DELETE", headers });
      await h.waitForGone(name, 60_000);
      return took;
    };

    // One of each first, untimed: the JVM's and the host's first runs read the jar from disk.
    await bareStart();
    await engineStart("warm");
    const bare: number[] = [];
    const ours: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      bare.push(await bareStart());
      ours.push(await engineStart(`run-${i}`));
    }
    const b = median(bare);
    const o = median(ours);
    console.log(
      `bare java -jar to a healthy cloud of 1 (${RUNS} runs): median ${b.toFixed(0)} ms [${bare.map((x) => x.toFixed(0)).join(", ")}]`,
    );
    console.log(
      `[${stack}] create to RUNNING, 1-node H2O engine (${RUNS} runs): median ${o.toFixed(0)} ms [${ours.map((x) => x.toFixed(0)).join(", ")}]`,
    );
    console.log(`ratio engine / bare java -jar: ${(o / b).toFixed(2)}x (goal <= 1.2x)`);
  } finally {
    await h.stop();
  }
}

await main();
