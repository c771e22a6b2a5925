import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { kubernetesCacheDir, type KubernetesArtifact } from "../../services/kit/src/testing/kubernetes-binaries.js";
import { natsPort, postgresPort, testDatabaseUrl } from "./dependencies.js";
import { buildKubernetesArtifacts } from "./kubernetes-build.js";
import type { Step } from "./plan.js";
import { testServerSettings, withLoopbackTrust } from "./postgres-config.js";
import { expandGlob, findCommand, portOpen, requirementsDigest, venvStamp, type Paths } from "./probe.js";

export class SetupError extends Error {}

export async function executeStep(step: Step, paths: Paths): Promise<void> {
  switch (step.kind) {
    case "apt-install":
      run("apt-get", ["update", "-qq"]);
      run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...step.packages]);
      return;
    case "create-venv":
      run("python3", ["-m", "venv", paths.venvDir]);
      return;
    case "pip-install":
      run(join(paths.venvDir, "bin", "python"), [
        "-m",
        "pip",
        "install",
        "-q",
        "--require-hashes",
        "-r",
        paths.requirements,
      ]);
      writeFileSync(venvStamp(paths), `${requirementsDigest(paths)}\n`);
      return;
    case "configure-postgres":
      configurePostgres();
      return;
    case "start-postgres": {
      // Installing the package may have started it already.
      if (await portOpen(postgresPort)) return;
      const cluster = postgresCluster();
      run("pg_ctlcluster", ["--skip-systemctl-redirect", cluster.version, cluster.name, "start"]);
      await waitForPort("PostgreSQL", postgresPort);
      return;
    }
    case "start-nats":
      if (await portOpen(natsPort)) return;
      startNats();
      await waitForPort("nats-server", natsPort);
      return;
    case "create-test-database":
      await createTestDatabase();
      return;
    case "build-kubernetes":
      await buildKubernetesArtifacts(kubernetesCacheDir(), step.artifacts as readonly KubernetesArtifact[]);
      return;
  }
}

function run(command: string, args: readonly string[]): void {
  const result = spawnSync(command, args, {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (result.status !== 0) {
    const why = result.error ? result.error.message : `exit ${result.status ?? result.signal}`;
    throw new SetupError(`setup: ${command} ${args.join(" ")} failed (${why})`);
  }
}

interface Cluster {
  readonly version: string;
  readonly name: string;
  readonly configDir: string;
}

/** Debian's cluster `main` of the newest installed server, created when the package did not. */
function postgresCluster(): Cluster {
  const versions = expandGlob("/usr/lib/postgresql/*/bin/postgres").map((p) => p.split("/")[4] ?? "");
  const version = versions.sort((a, b) => Number(a) - Number(b)).at(-1);
  if (!version) throw new SetupError("setup: no PostgreSQL server under /usr/lib/postgresql");
  const configDir = `/etc/postgresql/${version}/main`;
  if (!existsSync(configDir)) run("pg_createcluster", [version, "main"]);
  return { version, name: "main", configDir };
}

function configurePostgres(): void {
  const cluster = postgresCluster();
  const hbaPath = join(cluster.configDir, "pg_hba.conf");
  const hba = readFileSync(hbaPath, "utf8");
  const nextHba = withLoopbackTrust(hba);
  const settingsPath = join(cluster.configDir, "conf.d", "aiem-tests.conf");
  const settingsChanged = !existsSync(settingsPath) || readFileSync(settingsPath, "utf8") !== testServerSettings;
  if (nextHba === hba && !settingsChanged) return;
  writeFileSync(hbaPath, nextHba);
  mkdirSync(join(cluster.configDir, "conf.d"), { recursive: true });
  writeFileSync(settingsPath, testServerSettings);
  // A running server must restart for max_connections; a stopped one reads both when it starts.
  const status = spawnSync("pg_ctlcluster", [cluster.version, cluster.name, "status"], { stdio: "ignore" });
  if (status.status === 0)
    run("pg_ctlcluster", ["--skip-systemctl-redirect", cluster.version, cluster.name, "restart"]);
}

function startNats(): void {
  const binary = findCommand("nats-server");
  if (!binary) throw new SetupError("setup: nats-server is not on PATH");
  const storeDir = "/var/lib/nats-server";
  mkdirSync(storeDir, { recursive: true });
  const log = openSync("/var/log/nats-server.log", "a");
  const child = spawn(binary, ["-a", "127.0.0.1", "-p", String(natsPort), "-js", "-sd", storeDir], {
    detached: true,
    stdio: ["ignore", log, log],
  });
  child.unref();
}

async function waitForPort(name: string, port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await portOpen(port)) {
      console.log(`setup: ${name} answers on 127.0.0.1:${port}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new SetupError(`setup: ${name} did not answer on 127.0.0.1:${port} within ${timeoutMs / 1000} s`);
}

async function createTestDatabase(): Promise<void> {
  const url = new URL(testDatabaseUrl);
  const database = url.pathname.slice(1);
  url.pathname = "/postgres";
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [database]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE ${database}`);
      console.log(`setup: created database ${database}`);
    }
  } finally {
    await client.end();
  }
}
