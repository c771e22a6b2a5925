// Runs one H2O engine as a real H2O-3 cluster: one JVM per node, all on loopback, joined through a
// flat file. The local runtime starts this script as the engine's process, so the engine keeps
// one pid, one process group and one log like every other engine: the JVMs are its children in
// its group (a SIGTERM or SIGKILL to the group reaches them all) and write to its log. It writes
// the port of node 0 to the engine directory once the whole cloud has formed (which is what
// makes the runtime probe it), and ends, saying why in `failure`, when a node ends or the cloud
// reports itself unhealthy: a cluster that lost a node is not the engine that was asked for.
//
// Reads `spec.json` from AIEM_ENGINE_DIR, and AIEM_ENGINE_JAVA and AIEM_ENGINE_H2O_JAR.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { join } from "node:path";

const dir = process.env.AIEM_ENGINE_DIR;
const java = process.env.AIEM_ENGINE_JAVA;
const jar = process.env.AIEM_ENGINE_H2O_JAR;
if (!dir || !java || !jar) {
  console.error("AIEM_ENGINE_DIR, AIEM_ENGINE_JAVA and AIEM_ENGINE_H2O_JAR are required");
  process.exit(2);
}
const spec = JSON.parse(readFileSync(join(dir, "spec.json"), "utf8"));
// H2O's context path has no trailing slash; the engine's base path has one.
const contextPath = (spec.basePath ?? "/").replace(/\/+$/, "");
const nodeCount = Math.max(1, Number(spec.nodeCount) || 1);
const heapMiB = Math.max(256, Math.floor(Number(BigInt(spec.memoryBytes ?? "0") / 1048576n)));
const nthreads = Math.max(1, Math.floor(Number(spec.cpu) || 1));
const words = (text) => (typeof text === "string" ? text.split(/\s+/).filter(Boolean) : []);
const options = spec.options ?? {};

const log = (line) => process.stdout.write(`${new Date().toISOString()} [h2o-cluster] ${line}\n`);
const writeAtomic = (file, text) => {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
};

/** A port P with P+1 free too: H2O listens for REST on P and for its own nodes on P+1. */
async function portPair(taken) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await listenOn(0);
    if (port === undefined || port >= 65535 || taken.has(port) || taken.has(port + 1)) continue;
    if ((await listenOn(port)) !== undefined && (await listenOn(port + 1)) !== undefined) return port;
  }
  throw new Error("no free pair of loopback ports");
}

function listenOn(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => {
      const bound = server.address().port;
      server.close(() => resolve(bound));
    });
  });
}

function cloud(port) {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: `${contextPath}/3/Cloud`, timeout: 10_000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => {
        try {
          resolve(res.statusCode === 200 ? JSON.parse(body) : undefined);
        } catch {
          resolve(undefined);
        }
      });
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(undefined));
    req.end();
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const nodes = [];
let ending = false;

/** Stops every node still running, then exits; `reason` (a failure) is written for the runtime. */
async function end(code, reason) {
  if (ending) return;
  ending = true;
  if (reason) {
    log(reason);
    writeAtomic(join(dir, "failure"), reason);
  }
  // Asked to stop, nodes shut down in order; after a failure what is left of the cluster holds
  // nothing worth keeping (H2O keeps its data in memory), and the engine reports sooner.
  for (const node of nodes) if (node.running) node.child.kill(reason ? "SIGKILL" : "SIGTERM");
  const deadline = Date.now() + 8_000;
  while (Date.now() < deadline && nodes.some((n) => n.running)) await sleep(50);
  for (const node of nodes) if (node.running) node.child.kill("SIGKILL");
  process.exit(code);
}

process.on("SIGTERM", () => void end(0));
process.on("SIGINT", () => void end(0));

const taken = new Set();
for (let i = 0; i < nodeCount; i++) {
  const port = await portPair(taken);
  taken.add(port).add(port + 1);
  nodes.push({ index: i, port, running: false, child: undefined });
}
const flatfile = join(dir, "flatfile");
writeAtomic(flatfile, nodes.map((n) => `127.0.0.1:${n.port}\n`).join(""));

const cloudName = `aiem-${spec.uid}`;
for (const node of nodes) {
  const iceRoot = join(dir, "data", `node-${node.index}`);
  const logDir = join(dir, "logs", `node-${node.index}`);
  mkdirSync(iceRoot, { recursive: true });
  mkdirSync(logDir, { recursive: true });
  const classpath = [jar, ...(options.javaClasspath ? [options.javaClasspath] : [])].join(":");
  const args = [
    `-Xmx${heapMiB}m`,
    // What the jar's manifest opens under `java -jar`; started by class name to add the
    // profile's classpath, the JVM needs them said.
    ...["java.lang", "java.util", "java.lang.reflect"].map((pkg) => `--add-opens=java.base/${pkg}=ALL-UNNAMED`),
    ...words(options.javaOptions),
    "-cp",
    classpath,
    "water.H2OApp",
    "-name",
    cloudName,
    "-flatfile",
    flatfile,
    "-ip",
    "127.0.0.1",
    "-port",
    String(node.port),
    "-context_path",
    contextPath,
    "-ice_root",
    iceRoot,
    "-log_dir",
    logDir,
    "-nthreads",
    String(nthreads),
    ...words(options.h2oOptions),
  ];
  const child = spawn(java, args, { cwd: iceRoot, stdio: ["ignore", "inherit", "inherit"] });
  node.child = child;
  node.running = true;
  child.once("error", (err) => {
    node.running = false;
    void end(1, `node ${node.index} could not start ${java}: ${err.message}`);
  });
  child.once("exit", (code, signal) => {
    node.running = false;
    if (ending) return;
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    void end(1, `H2O node ${node.index} (pid ${child.pid}, 127.0.0.1:${node.port}) ${how}; the cluster is incomplete`);
  });
  log(`node ${node.index} started: pid ${child.pid}, 127.0.0.1:${node.port}${contextPath}/, heap ${heapMiB} MiB`);
}
writeAtomic(
  join(dir, "nodes.json"),
  `${JSON.stringify(nodes.map((n) => ({ index: n.index, pid: n.child.pid, port: n.port })))}\n`,
);

// The cloud is ready once node 0 sees every node, healthy and agreed on.
const first = nodes[0];
// Asked every 100 ms: cheap next to a JVM start, and the engine runs no later than it must.
while (!ending) {
  const c = await cloud(first.port);
  if (c && c.cloud_size === nodeCount && c.cloud_healthy && c.consensus) break;
  await sleep(100);
}
if (!ending) {
  writeAtomic(join(dir, "port"), String(first.port));
  log(`cloud ${cloudName} formed: ${nodeCount} node(s), REST API at 127.0.0.1:${first.port}${contextPath}/`);
}

// A node can leave the cloud while its JVM lives on (a hang, a partition): the cloud says so. Only
// answers that say it count; a slow answer under load is not a lost node.
let unhealthy = 0;
while (!ending) {
  await sleep(5_000);
  const c = await cloud(first.port);
  if (!c) continue;
  unhealthy = c.cloud_healthy && c.cloud_size === nodeCount ? 0 : unhealthy + 1;
  if (unhealthy >= 3)
    void end(1, `the H2O cloud reports ${c.cloud_size} of ${nodeCount} node(s), healthy: ${c.cloud_healthy}`);
}
