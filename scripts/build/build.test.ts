// The production build, checked as the Dockerfile's runtime stage uses it: `npm run build`'s
// output with `npm ci --omit=dev` run in it (production dependencies only), the sandbox files
// built ahead of time from it, then the compiled server started with plain node and used: health,
// the smoke test of every part, a sandbox running a process, /metrics. With PostgreSQL and NATS,
// the compiled parts also run as processes of their own behind a compiled edge.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import type { RestJson } from "@aiem/kit/testing";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOrCreateSigningKey, mintEmbeddedToken } from "@aiem/kit/identity";
import { destroyLeftSandboxes } from "@aiem/sandbox/runtime";
import { createCluster, type Cluster } from "../../edge/src/distributed/cluster.js";
import { landedParts } from "../../edge/src/host/modules.js";
import { freePort } from "../../edge/src/testing/free-port.js";
import { smokeTest } from "../../edge/src/testing/smoke.js";
import { build } from "./main.js";

const work = mkdtempSync(join(tmpdir(), "aiem-build-"));
// Sandboxes run as other users, which must pass through to their directories and the cache.
chmodSync(work, 0o711);
const out = join(work, "app");
const cache = join(work, "agent-cache");

function rssMiB(pid: number): number {
  const kib = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
  return Math.round(kib / 1024);
}

beforeAll(() => {
  build(out);
  // The runtime stage's steps.
  execFileSync("npm", ["ci", "--omit=dev", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd: out,
    stdio: "inherit",
  });
  execFileSync(process.execPath, [join(out, "services/sandbox/src/runtime/prepare-cli.js"), cache], {
    stdio: "inherit",
  });
}, 600_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

it("holds compiled JavaScript and production dependencies only", () => {
  expect(existsSync(join(out, "edge/src/main.js"))).toBe(true);
  expect(existsSync(join(out, "services/kit/src/server/index.js"))).toBe(true);
  expect(existsSync(join(out, "web/dist/routes.json"))).toBe(true);
  // No TypeScript runner, compiler or test framework came along.
  for (const dev of ["tsx", "typescript", "vitest", "@biomejs/biome", "autocannon"])
    expect(existsSync(join(out, "node_modules", dev)), dev).toBe(false);
  // The workspace packages point at compiled code.
  const kit = JSON.parse(readFileSync(join(out, "services/kit/package.json"), "utf8")) as {
    exports: Record<string, string>;
  };
  expect(Object.values(kit.exports).every((target) => target.endsWith(".js"))).toBe(true);
});

describe("the compiled all-in-one server", () => {
  let child: ChildProcess;
  let url: string;
  let metricsUrl: string;
  let token: string;
  const dataDir = join(work, "data");
  const log: string[] = [];

  beforeAll(async () => {
    const suffix = randomBytes(4).toString("hex");
    metricsUrl = `http://127.0.0.1:${await freePort()}/metrics`;
    token = await mintEmbeddedToken(await loadOrCreateSigningKey(dataDir), { user: "root", admin: true });
    child = spawn(process.execPath, [join(out, "edge/src/main.js")], {
      cwd: out,
      env: {
        ...process.env,
        AIEM_PORT: "0",
        AIEM_DATA_DIR: dataDir,
        AIEM_METRICS_PORT: new URL(metricsUrl).port,
        AIEM_SANDBOX_AGENT_CACHE: cache,
        AIEM_SANDBOX_WARM_POOL: "0",
        AIEM_SANDBOX_STOP_WITH_SERVICE: "true",
        AIEM_JUPYTER_COMMAND: "none",
        AIEM_PATH_URLS: "true",
        AIEM_DB_SCHEMA_SUFFIX: `_b${suffix}`,
        AIEM_EVENTS_PREFIX: `b${suffix}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    createInterface({ input: child.stderr! }).on("line", (line) => log.push(line));
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`did not start:\n${log.join("\n")}`)), 120_000);
      child.once("exit", (code) => reject(new Error(`exited with ${code}:\n${log.join("\n")}`)));
      createInterface({ input: child.stdout! }).on("line", (line) => {
        const found = /API \(REST[^:]*:\s+(http:\/\/\S+)\/v1/.exec(line);
        if (found) {
          clearTimeout(timer);
          resolve(found[1]!);
        }
      });
    });
    console.log(`build: the compiled all-in-one server holds ${rssMiB(child.pid!)} MiB at start`);
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const ended = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await ended;
    }
    await destroyLeftSandboxes(dataDir);
  });

  it("passes the smoke test of every part and serves /metrics", async () => {
    await smokeTest(url, token, landedParts);
    const metrics = await (await fetch(metricsUrl)).text();
    expect(metrics).toMatch(/aiem_rpc_requests_total\{[^}]*code="ok"/);
  });

  it("runs a sandbox's process with the agent files built ahead of time", async () => {
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const json = (await res.json()) as RestJson;
      expect(res.status, JSON.stringify(json)).toBe(200);
      return json;
    };
    const name = (
      await call("POST", "/v1/workspaces/default/sandboxEngines?sandboxEngineId=built", {
        sandboxEngineImage: "workspaces/global/sandboxEngineImages/default",
        sandboxEngineTemplate: "workspaces/global/sandboxEngineTemplates/default",
      })
    ).sandboxEngine.name as string;
    for (const until = Date.now() + 100_000; ; ) {
      const sandbox = (await call("GET", `/v1/${name}`)).sandboxEngine;
      const state = sandbox.state as string;
      if (state === "STATE_RUNNING") break;
      expect(
        state !== "STATE_FAILED" && Date.now() < until,
        `${state}: ${sandbox.failureReason ?? ""}\n${log.slice(-20).join("\n")}`,
      ).toBe(true);
      await new Promise((r) => setTimeout(r, 200));
    }
    await call("POST", `/v1/${name}/filesystem:writeFile`, {
      path: "/tmp/built.txt",
      content: Buffer.from("compiled\n").toString("base64"),
      createParentDirectories: true,
    });
    const read = await call("GET", `/v1/${name}/filesystem:readFile?path=${encodeURIComponent("/tmp/built.txt")}`);
    expect(Buffer.from(read.content as string, "base64").toString()).toBe("compiled\n");
    // Nothing was compiled at run time: every file the sandbox needed came from the cache.
    expect(existsSync(join(dataDir, "agent-cache"))).toBe(false);
  }, 120_000);
});

const real = Boolean(process.env.DATABASE_URL && process.env.NATS_URL);
describe.skipIf(!real)("the compiled parts in processes of their own", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await createCluster({
      replicas: 1,
      databaseUrl: process.env.DATABASE_URL!,
      natsUrl: process.env.NATS_URL!,
      policy: "admins: [users/root]\n",
      compiled: out,
      env: { AIEM_JUPYTER_COMMAND: "none", AIEM_SANDBOX_AGENT_CACHE: cache },
    });
    for (const r of [...cluster.replicas, cluster.edge])
      console.log(`build: the compiled ${r.name} holds ${rssMiB(r.child!.pid!)} MiB at start`);
  }, 180_000);
  afterAll(() => cluster?.close());

  it("pass the smoke test through the compiled edge, and each serves /metrics", async () => {
    await smokeTest(cluster.edge.url, await cluster.token("root", true), landedParts);
    for (const r of [...cluster.replicas, cluster.edge]) {
      const res = await fetch(r.metricsUrl);
      expect(res.status, r.name).toBe(200);
      expect(await res.text(), r.name).toContain(`process="${r.part === "edge" ? "edge" : r.part}"`);
    }
  });
});
