// The server the sandbox benchmarks talk to: edge, catalogue and sandbox service in one child
// process (PGlite, the in-process bus, real bubblewrap sandboxes), so the client does not share
// its event loop. `startSandboxServer` forks this file with `--serve`.
import { fork } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

export interface Ready {
  url: string;
  token: string;
}

export interface ServerOptions {
  /** Sandboxes kept started ahead of a create. */
  readonly warmPool: number;
  /** The edge's request-body limit; the product's default (4 MiB) unless given. */
  readonly bodyLimitBytes?: number;
  /**
   * The bound on all sandboxes' storage; by default far above what the benchmarks create. Their
   * images are sparse files, so the product's bound (90% of the free space, counting each image
   * at its full size) would stop a benchmark of many idle sandboxes at a handful.
   */
  readonly maxTotalStorageBytes?: number;
}

export interface SandboxServer {
  readonly ready: Ready;
  /** The server's process, for memory readings. */
  readonly pid: number;
  stop(): Promise<void>;
}

async function serve(options: ServerOptions): Promise<void> {
  const { readCommonEnv } = await import("@aiem/kit/config");
  const { loadOrCreateSigningKey, mintEmbeddedToken } = await import("@aiem/kit/identity");
  const { silentLogger } = await import("@aiem/kit/logger");
  const { createHost } = await import("../edge/src/host/create-host.js");
  const { createCatalogueModule } = await import("@aiem/catalogue");
  const { createSandboxModule } = await import("../services/sandbox/src/module.js");
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-bench-service-"));
  const databaseUrl = process.env.AIEM_BENCH_DATABASE_URL;
  const schemaSuffix = `_bench${process.pid}`;
  let sandbox: ReturnType<typeof createSandboxModule> | undefined;
  let catalogue: ReturnType<typeof createCatalogueModule> | undefined;
  const host = await createHost({
    // PGlite and the in-process bus, as `npm start` without settings; AIEM_BENCH_DATABASE_URL
    // measures with PostgreSQL, in schemas of this run's own that are dropped at the end.
    config: readCommonEnv({
      AIEM_PORT: "0",
      AIEM_DATA_DIR: dataDir,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    }),
    ...(databaseUrl ? { schemaSuffix } : {}),
    edge: { corsOrigins: "*", bodyLimitBytes: options.bodyLimitBytes ?? 4 << 20 },
    logger: silentLogger,
    modules: [
      {
        name: "catalogue",
        create: (deps) =>
          // The product's outbox polling (no faster poll than `npm start` has: an idle poll
          // takes the embedded database's one session from the calls being measured).
          (catalogue = createCatalogueModule({
            ...deps,
            catalogueConfig: { pageTokenKey: undefined, secretsKey: undefined, seedDemo: true },
          })),
      },
      {
        name: "sandbox",
        create: (deps) =>
          (sandbox = createSandboxModule({
            ...deps,
            secrets: { resolveSecretValue: (p, n, r) => catalogue!.resolveSecretValue(p, n, r) },
            sandboxConfig: {
              unconfined: false,
              publicUrl: "http://127.0.0.1",
              pageTokenKey: undefined,
              driveDir: path.join(dataDir, "drive"),
              outputLimitBytes: 128 << 20,
              warmPoolSize: options.warmPool,
              maxTotalStorageBytes: options.maxTotalStorageBytes ?? 2 ** 50,
              // Nothing a benchmark starts may outlive it.
              stopWithService: true,
            },
          })),
      },
    ],
  });
  await host.start();
  await catalogue!.flushEvents();
  while (!sandbox!.catalogue?.get("sandboxEngineTemplates", "workspaces/global/sandboxEngineTemplates/default")) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await sandbox!.runtime.prepare();
  const token = await mintEmbeddedToken(await loadOrCreateSigningKey(dataDir), { user: "bench" });
  process.send!({ url: host.url, token } satisfies Ready);
  process.on("message", async () => {
    await host.stop();
    if (databaseUrl) {
      const { createDatabase } = await import("@aiem/kit/db");
      const { sql } = await import("kysely");
      const admin = await createDatabase({ url: databaseUrl, dataDir, schema: `bench_cleanup${schemaSuffix}` });
      for (const schema of ["catalogue", "sandbox", "bench_cleanup"])
        await sql`drop schema if exists ${sql.id(`${schema}${schemaSuffix}`)} cascade`.execute(admin.db);
      await admin.destroy();
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
}

export async function startSandboxServer(options: ServerOptions): Promise<SandboxServer> {
  // AIEM_BENCH_PROFILE=<dir>: the server writes a CPU profile there when it stops.
  const profile = process.env.AIEM_BENCH_PROFILE;
  const execArgv = ["--import", "tsx", ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : [])];
  const child = fork(fileURLToPath(import.meta.url), ["--serve", JSON.stringify(options)], {
    execArgv,
    stdio: "inherit",
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once("message", (m) => resolve(m as Ready));
    child.once("exit", (code) => reject(new Error(`the server exited with ${code}`)));
  });
  return {
    ready,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.send("stop");
      }),
  };
}

if (process.argv[2] === "--serve") await serve(JSON.parse(process.argv[3]!) as ServerOptions);
