// Catalogue throughput through the REST edge (issue 5): creates, gets and filtered lists per
// second, each as a ratio to the edge's GET ceiling measured in the same run, on PGlite and, when
// DATABASE_URL is set, on PostgreSQL too.
//
//   npx tsx services/catalogue/src/rest.bench.ts [--seconds 3] [--rounds 2] [--concurrency 16]
//
// The ceiling is a GET through the same host (edge, auth interceptor, transcoding) to an
// in-memory stand-in of the image service, so the ratios isolate what the catalogue itself costs:
// the database, validation and the outbox. The hosts run in a child process so the load
// generator does not share their event loop; rounds alternate between targets so drift hits all.
import { fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { Agent, request, type IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { sql } from "kysely";
import { readCommonEnv } from "@aiem/kit/config";
import { createDatabase } from "@aiem/kit/db";
import { loadOrCreateSigningKey, mintEmbeddedToken } from "@aiem/kit/identity";
import { silentLogger } from "@aiem/kit/logger";
import type { ServiceModule } from "@aiem/kit/server";
import { NotebookEngineImageSchema } from "@aiem/proto/enginemanager/v1/notebook_engine_image_pb.js";
import { NotebookEngineImageService } from "@aiem/proto/enginemanager/v1/notebook_engine_image_service_pb.js";
import { createHost, type Host } from "../edge/src/host/create-host.js";
import { createCatalogueModule } from "@aiem/catalogue";

const IMAGE = "workspaces/global/notebookEngineImages/jupyter";

interface Started {
  ceilingPort: number;
  cataloguePort: number;
  dataDir: string;
}

/** A part that answers GetNotebookEngineImage from memory: the edge's ceiling. */
function stubModule(): ServiceModule {
  const now = timestampFromDate(new Date());
  const image = create(NotebookEngineImageSchema, {
    name: IMAGE,
    displayName: "Jupyter",
    image: "quay.io/jupyter/minimal-notebook:latest",
    enabled: true,
    createTime: now,
    updateTime: now,
    creator: "users/system",
    updater: "users/system",
  });
  return {
    name: "catalogue",
    services: [NotebookEngineImageService],
    register(router) {
      router.service(NotebookEngineImageService, { getNotebookEngineImage: () => ({ notebookEngineImage: image }) });
    },
    start: async () => {},
    stop: async () => {},
    isReady: () => true,
  };
}

async function serve(backend: "pglite" | "postgres"): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "aiem-cat-bench-"));
  const suffix = `_b${randomBytes(4).toString("hex")}`;
  const env = {
    AIEM_PORT: "0",
    AIEM_DATA_DIR: dataDir,
    ...(backend === "postgres" ? { DATABASE_URL: process.env.DATABASE_URL! } : {}),
  };
  const policyFile = join(dataDir, "policy.yaml");
  await writeFile(policyFile, "admins: [users/bench]\n");
  const config = readCommonEnv({ ...env, AIEM_POLICY_FILE: policyFile });
  const edge = { corsOrigins: "*" as const, bodyLimitBytes: 1 << 20 };
  const hosts: Host[] = [
    await createHost({ config, edge, modules: [{ name: "catalogue", create: stubModule }], logger: silentLogger }),
    await createHost({
      config,
      edge,
      modules: [
        {
          name: "catalogue",
          create: (deps) =>
            createCatalogueModule({
              ...deps,
              catalogueConfig: { pageTokenKey: undefined, secretsKey: undefined, seedDemo: true },
            }),
        },
      ],
      logger: silentLogger,
      schemaSuffix: suffix,
      eventsPrefix: `b${suffix.slice(2)}`,
    }),
  ];
  for (const h of hosts) await h.start();
  const port = (h: Host) => Number(new URL(h.url).port);
  process.send?.({ ceilingPort: port(hosts[0]!), cataloguePort: port(hosts[1]!), dataDir } satisfies Started);
  process.once("SIGTERM", () => {
    void (async () => {
      for (const h of hosts) await h.stop();
      if (backend === "postgres") {
        const db = await createDatabase({ url: process.env.DATABASE_URL, dataDir, schema: "public" });
        await sql`drop schema if exists ${sql.id(`catalogue${suffix}`)} cascade`.execute(db.db);
        await db.destroy();
      }
      await rm(dataDir, { recursive: true, force: true });
      process.exit(0);
    })();
  });
}

interface Target {
  readonly label: string;
  readonly method: string;
  readonly port: number;
  path(): string;
  readonly body?: string;
  readonly headers: IncomingHttpHeaders;
}

interface Samples {
  requests: number;
  errors: number;
  seconds: number;
  firstError?: string;
}

async function drive(
  target: Target,
  agent: Agent,
  concurrency: number,
  seconds: number,
  into?: Samples,
): Promise<void> {
  const deadline = performance.now() + seconds * 1000;
  const once = () =>
    new Promise<void>((resolve) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: target.port,
          method: target.method,
          path: target.path(),
          agent,
          headers: target.headers,
        },
        (res) => {
          let text = "";
          res.on("data", (chunk: Buffer) => {
            if (res.statusCode !== 200 && text.length < 500) text += chunk.toString();
          });
          res.on("end", () => {
            if (into) {
              if (res.statusCode === 200) into.requests++;
              else {
                into.errors++;
                into.firstError ??= `${res.statusCode} ${text}`;
              }
            }
            resolve();
          });
        },
      );
      req.on("error", (err) => {
        if (into) {
          into.errors++;
          into.firstError ??= err.message;
        }
        resolve();
      });
      req.end(target.body);
    });
  const worker = async () => {
    while (performance.now() < deadline) await once();
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (into) into.seconds += (performance.now() - t0) / 1000;
}

async function measure(
  backend: "pglite" | "postgres",
  seconds: number,
  rounds: number,
  concurrency: number,
): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), ["--serve", backend], {
    execArgv: process.execArgv,
    stdio: "inherit",
  });
  const started = await new Promise<Started>((resolve, reject) => {
    child.once("message", (m) => resolve(m as Started));
    child.once("exit", (code) => reject(new Error(`server process exited with ${code}`)));
  });
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  try {
    const token = await mintEmbeddedToken(await loadOrCreateSigningKey(started.dataDir), {
      user: "bench",
      admin: true,
    });
    const auth = { authorization: `Bearer ${token}` };
    const json = { ...auth, "content-type": "application/json" };
    const run = randomBytes(3).toString("hex");
    let n = 0;
    const imageBody = JSON.stringify({ displayName: "Bench image", image: "ghcr.io/acme/bench:1", enabled: true });

    // A workspace with 500 images, a tenth of them matching the filter.
    for (let i = 0; i < 500; i++) {
      const body = JSON.stringify({
        displayName: i % 5 === 0 ? `Bench ${i}` : `Other ${i}`,
        image: "ghcr.io/acme/x:1",
        enabled: i % 2 === 0,
      });
      await new Promise<void>((resolve, reject) => {
        const req = request(
          {
            host: "127.0.0.1",
            port: started.cataloguePort,
            method: "POST",
            path: `/v1/workspaces/bench/notebookEngineImages?notebookEngineImageId=seed-${i}`,
            agent,
            headers: { ...json, "content-length": String(Buffer.byteLength(body)) },
          },
          (res) => {
            res.resume();
            res.on("end", () =>
              res.statusCode === 200 ? resolve() : reject(new Error(`seeding answered ${res.statusCode}`)),
            );
          },
        );
        req.on("error", reject);
        req.end(body);
      });
    }

    const filter = encodeURIComponent('enabled = true AND display_name = "Bench*"');
    const targets: Target[] = [
      {
        label: "edge GET ceiling (in-memory service)",
        method: "GET",
        port: started.ceilingPort,
        path: () => `/v1/${IMAGE}`,
        headers: auth,
      },
      {
        label: "catalogue GET",
        method: "GET",
        port: started.cataloguePort,
        path: () => "/v1/workspaces/global/daiEngineVersions/latest",
        headers: auth,
      },
      {
        label: "catalogue create (POST)",
        method: "POST",
        port: started.cataloguePort,
        path: () => `/v1/workspaces/bench-create/notebookEngineImages?notebookEngineImageId=b-${run}-${n++}`,
        body: imageBody,
        headers: { ...json, "content-length": String(Buffer.byteLength(imageBody)) },
      },
      {
        label: "catalogue filtered list",
        method: "GET",
        port: started.cataloguePort,
        path: () => `/v1/workspaces/bench/notebookEngineImages?filter=${filter}&pageSize=20`,
        headers: auth,
      },
    ];
    const results = new Map<string, Samples>(targets.map((t) => [t.label, { requests: 0, errors: 0, seconds: 0 }]));
    for (const t of targets) await drive(t, agent, concurrency, 1);
    for (let round = 0; round < rounds; round++) {
      for (const t of targets) await drive(t, agent, concurrency, seconds, results.get(t.label));
    }
    const ceiling = results.get(targets[0]!.label)!;
    const ceilingRps = ceiling.requests / ceiling.seconds;
    console.log(
      `\ncatalogue through REST on ${backend}: ${concurrency} concurrent keep-alive clients, ${rounds} x ${seconds}s per target\n`,
    );
    console.log("target                                        rps   x ceiling   errors");
    for (const t of targets) {
      const s = results.get(t.label)!;
      const rps = s.requests / s.seconds;
      console.log(
        `${t.label.padEnd(40)} ${rps.toFixed(0).padStart(8)} ${(rps / ceilingRps).toFixed(3).padStart(11)} ${String(s.errors).padStart(8)}`,
      );
      if (s.firstError) console.log(`  first error: ${s.firstError}`);
    }
  } finally {
    agent.destroy();
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: "string", default: "3" },
      rounds: { type: "string", default: "2" },
      concurrency: { type: "string", default: "16" },
    },
  });
  const backends: Array<"pglite" | "postgres"> = [
    "pglite",
    ...(process.env.DATABASE_URL ? (["postgres"] as const) : []),
  ];
  for (const backend of backends)
    await measure(backend, Number(values.seconds), Number(values.rounds), Number(values.concurrency));
}

const serveAt = process.argv.indexOf("--serve");
if (serveAt >= 0) await serve(process.argv[serveAt + 1] === "postgres" ? "postgres" : "pglite");
else await main();
