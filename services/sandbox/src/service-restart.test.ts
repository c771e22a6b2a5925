// The restart test of issue 14: the service, in a process of its own, runs three sandboxes whose
// processes print a counter every 100 ms; it is SIGKILLed and started again on the same data
// directory and database. Every counter line, from before, during and after the outage, is read
// exactly once and in order (a stream read before the kill, resumed from its offset after), and
// each process exits 0. Once with the all-in-one server on its embedded defaults (PGlite and the
// in-process bus), and once with the parts as separate processes on PostgreSQL and NATS, where
// the sandbox part alone is killed (skipped without DATABASE_URL and NATS_URL).
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createInterface } from "node:readline";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { createTestEventBus } from "@aiem/kit/events/testing";
import { loadOrCreateSigningKey, mintEmbeddedToken } from "@aiem/kit/identity";
import { createTestDatabase, type RestJson, TEST_POLICY } from "@aiem/kit/testing";
import { findBwrap } from "./runtime/bwrap.js";
import { detectLimitSupport, runtimeCgroupName } from "./runtime/limits.js";
import { destroyLeftSandboxes } from "./runtime/index.js";
import { readNdjson } from "./testing/index.js";

const MAIN = new URL("../../../edge/src/main.ts", import.meta.url).pathname;
const PART = new URL("../../../edge/src/start-service.ts", import.meta.url).pathname;
const real = Boolean(process.env.DATABASE_URL && process.env.NATS_URL);
const confined = Boolean(findBwrap()) && process.getuid?.() === 0;
/** Lines read from each counter before the service is killed. */
const LINES_BEFORE = 5;
/** Lines each counter prints once it is told to stop. */
const LINES_AT_END = 5;

interface Server {
  readonly child: ChildProcess;
  readonly url: string;
}

const children: ChildProcess[] = [];
const dataDirs: string[] = [];

afterAll(async () => {
  await Promise.all(
    children
      .filter((c) => c.exitCode === null && c.signalCode === null)
      .map(
        (c) =>
          new Promise((r) => {
            c.once("exit", r);
            c.kill("SIGTERM");
          }),
      ),
  );
  for (const dir of dataDirs) {
    await destroyLeftSandboxes(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** Starts the all-in-one server (no part) or one part; resolves with its URL once it listens. */
function startServer(env: Record<string, string>, part?: string): Promise<Server> {
  const child = spawn(process.execPath, ["--import", "tsx", part ? PART : MAIN, ...(part ? [part] : [])], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const lines: string[] = [];
    const timer = setTimeout(
      () => reject(new Error(`${part ?? "the server"} did not start:\n${lines.join("\n")}`)),
      90_000,
    );
    child.once("exit", (code, signal) =>
      reject(new Error(`${part ?? "the server"} exited (${signal ?? code}):\n${lines.join("\n")}`)),
    );
    const ready = (url: string) => {
      clearTimeout(timer);
      resolve({ child, url });
    };
    // The all-in-one server prints its API URL; a part logs "ready" with its URL.
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      const m = /^\s+API \(REST \/v1.*: (http:\/\/\S+)\/v1$/.exec(line);
      if (m) ready(m[1]!);
    });
    createInterface({ input: child.stderr! }).on("line", (line) => {
      lines.push(line);
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === "ready" && entry.url) ready(entry.url);
      } catch {
        // not a log line
      }
    });
  });
}

async function kill(server: Server): Promise<void> {
  const exited = new Promise((r) => server.child.once("exit", r));
  server.child.kill("SIGKILL");
  await exited;
}

/** Polls `check` until it answers, within a bounded time. */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Counter {
  readonly sandbox: string;
  readonly uid: string;
  readonly process: string;
  /** Every byte read so far, and the offset of the next one. */
  text: string;
  next: bigint;
}

/**
 * The scenario on a running service at `url()`: `outage` kills the service and starts it
 * again, and resolves once it has started.
 */
async function survivesRestart(dataDir: string, url: () => string, outage: () => Promise<void>): Promise<void> {
  const token = await mintEmbeddedToken(await loadOrCreateSigningKey(dataDir), { user: "alice" });
  const rest = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${url()}${p}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as RestJson };
  };
  const ok = async (method: string, p: string, body?: unknown) => {
    const r = await rest(method, p, body);
    if (r.status !== 200) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  /** Reads the counter's stream from where it was left until `enough` says stop (or the stream ends). */
  const follow = async (c: Counter, enough: (c: Counter) => boolean) => {
    const res = await fetch(`${url()}/v1/${c.process}:streamOutput?startOffset=${c.next}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    await readNdjson(res, (line) => {
      const r = line.result;
      if (!r || r.keepAlive) return false;
      // Each chunk starts where the last one ended: nothing is skipped, nothing read twice.
      expect(BigInt(r.offset)).toBe(c.next);
      const data = Buffer.from(r.data ?? "", "base64");
      c.text += data.toString();
      c.next += BigInt(data.length);
      return enough(c);
    });
  };
  const lines = (c: Counter) => c.text.split("\n").length - 1;

  // The catalogue's default image and template reach the sandbox service through the event stream.
  const spec = {
    sandboxEngineImage: "workspaces/global/sandboxEngineImages/default",
    sandboxEngineTemplate: "workspaces/global/sandboxEngineTemplates/default",
  };
  const counters: Counter[] = await Promise.all(
    ["counter-1", "counter-2", "counter-3"].map(async (id) => {
      const created = await until(`${id} to be created`, async () => {
        const r = await rest("POST", `/v1/workspaces/team-a/sandboxEngines?sandboxEngineId=${id}`, spec);
        return r.status === 200 ? r.body.sandboxEngine : undefined;
      });
      await until(`${id} to run`, async () =>
        (await ok("GET", `/v1/${created.name}`)).sandboxEngine.state === "STATE_RUNNING" ? true : undefined,
      );
      // Prints a counter every 100 ms until told to stop, then a few more lines, and exits 0.
      const script =
        "i=0; while [ ! -e /workspace/stop ]; do echo $i; i=$((i+1)); sleep 0.1; done; " +
        `j=0; while [ $j -lt ${LINES_AT_END} ]; do echo $i; i=$((i+1)); j=$((j+1)); sleep 0.1; done`;
      const p = (
        await ok("POST", `/v1/${created.name}/processes?autoRun=true`, { command: "sh", args: ["-c", script] })
      ).process;
      return { sandbox: created.name, uid: created.uid, process: p.name, text: "", next: 0n };
    }),
  );

  // Before: a few lines of each, through a stream, which is then left.
  await Promise.all(counters.map((c) => follow(c, (x) => lines(x) >= LINES_BEFORE)));
  const before = counters.map((c) => c.text.length);

  await outage();

  // The processes ran on: still running, with what they printed while the service was down.
  const atRestart = await Promise.all(
    counters.map(async (c) => {
      const p = await until(`${c.process} to answer`, async () => (await rest("GET", `/v1/${c.process}`)).body.process);
      expect([c.process, p.state]).toEqual([c.process, "STATE_RUNNING"]);
      return Buffer.from((await ok("GET", `/v1/${c.process}:readOutput`)).data, "base64").length;
    }),
  );
  // After: the streams resume where they were left; once each counter has printed past what it
  // had at the restart, it is told to stop, and its stream is read to its end.
  await Promise.all(counters.map((c, i) => follow(c, (x) => x.text.length > atRestart[i]!)));
  for (const c of counters)
    await ok("POST", `/v1/${c.sandbox}/filesystem:writeFile`, { path: "/workspace/stop", content: "" });
  await Promise.all(counters.map((c) => follow(c, () => false)));

  for (const [i, c] of counters.entries()) {
    const expected = Array.from({ length: lines(c) }, (_, n) => `${n}\n`).join("");
    expect([c.process, c.text]).toEqual([c.process, expected]);
    // Lines came from before the kill, from the outage (and the restart), and from after it.
    expect(before[i]).toBeLessThan(atRestart[i]!);
    expect(atRestart[i]).toBeLessThan(c.text.length);
    console.log(
      `${c.process}: ${lines(c)} lines; ${before[i]} bytes read before the kill, ${atRestart[i]} written at the restart, ${c.text.length} in all`,
    );
    const waited = (await ok("POST", `/v1/${c.process}:wait`, {})).process;
    expect([c.process, waited.state, waited.exitCode ?? 0]).toEqual([c.process, "STATE_SUCCEEDED", 0]);
    expect(Buffer.from((await ok("GET", `/v1/${c.process}:readOutput`)).data, "base64").toString()).toBe(expected);
  }

  // Deleting an adopted sandbox removes it from the host too: its files, and its cgroups, which
  // the kernel removes only once no process is left in them. The service is a child of this
  // process, so its sandboxes' cgroups are made under the same ones.
  const cgroups = Object.values(
    detectLimitSupport({ useCgroups: true, useStorageImages: false }).cgroup?.parents ?? {},
  );
  const group = runtimeCgroupName(dataDir);
  for (const c of counters)
    for (const parent of cgroups) expect(fs.existsSync(path.join(parent, group, c.uid))).toBe(true);
  for (const c of counters) await ok("DELETE", `/v1/${c.sandbox}`);
  for (const c of counters) {
    await until(`${c.sandbox} to be deleted`, async () =>
      (await rest("GET", `/v1/${c.sandbox}`)).status === 404 ? true : undefined,
    );
    expect(fs.existsSync(path.join(dataDir, "sandboxes", c.uid))).toBe(false);
    for (const parent of cgroups) expect(fs.existsSync(path.join(parent, group, c.uid))).toBe(false);
  }
}

function baseEnv(dataDir: string): Record<string, string> {
  const policyFile = path.join(dataDir, "policy.yaml");
  fs.writeFileSync(policyFile, TEST_POLICY);
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("AIEM_")) env[k] = v;
  return {
    ...env,
    AIEM_DATA_DIR: dataDir,
    AIEM_PORT: "0",
    AIEM_POLICY_FILE: policyFile,
    AIEM_SANDBOX_WARM_POOL: "0",
    AIEM_JUPYTER_COMMAND: "none",
    AIEM_H2O_SERVER: "stand-in",
    // Only the cleanup stops a service gracefully: let that end its sandboxes.
    AIEM_SANDBOX_STOP_WITH_SERVICE: "true",
  };
}

describe.skipIf(!confined)("sandboxes through a SIGKILL of the service", () => {
  it("all-in-one on the embedded defaults: every counter line read once, in order; the processes exit 0", {
    timeout: 300_000,
  }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-sandbox-restart-"));
    dataDirs.push(dataDir);
    const env = baseEnv(dataDir);
    delete env.DATABASE_URL;
    delete env.NATS_URL;
    let server = await startServer(env);
    await survivesRestart(
      dataDir,
      () => server.url,
      async () => {
        await kill(server);
        server = await startServer(env);
      },
    );
  });

  describe.skipIf(!real)("separate processes on PostgreSQL and NATS", () => {
    const suffix = randomBytes(4).toString("hex");

    afterAll(async () => {
      const admin = await createTestDatabase("sandbox_restart_cleanup");
      for (const schema of [`catalogue_r${suffix}`, `sandbox_r${suffix}`])
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(admin.db);
      await admin.destroy();
      await (await createTestEventBus("sandbox_restart", { prefix: `r${suffix}` })).destroy();
    });

    it("the sandbox part killed and started again: every counter line read once, in order; the processes exit 0", {
      timeout: 300_000,
    }, async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-sandbox-restart-"));
      dataDirs.push(dataDir);
      const env = {
        ...baseEnv(dataDir),
        AIEM_DB_SCHEMA_SUFFIX: `_r${suffix}`,
        AIEM_EVENTS_PREFIX: `r${suffix}`,
        AIEM_INTERNAL_KEY: randomBytes(32).toString("base64"),
      };
      const catalogue = await startServer(env, "catalogue");
      let sandbox = await startServer({ ...env, AIEM_CATALOGUE_URL: catalogue.url }, "sandbox");
      // Started again on the port the edge forwards to.
      const port = new URL(sandbox.url).port;
      const edge = await startServer(
        { ...env, AIEM_CATALOGUE_URL: catalogue.url, AIEM_SANDBOX_URL: sandbox.url },
        "edge",
      );
      await survivesRestart(
        dataDir,
        () => edge.url,
        async () => {
          await kill(sandbox);
          sandbox = await startServer({ ...env, AIEM_CATALOGUE_URL: catalogue.url, AIEM_PORT: port }, "sandbox");
        },
      );
    });
  });
});
